// MaskPainter, browser side: paint a mask over an image at the image's own resolution.
// The mask lives as one bit a pixel (mask_bits.js): strokes are drawn into it directly, and a canvas
// the size of the view shows it, so even an 8192 px image needs no full-size canvas. It travels to
// Python as a 1-bit PNG once per finished change, never per move. Undo keeps the bands of rows each
// change touched, at one bit a pixel.

import { BitMask, encodePng, maskFromImage, rgb } from "./mask_bits.js";
import { comparer } from "./mask_compare.js";
import { controls, make, ownKeys, resultPane, show } from "./mask_controls.js";
import { shapeTool } from "./mask_shapes.js";
import { zoomable } from "./mask_view.js";
import { listen, save } from "./model.js";
import { FRAME_KEYS, framing } from "./outpaint_frame.js";

const HISTORY_BYTES = 160 * 2 ** 20; // undo and redo bands kept (19 full-height strokes at 8192 px), oldest dropped first
const KEYS_HELP = "drag to paint; B brush, E eraser, M box, L lasso (drag, or click points then Enter; Escape "
  + "cancels), Alt subtracts a shape, [ and ] brush size, Ctrl+Z undo, Ctrl+Shift+Z redo, "
  + "+ and - zoom, 0 fit, Space-drag or middle-drag to pan; O frames an outpaint";
