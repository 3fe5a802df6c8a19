// A mask at one bit a pixel, kept as the rows of a 1-bit grayscale PNG (a filter byte, then 8 pixels
// a byte): the mask syncs as that PNG with no conversion, strokes are drawn straight into the bits
// (no full-size canvas to read back), and undo keeps only the bands of rows a change touched.

const BAND = 64; // rows per undo band

export class BitMask {
  constructor(width, height) {
    this.width = width;
    this.height = height;
    this.stride = 1 + Math.ceil(width / 8); // filter byte 0 (None) first: the rows are PNG scanlines
    this.rows = new Uint8Array(this.stride * height);
  }

  // Keep a copy of the bands holding rows y0..y1 (exclusive) in `saved` (band -> bytes), unless
  // already kept: the state before a change, for undo.
  keep(saved, y0 = 0, y1 = this.height) {
    for (let band = Math.floor(y0 / BAND); band * BAND < y1; band++) {
      if (!saved.has(band)) saved.set(band, this.rows.slice(band * BAND * this.stride, Math.min(this.height, (band + 1) * BAND) * this.stride));
    }
    return saved;
  }

  // Put saved bands back; returns the bands they replaced (so undo and redo are one swap).
  swap(saved) {
    const replaced = new Map();
    for (const [band, bytes] of saved) {
      const start = band * BAND * this.stride;
      replaced.set(band, this.rows.slice(start, start + bytes.length));
      this.rows.set(bytes, start);
    }
    return replaced;
  }

  clear() {
    this.rows.fill(0);
  }

  invert() {
    for (let y = 0; y < this.height; y++) {
      const row = y * this.stride;
      for (let i = row + 1; i < row + this.stride; i++) this.rows[i] ^= 0xff;
    }
  }

  // A round brush of diameter `w` along a -> b (image pixels): paint (on) or unpaint every pixel whose
  // centre lies within w/2 of the segment. `saved` receives the bands before they change.
  segment(a, b, w, on, saved) {
    const r = w / 2;
    const x0 = Math.max(0, Math.floor(Math.min(a.x, b.x) - r));
    const x1 = Math.min(this.width, Math.ceil(Math.max(a.x, b.x) + r));
    const y0 = Math.max(0, Math.floor(Math.min(a.y, b.y) - r));
    const y1 = Math.min(this.height, Math.ceil(Math.max(a.y, b.y) + r));
    if (x0 >= x1 || y0 >= y1) return;
    this.keep(saved, y0, y1);
    const dx = b.x - a.x;
    const dy = b.y - a.y;
    const length2 = dx * dx + dy * dy;
    for (let y = y0; y < y1; y++) {
      const py = y + 0.5 - a.y;
      const row = y * this.stride + 1;
      for (let x = x0; x < x1; x++) {
        const px = x + 0.5 - a.x;
        const t = length2 ? Math.min(1, Math.max(0, (px * dx + py * dy) / length2)) : 0;
        const ex = px - t * dx;
        const ey = py - t * dy;
        if (ex * ex + ey * ey > r * r) continue;
        if (on) this.rows[row + (x >> 3)] |= 0x80 >> (x & 7);
        else this.rows[row + (x >> 3)] &= ~(0x80 >> (x & 7));
      }
    }
  }

  // Paint (on) or unpaint every pixel whose centre lies inside the polygon (even-odd rule), as
  // mask_ops.polygon does in Python. `saved` receives the bands before they change.
  polygon(points, on, saved) {
    const ys = points.map((p) => p.y);
    const y0 = Math.max(0, Math.floor(Math.min(...ys)));
    const y1 = Math.min(this.height, Math.ceil(Math.max(...ys)));
    if (y0 >= y1) return;
    this.keep(saved, y0, y1);
    for (let y = y0; y < y1; y++) {
      const yc = y + 0.5;
      const xs = [];
      points.forEach((a, i) => {
        const b = points[(i + 1) % points.length];
        if ((a.y <= yc) !== (b.y <= yc)) xs.push(a.x + ((yc - a.y) * (b.x - a.x)) / (b.y - a.y));
      });
      xs.sort((p, q) => p - q);
      const row = y * this.stride + 1;
      for (let k = 0; k + 1 < xs.length; k += 2) {
        const to = Math.min(this.width, Math.ceil(xs[k + 1] - 0.5));
        for (let x = Math.max(0, Math.ceil(xs[k] - 0.5)); x < to; x++) {
          if (on) this.rows[row + (x >> 3)] |= 0x80 >> (x & 7);
          else this.rows[row + (x >> 3)] &= ~(0x80 >> (x & 7));
        }
      }
    }
  }

