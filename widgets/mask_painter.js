// MaskPainter, browser side: paint a mask over an image at the image's own resolution.
// The mask travels to Python as a PNG (alpha = painted) once per finished stroke, never per move.

const HISTORY = 20; // undo steps kept; each is one full-resolution snapshot

function make(tag, className, props = {}) {
  const node = Object.assign(document.createElement(tag), props);
  if (className) node.className = className;
  return node;
}

const MAGIC = { 0x89: "image/png", 0xff: "image/jpeg", 0x52: "image/webp" };

function bytesUrl(view) {
  return URL.createObjectURL(new Blob([view], { type: MAGIC[view.getUint8(0)] || "image/png" }));
}

// Listen to model changes; returns a function that stops listening.
function listen(model, handlers) {
  const pairs = Object.entries(handlers);
  pairs.forEach(([event, handler]) => model.on(event, handler));
  return () => pairs.forEach(([event, handler]) => model.off(event, handler));
}

function toolbar(model, actions) {
  const bar = make("div", "ik-toolbar");
  const button = (label, title, onClick) => {
    const b = make("button", "ik-btn", { type: "button", textContent: label, title });
    b.dataset.action = label.toLowerCase();
    b.addEventListener("click", onClick);
    bar.append(b);
    return b;
  };
  const slider = (label, props, onInput) => {
    const input = make("input", "", { type: "range", ...props });
    input.addEventListener("input", () => onInput(Number(input.value)));
    const wrap = make("label", "ik-slider", { textContent: label });
    wrap.append(input);
    bar.append(wrap);
    return input;
  };
  const setTool = (tool) => { model.set("tool", tool); model.save_changes(); };
  const brush = button("Brush", "paint the mask", () => setTool("brush"));
  const eraser = button("Eraser", "unpaint", () => setTool("eraser"));
  const maxSize = Math.max(8, Math.round(Math.max(model.get("width"), model.get("height")) / 4));
  const size = slider("Size", { min: 1, max: maxSize, step: 1 }, (v) => { model.set("brush_size", v); model.save_changes(); });
  const opacity = slider("Opacity", { min: 0, max: 1, step: 0.05 }, (v) => { model.set("opacity", v); model.save_changes(); });
  button("Undo", "undo the last change", actions.undo);
  button("Redo", "redo what was undone", actions.redo);
  button("Clear", "unpaint everything", actions.clear);
  button("Invert", "swap painted and unpainted", actions.invert);
  const status = make("span", "ik-status");
  bar.append(status);
  const refresh = () => {
    brush.classList.toggle("ik-active", model.get("tool") === "brush");
    eraser.classList.toggle("ik-active", model.get("tool") === "eraser");
    size.value = model.get("brush_size");
    opacity.value = model.get("opacity");
    status.textContent = model.get("status");
  };
  return { bar, refresh };
}