function render({ model, el }) {
  el.classList.add("ik-painter");
  ownKeys(el); // keys pressed here are the widget's, not the notebook's
  el.style.setProperty("--ik-max-view", `${model.get("max_view")}px`);
  const view = make("div", "ik-view", { tabIndex: 0 });
  view.setAttribute("role", "application");
  view.setAttribute("aria-label", `image to paint a mask on: ${KEYS_HELP}`);
  const stage = make("div", "ik-stage");
  const picture = make("img", "ik-image", { alt: "the image being painted", draggable: false });
  const canvas = make("canvas", "ik-mask");
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", "the painted mask");
  const ring = make("div", "ik-ring");
  stage.append(picture);
  view.append(stage, canvas, ring);
  const original = make("figure", "ik-pane");
  original.append(view);
  const compareButton = make("button", "ik-btn", {
    type: "button", textContent: "Compare",
    title: "show the result over the original, split by a divider you drag or move with the arrow keys",
  });
  compareButton.dataset.action = "compare";
  compareButton.addEventListener("click", () => save(model, { compare: !model.get("compare") }));
  const { pane: result, image: resultImage } = resultPane(model, el,
    "paint on the result next; the mask and its history stay (an outpaint's starts with an empty mask)", [compareButton]);
  const comparison = comparer(model, stage);
  const panes = make("div", "ik-panes");
  panes.append(original, result);

  const ctx = canvas.getContext("2d");
  const colour = () => rgb(model.get("mask_color"));
  let width = 0;
  let height = 0;
  let mask = null;
  const undo = [];
  const redo = [];
  let revision = model.get("revision"); // the revision this view's canvas shows
  let pending = null; // the sync in flight: {revision, start, bytes, encodeMs}
  let sending = Promise.resolve();
  let stroke = null;

  // Show the mask as the view sees it (zoom and pan included), at the screen's resolution.
  let frame = 0;
  const paint = () => {
    frame = 0;
    const { width: vw, height: vh } = view.getBoundingClientRect();
    if (!vw || !vh || !mask) return;
    const dpr = window.devicePixelRatio || 1;
    const [cw, ch] = [Math.round(vw * dpr), Math.round(vh * dpr)];
    if (canvas.width !== cw || canvas.height !== ch) Object.assign(canvas, { width: cw, height: ch });
    const { scale, tx, ty } = zoom.transform;
    // The image pixel under each canvas column (or row); -1 outside the image.
    const axis = (n, shift, viewSize, imageSize) => Int32Array.from({ length: n }, (_, i) => {
      const at = Math.floor((((i + 0.5) / dpr - shift) / scale) * (imageSize / viewSize));
      return at >= 0 && at < imageSize ? at : -1;
    });
    const pixels = ctx.createImageData(cw, ch);
    mask.render(pixels, axis(cw, tx, vw, width), axis(ch, ty, vh, height), colour());
    ctx.putImageData(pixels, 0, 0);
  };
  const draw = () => { if (!frame) frame = requestAnimationFrame(paint); };

  const resize = () => {
    width = model.get("width");
    height = model.get("height");
    mask = new BitMask(width, height);
    undo.length = redo.length = 0;
    el.style.setProperty("--ik-aspect", String(width / height));
    shapes.cancel();
    shapes.fit(width, height, stage.style.transform);
    draw();
  };

  const sizeOf = (saved) => [...saved.values()].reduce((n, bytes) => n + bytes.length, 0);
  const trim = () => {
    let bytes = [...undo, ...redo].reduce((n, saved) => n + sizeOf(saved), 0);
    while (bytes > HISTORY_BYTES && undo.length) bytes -= sizeOf(undo.shift());
    el.dataset.historyBytes = String(bytes);
  };
  const record = (saved) => {
    undo.push(saved);
    redo.length = 0;
    trim();
  };

  // One PNG per finished change, in order; the rows are copied now, so later changes cannot leak in.
  const commit = () => {
    const start = performance.now();
    const rows = new Blob([mask.rows]);
    const size = [width, height];
    el.dataset.syncStage = "queued";
    sending = sending.then(async () => {
      el.dataset.syncStage = "encoding";
      const buffer = await encodePng(rows, ...size);
      revision = model.get("revision") + 1;
      pending = { revision, start, bytes: buffer.byteLength, encodeMs: performance.now() - start };
      save(model, { mask_png: new DataView(buffer), revision });
      el.dataset.syncStage = `sent ${revision} (${buffer.byteLength} bytes)`;
    }).catch((error) => { // one lost sync must not stop the ones after it
      el.dataset.syncError = String(error);
      console.error("MaskPainter: the mask did not reach the kernel", error);
    });
  };
  const change = (apply) => {
    record(mask.keep(new Map()));
    apply();
    draw();
    commit();
  };
  // A finished box or lasso: one change, its undo entry only the bands of rows it covers.
  const shapes = shapeTool(view, (points, subtract) => {
    const saved = new Map();
    mask.polygon(points, !subtract, saved);
    if (!saved.size) return;
    record(saved);
    draw();
    commit();
  });
  const step = (from, to) => {
    if (!from.length) return;
    to.push(mask.swap(from.pop()));
    trim();
    draw();
    commit();
  };
  const zoom = zoomable(view, stage, (scale) => {
    el.dataset.zoom = scale.toFixed(2);
    shapes.fit(width, height, stage.style.transform);
    draw();
  });
  const setBrush = (size) => save(model, { brush_size: Math.max(1, Math.round(size)) });
  const setTool = (tool, shape) => save(model, { tool, ...(shape ? { shape } : {}), mode: "mask" });
  const toggleMode = () => save(model, { mode: model.get("mode") === "outpaint" ? "mask" : "outpaint" });
  const actions = {
    undo: () => step(undo, redo),
    redo: () => step(redo, undo),
    clear: () => change(() => mask.clear()),
    invert: () => change(() => mask.invert()),
    zoomIn: zoom.zoomIn,
    zoomOut: zoom.zoomOut,
    fit: zoom.reset,
    // Sent after the mask syncs in flight, so Python edits with the mask on screen.
    edit: (op, prompt = "", negative = "") => {
      sending = sending.then(() => model.send({ event: "edit", op, prompt, negative }));
    },
    // Grow, shrink, smooth: done by the kernel at the image's resolution; its mask comes back as one undo step.
    morph: (op, px) => { sending = sending.then(() => model.send({ event: "morph", op, px })); },
    subject: (subtract) => { sending = sending.then(() => model.send({ event: "subject", subtract })); },
    outpaintMode: toggleMode,
  };
  const { tools, edits, refresh } = controls(model, actions);
  const framer = framing(model, (content) => model.send(content), () => actions.edit("outpaint"));
  framer.board.setAttribute("aria-label", `outpaint frame: ${FRAME_KEYS}; O returns to the mask`);
  original.append(framer.board);
  el.append(tools, framer.bar, panes, edits);

  // Pointer input (mouse, pen, touch), mapped from CSS pixels to image pixels on each axis.
  const toImage = (event) => {
    const rect = picture.getBoundingClientRect(); // zoom and pan included
    return {
      x: (event.clientX - rect.left) * (width / rect.width),
      y: (event.clientY - rect.top) * (height / rect.height),
      w: model.get("brush_size") * (event.pointerType === "pen" && event.pressure > 0 ? Math.max(0.2, event.pressure * 2) : 1),
    };
  };
  const moveRing = (event) => {
    if (model.get("shape") !== "stroke") { ring.style.display = "none"; return; }
    const rect = picture.getBoundingClientRect();
    const box = view.getBoundingClientRect();
    const d = model.get("brush_size") * (rect.width / width);
    Object.assign(ring.style, {
      width: `${d}px`, height: `${d}px`, display: "block",
      left: `${event.clientX - box.left - d / 2}px`, top: `${event.clientY - box.top - d / 2}px`,
    });
  };
  const paintTo = (point) => {
    mask.segment(stroke.last, point, point.w, stroke.on, stroke.saved);
    stroke.last = point;
    draw();
  };
  view.addEventListener("pointerdown", (event) => {
    view.focus({ preventScroll: true });
    if (zoom.onDown(event)) {
      if (stroke) { // a second finger: this is a pinch, not a stroke; put the mask back as it was
        mask.swap(stroke.saved);
        stroke = null;
        draw();
      }
      event.preventDefault();
      return;
    }
    if (event.pointerType === "mouse" && event.button !== 0) return;
    if (view.classList.contains("ik-comparing")) return; // the mask is hidden: nothing to paint on
    event.preventDefault();
    view.setPointerCapture(event.pointerId);
    const point = toImage(event);
    if (model.get("shape") !== "stroke") { // Box or Lasso: the eraser or Alt makes it subtract
      const near = 8 * (width / picture.getBoundingClientRect().width); // 8 CSS px, in image pixels
      shapes.down(model.get("shape"), point, { x: event.clientX, y: event.clientY },
        model.get("tool") === "eraser" || event.altKey, near);
      return;
    }
    stroke = { id: event.pointerId, last: point, on: model.get("tool") !== "eraser", saved: new Map() };
    paintTo(point);
  });
  view.addEventListener("pointermove", (event) => {
    moveRing(event);
    if (zoom.onMove(event)) return;
    if (shapes.active()) { shapes.move(toImage(event), { x: event.clientX, y: event.clientY }); return; }
    if (!stroke || event.pointerId !== stroke.id) return;
    const moves = event.getCoalescedEvents ? event.getCoalescedEvents() : [];
    (moves.length ? moves : [event]).forEach((move) => paintTo(toImage(move)));
  });
  const finish = (event) => {
    if (zoom.onUp(event)) return;
    if (shapes.active()) { shapes.up(); return; }
    if (!stroke || event.pointerId !== stroke.id) return;
    record(stroke.saved);
    stroke = null;
    commit();
  };
  view.addEventListener("pointerup", finish);
  view.addEventListener("pointercancel", finish);
  view.addEventListener("dblclick", () => shapes.active() && shapes.close());
  view.addEventListener("pointerleave", () => { ring.style.display = "none"; });

  // Keys, while focus is anywhere in the painter but a text field.
  const keyActions = {
    b: () => setTool("brush", "stroke"), e: () => setTool("eraser"),
    m: () => setTool("brush", "box"), l: () => setTool("brush", "lasso"),
    "[": () => setBrush(model.get("brush_size") * 0.85), "]": () => setBrush(model.get("brush_size") / 0.85 + 1),
    "+": zoom.zoomIn, "=": zoom.zoomIn, "-": zoom.zoomOut, 0: zoom.reset, o: toggleMode,
  };
  el.addEventListener("keydown", (event) => {
    if (event.target.closest("input, textarea, select")) return;
    const key = event.key.toLowerCase();
    let act = null;
    if (event.ctrlKey || event.metaKey) {
      act = key === "z" ? (event.shiftKey ? actions.redo : actions.undo) : key === "y" ? actions.redo : null;
    } else if (key === " " && !event.target.closest("button")) {
      act = () => zoom.holdSpace(true);
    } else if ((key === "enter" || key === "escape") && shapes.active()) {
      act = key === "enter" ? shapes.close : shapes.cancel;
    } else if (!event.altKey) {
      act = keyActions[key];
    }
    if (!act) return;
    event.preventDefault();
    event.stopPropagation();
    act();
  });
  el.addEventListener("keyup", (event) => { if (event.key === " ") zoom.holdSpace(false); });

  // Model -> view.
  const loadMask = async (undoable = true) => {
    const data = model.get("mask_png");
    const next = data && data.byteLength ? await maskFromImage(new Blob([data]), width, height) : new BitMask(width, height);
    if (undoable) record(mask.keep(new Map()));
    mask.rows.set(next.rows);
    draw();
  };
  const onMask = () => {
    if (model.get("revision") <= revision) return; // our own echo, or older than what we show
    revision = model.get("revision");
    const shown = revision;
    loadMask().then(() => { el.dataset.loaded = String(shown); }); // the kernel's mask, on screen
  };
  const onReceived = () => {
    if (!pending || model.get("received") < pending.revision) return;
    Object.assign(el.dataset, {
      synced: String(model.get("received")),
      syncBytes: String(pending.bytes),
      syncEncodeMs: pending.encodeMs.toFixed(1),
      syncRoundtripMs: (performance.now() - pending.start).toFixed(1),
    });
    pending = null;
  };
  const onSize = () => {
    if (model.get("width") === width && model.get("height") === height) return;
    resize();
    loadMask(false);
    zoom.reset();
  };
  const showImage = () => {
    delete el.dataset.ready;
    show(picture, model.get("image_data"));
    framer.image(picture.src);
  };
  const onMode = () => { el.classList.toggle("ik-outpainting", model.get("mode") === "outpaint"); refresh(); };
  const showResult = () => {
    const data = model.get("result_data");
    panes.classList.toggle("ik-has-result", Boolean(data && data.byteLength));
    show(resultImage, data);
    comparison.show(resultImage.src);
    compare();
  };
  const compare = () => {
    const on = comparison.refresh(panes.classList.contains("ik-has-result"));
    view.classList.toggle("ik-comparing", on);
    compareButton.setAttribute("aria-pressed", String(on));
    compareButton.classList.toggle("ik-active", on);
  };
  const onColour = () => {
    el.style.setProperty("--ik-mask-color", model.get("mask_color"));
    draw();
  };
  const onOpacity = () => { canvas.style.opacity = model.get("opacity"); };

  picture.addEventListener("load", () => { el.dataset.ready = "1"; });
  const resized = new ResizeObserver(draw);
  resized.observe(view);
  const stop = listen(model, {
    image_data: showImage,
    result_data: showResult,
    "compare divider": compare,
    mask_png: onMask,
    received: onReceived,
    opacity: onOpacity,
    mask_color: onColour,
    "width height": onSize,
    "canvas location size outpaint_price frame_problem busy editable": framer.refresh,
    mode: onMode,
    "tool shape subject_price brush_size opacity mask_color status busy editable": refresh,
  });
  resize();
  showImage();
  showResult();
  onOpacity();
  onColour();
  onMode();
  framer.refresh();
  loadMask(false);

  return () => {
    stop();
    resized.disconnect();
    show(picture, null);
    show(resultImage, null);
  };
}

export default { render };