  // Set every bit from RGBA pixels of the whole image, a band at a time: painted(r, g, b, a).
  readPixels(y0, pixels, painted) {
    const { width, height, data } = pixels;
    for (let y = 0; y < height; y++) {
      const row = (y0 + y) * this.stride + 1;
      for (let x = 0; x < width; x++) {
        const p = (y * width + x) * 4;
        const bit = 0x80 >> (x & 7);
        if (painted(data[p], data[p + 1], data[p + 2], data[p + 3])) this.rows[row + (x >> 3)] |= bit;
        else this.rows[row + (x >> 3)] &= ~bit;
      }
    }
  }

  // Draw the mask as the view shows it: canvas pixel (i, j) shows image pixel (xs[i], ys[j]).
  render(pixels, xs, ys, [r, g, b]) {
    const words = new Uint32Array(pixels.data.buffer);
    const on = ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0; // little-endian RGBA
    const { width, height } = pixels;
    for (let j = 0; j < height; j++) {
      const y = ys[j];
      const base = j * width;
      if (y < 0) { words.fill(0, base, base + width); continue; }
      const row = y * this.stride + 1;
      for (let i = 0; i < width; i++) {
        const x = xs[i];
        words[base + i] = x >= 0 && (this.rows[row + (x >> 3)] >> (7 - (x & 7))) & 1 ? on : 0;
      }
    }
  }
}

// A mask from any image the browser decodes (PNG from Python): paint is opaque enough and light.
export async function maskFromImage(blob, width, height) {
  const bitmap = await createImageBitmap(blob);
  const mask = new BitMask(width, height);
  const rows = 256;
  const band = new OffscreenCanvas(width, Math.min(rows, height));
  const ctx = band.getContext("2d", { willReadFrequently: true });
  const light = (r, g, b, a) => a >= 128 && Math.max(r, g, b) >= 128;
  for (let y = 0; y < height; y += rows) {
    const h = Math.min(rows, height - y);
    ctx.clearRect(0, 0, width, band.height);
    ctx.drawImage(bitmap, 0, -y, width, height);
    mask.readPixels(y, ctx.getImageData(0, 0, width, h), light);
  }
  bitmap.close();
  return mask;
}

// "#rrggbb" as [r, g, b].
export function rgb(hex) {
  const value = /^#?([0-9a-f]{6})$/i.exec(hex.trim());
  const n = value ? parseInt(value[1], 16) : 0xff2a5a;
  return [n >> 16, (n >> 8) & 0xff, n & 0xff];
}

// -- PNG: a 1-bit grayscale image (white = painted), compressed by the browser's own zlib ----------

const CRC = new Uint32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, body) {
  const out = new Uint8Array(12 + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(body, 8);
  view.setUint32(8 + body.length, crc32(out.subarray(4, 8 + body.length)));
  return out;
}

// The PNG of a mask's rows (a Blob of BitMask.rows, copied when the change was made).
export async function encodePng(rows, width, height) {
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([1, 0, 0, 0, 0], 8); // bit depth 1, grayscale, deflate, no filter method, no interlace
  const zlib = rows.stream().pipeThrough(new CompressionStream("deflate"));
  const data = new Uint8Array(await new Response(zlib).arrayBuffer());
  const parts = [new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", header),
    chunk("IDAT", data), chunk("IEND", new Uint8Array(0))];
  const png = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  parts.reduce((at, part) => (png.set(part, at), at + part.length), 0);
  return png.buffer;
}