function render({ model, el }) {
  const width = model.get("width");
  const height = model.get("height");
  el.classList.add("ik-painter");
  const stage = make("div", "ik-stage");
  stage.style.width = `${Math.min(width, model.get("max_view"))}px`;
  stage.style.aspectRatio = `${width} / ${height}`;
  const picture = make("img", "ik-image", { alt: "image", draggable: false });
  const canvas = make("canvas", "ik-mask", { width, height });
  const ring = make("div", "ik-ring");
  stage.append(picture, canvas, ring);
  const result = make("figure", "ik-result-pane");
  const resultImage = make("img", "ik-result", { alt: "result" });
  result.append(resultImage, make("figcaption", "", { textContent: "result" }));
  const panes = make("div", "ik-panes");
  panes.append(stage, result);

  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const undo = [];
  const redo = [];
  let revision = model.get("revision"); // the revision this view's canvas shows
  let pending = null; // the sync in flight: {revision, start, bytes, encodeMs}
  let sending = Promise.resolve();
  let stroke = null;

  const snapshot = () => ctx.getImageData(0, 0, width, height);
  const remember = () => {
    undo.push(snapshot());
    if (undo.length > HISTORY) undo.shift();
    redo.length = 0;
  };

  // One PNG per finished change; queued so two quick strokes arrive in order.
  const commit = () => {
    const start = performance.now();
    sending = sending.then(async () => {
      const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
      const buffer = await blob.arrayBuffer();
      revision = model.get("revision") + 1;
      pending = { revision, start, bytes: buffer.byteLength, encodeMs: performance.now() - start };
      model.set({ mask_png: new DataView(buffer), revision });
      model.save_changes();
    });
  };

  const tint = () => {
    ctx.globalCompositeOperation = "source-in";
    ctx.fillStyle = getComputedStyle(el).getPropertyValue("--ik-mask-color").trim() || "#ff2a5a";
    ctx.fillRect(0, 0, width, height);
    ctx.globalCompositeOperation = "source-over";
  };

  const drawFromModel = async () => {
    const data = model.get("mask_png");
    const bitmap = data && data.byteLength ? await createImageBitmap(new Blob([data])) : null;
    ctx.clearRect(0, 0, width, height);
    if (bitmap) {
      ctx.drawImage(bitmap, 0, 0, width, height);
      tint();
    }
  };

  const actions = {
    undo: () => {
      if (!undo.length) return;
      redo.push(snapshot());
      ctx.putImageData(undo.pop(), 0, 0);
      commit();
    },
    redo: () => {
      if (!redo.length) return;
      undo.push(snapshot());
      ctx.putImageData(redo.pop(), 0, 0);
      commit();
    },
    clear: () => {
      remember();
      ctx.clearRect(0, 0, width, height);
      commit();
    },
    invert: () => {
      remember();
      ctx.globalCompositeOperation = "xor"; // painted becomes clear, clear becomes painted
      ctx.fillStyle = "#000";
      ctx.fillRect(0, 0, width, height);
      tint();
      commit();
    },
  };
  const { bar, refresh } = toolbar(model, actions);
  el.append(bar, panes);

  // Pointer input (mouse, pen, touch), mapped from CSS pixels to image pixels on each axis.
  const toImage = (event) => {
    const rect = canvas.getBoundingClientRect();
    return {
      x: (event.clientX - rect.left) * (width / rect.width),
      y: (event.clientY - rect.top) * (height / rect.height),
      w: model.get("brush_size") * (event.pointerType === "pen" && event.pressure > 0 ? Math.max(0.2, event.pressure * 2) : 1),
    };
  };
  const segment = (from, to) => {
    ctx.globalCompositeOperation = model.get("tool") === "eraser" ? "destination-out" : "source-over";
    ctx.strokeStyle = ctx.fillStyle = getComputedStyle(el).getPropertyValue("--ik-mask-color").trim() || "#ff2a5a";
    ctx.lineCap = ctx.lineJoin = "round";
    ctx.lineWidth = to.w;
    ctx.beginPath();
    if (from.x === to.x && from.y === to.y) {
      ctx.arc(to.x, to.y, to.w / 2, 0, 2 * Math.PI);
      ctx.fill();
    } else {
      ctx.moveTo(from.x, from.y);
      ctx.lineTo(to.x, to.y);
      ctx.stroke();
    }
    ctx.globalCompositeOperation = "source-over";
  };
  const moveRing = (event) => {
    const rect = canvas.getBoundingClientRect();
    const d = model.get("brush_size") * (rect.width / width);
    Object.assign(ring.style, {
      width: `${d}px`, height: `${d}px`, display: "block",
      left: `${event.clientX - rect.left - d / 2}px`, top: `${event.clientY - rect.top - d / 2}px`,
    });
  };
  canvas.addEventListener("pointerdown", (event) => {
    if (event.pointerType === "mouse" && event.button !== 0) return;
    event.preventDefault();
    canvas.setPointerCapture(event.pointerId);
    remember();
    const point = toImage(event);
    stroke = { id: event.pointerId, last: point };
    segment(point, point);
  });
  canvas.addEventListener("pointermove", (event) => {
    moveRing(event);
    if (!stroke || event.pointerId !== stroke.id) return;
    const moves = event.getCoalescedEvents ? event.getCoalescedEvents() : [event];
    for (const move of moves.length ? moves : [event]) {
      const point = toImage(move);
      segment(stroke.last, point);
      stroke.last = point;
    }
  });
  const finish = (event) => {
    if (!stroke || event.pointerId !== stroke.id) return;
    stroke = null;
    commit();
  };
  canvas.addEventListener("pointerup", finish);
  canvas.addEventListener("pointercancel", finish);
  canvas.addEventListener("pointerleave", () => { ring.style.display = "none"; });

  // Model -> view.
  const show = (img, data) => {
    if (img.src) URL.revokeObjectURL(img.src);
    img.src = data && data.byteLength ? bytesUrl(data) : "";
  };
  const showImage = () => show(picture, model.get("image_data"));
  const showResult = () => {
    const data = model.get("result_data");
    result.style.display = data && data.byteLength ? "" : "none";
    show(resultImage, data);
  };
  const onMask = () => {
    if (model.get("revision") <= revision) return; // our own echo, or older than what we show
    revision = model.get("revision");
    remember();
    drawFromModel();
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
  const onOpacity = () => { canvas.style.opacity = model.get("opacity"); };

  picture.addEventListener("load", () => { el.dataset.ready = "1"; });
  resultImage.addEventListener("load", () => { el.dataset.result = "1"; });
  const stop = listen(model, {
    "change:image_data": showImage,
    "change:result_data": showResult,
    "change:mask_png": onMask,
    "change:received": onReceived,
    "change:opacity": onOpacity,
    "change:tool change:brush_size change:opacity change:status": refresh,
  });
  showImage();
  showResult();
  onOpacity();
  refresh();
  drawFromModel();

  return () => {
    stop();
    show(picture, null);
    show(resultImage, null);
  };
}

export default { render };
