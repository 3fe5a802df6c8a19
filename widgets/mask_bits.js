// A mask at one bit a pixel, kept as the rows of a 1-bit grayscale PNG (a filter byte, then 8 pixels
// a byte): the mask syncs as that PNG with no conversion, and undo keeps only the rows a change touched.

const BAND = 256; // rows read or written at a time, so an 8192 px image never needs one 268 MB buffer

export class BitMask {
  constructor(width, height) {
    this.width = width;
    this.height = height;
    this.stride = 1 + Math.ceil(width / 8); // filter byte 0 (None) first: the rows are PNG scanlines
    this.rows = new Uint8Array(this.stride * height);
  }

  // A copy of rows y0..y1 (exclusive) and the rectangle a change touched: undo puts them back.
  save(x0, y0, x1, y1) {
    return { x0, y0, x1, y1, bytes: this.rows.slice(y0 * this.stride, y1 * this.stride) };
  }

  // Put a saved patch back; returns the patch that undoes this (so undo and redo are one swap).
  swap(patch) {
    const start = patch.y0 * this.stride;
    const now = this.rows.slice(start, start + patch.bytes.length);
    this.rows.set(patch.bytes, start);
    return { ...patch, bytes: now };
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

  // Set the bits of a rectangle from RGBA pixels: painted(r, g, b, a) says which pixels are paint.
  readPixels(x0, y0, pixels, painted) {
    const { width, height, data } = pixels;
    for (let y = 0; y < height; y++) {
      const row = (y0 + y) * this.stride + 1;
      for (let x = 0; x < width; x++) {
        const p = (y * width + x) * 4;
        const bit = 0x80 >> ((x0 + x) & 7);
        const at = row + ((x0 + x) >> 3);
        if (painted(data[p], data[p + 1], data[p + 2], data[p + 3])) this.rows[at] |= bit;
        else this.rows[at] &= ~bit;
      }
    }
  }

  // The fast path for strokes: paint is alpha >= 128, x0 is a multiple of 8, so whole bytes are set.
  // A pixel read as a little-endian 32-bit word has alpha on top: its highest bit is alpha >= 128.
  readAlpha(x0, y0, pixels) {
    const { width, height } = pixels;
    const words = new Uint32Array(pixels.data.buffer);
    for (let y = 0; y < height; y++) {
      const row = (y0 + y) * this.stride + 1 + (x0 >> 3);
      const base = y * width;
      for (let x = 0; x < width; x += 8) {
        let byte = 0;
        for (let k = 0, end = Math.min(8, width - x); k < end; k++) byte |= (words[base + x + k] >>> 31) << (7 - k);
        this.rows[row + (x >> 3)] = byte;
      }
    }
  }

  // Fill RGBA pixels of a rectangle: colour where painted, transparent elsewhere.
  writePixels(x0, y0, pixels, [r, g, b]) {
    const { width, height } = pixels;
    const words = new Uint32Array(pixels.data.buffer);
    const on = ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0; // little-endian RGBA
    for (let y = 0; y < height; y++) {
      const row = (y0 + y) * this.stride + 1;
      const base = y * width;
      for (let x = 0; x < width; x++) {
        words[base + x] = (this.rows[row + ((x0 + x) >> 3)] >> (7 - ((x0 + x) & 7))) & 1 ? on : 0;
      }
    }
  }
}

// Run fn(x0, y, w, h) over a rectangle in bands of BAND rows.
export function inBands(x0, y0, x1, y1, fn) {
  for (let y = y0; y < y1; y += BAND) fn(x0, y, x1 - x0, Math.min(BAND, y1 - y));
}

// Copy a canvas rectangle into the mask: paint is alpha >= 128 (strokes are antialiased). The
// rectangle widens to whole bytes of the mask; the canvas and the mask agree outside the change.
export function maskFromCanvas(mask, ctx, x0, y0, x1, y1) {
  const left = x0 & ~7;
  const right = Math.min(mask.width, (x1 + 7) & ~7);
  inBands(left, y0, right, y1, (x, y, w, h) => mask.readAlpha(x, y, ctx.getImageData(x, y, w, h)));
}

// Draw a mask rectangle onto a canvas in one colour (the canvas shows exactly the mask there).
export function maskToCanvas(mask, ctx, colour, x0, y0, x1, y1) {
  inBands(x0, y0, x1, y1, (x, y, w, h) => {
    const pixels = ctx.createImageData(w, h);
    mask.writePixels(x, y, pixels, colour);
    ctx.putImageData(pixels, x, y);
  });
}

// A mask from any image the browser decodes (PNG from Python): paint is opaque enough and light.
export async function maskFromImage(blob, width, height) {
  const bitmap = await createImageBitmap(blob);
  const mask = new BitMask(width, height);
  const band = new OffscreenCanvas(width, Math.min(BAND, height));
  const ctx = band.getContext("2d", { willReadFrequently: true });
  const light = (r, g, b, a) => a >= 128 && Math.max(r, g, b) >= 128;
  inBands(0, 0, width, height, (x, y, w, h) => {
    ctx.clearRect(0, 0, w, band.height);
    ctx.drawImage(bitmap, 0, -y, width, height);
    mask.readPixels(0, y, ctx.getImageData(0, 0, w, h), light);
  });
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
