// Outpaint framing: a board showing the image on its new canvas (the added area checkered) with
// handles on the canvas's edges and corners to drag, and a bar to type the sizes, pick a ratio, see the
// cost and run it. MaskPainter shows it in its outpaint mode; OutpaintFramer is only this. The kernel
// checks the frame (frame_problem) and does the arithmetic for keys and ratios (framing.py); a drag is
// drawn here as it moves and reaches the kernel once, when released.

import { make } from "./mask_controls.js";
import { save } from "./model.js";

const STEP = 64; // image pixels an arrow key moves an edge
const MARGIN = 0.15; // room around the frame on the board, as a share of its longer side, to drag into
const HANDLES = {
  n: "top edge", s: "bottom edge", w: "left edge", e: "right edge",
  nw: "top-left corner", ne: "top-right corner", sw: "bottom-left corner", se: "bottom-right corner",
};
const ARROWS = { ArrowLeft: "left", ArrowRight: "right", ArrowUp: "top", ArrowDown: "bottom" };
const RATIOS = ["1:1", "4:3", "3:4", "3:2", "2:3", "16:9", "9:16"];
export const FRAME_KEYS = "drag the canvas's edges or corners outward; arrow keys move that side out by "
  + `${STEP} px, Shift+arrow back in`;

function number(parent, label, onChange) {
  const wrap = make("label", "ik-field ik-number", { textContent: label });
  const input = make("input", "", { type: "number", step: 1 });
  input.addEventListener("change", () => onChange(Math.round(Number(input.value))));
  wrap.append(input);
  parent.append(wrap);
  return input;
}

// send(content) sends a message to the kernel; outpaint() asks for the edit.
export function framing(model, send, outpaint) {
  const board = make("div", "ik-board", { tabIndex: 0 });
  board.setAttribute("role", "application");
  board.setAttribute("aria-label", `outpaint frame: ${FRAME_KEYS}`);
  const paper = make("div", "ik-canvas");
  const placed = make("img", "ik-placed", { alt: "the original, on the new canvas", draggable: false });
  const label = make("div", "ik-frame-label");
  board.append(paper, placed);
  const handles = Object.entries(HANDLES).map(([sides, name]) => {
    const handle = make("div", `ik-handle ik-handle-${sides}`, { title: `drag the canvas's ${name}` });
    handle.setAttribute("role", "button");
    handle.setAttribute("aria-label", `canvas ${name}`);
    handle.dataset.handle = sides;
    board.append(handle);
    return handle;
  });
  board.append(label);

  let frame = { x0: 0, y0: 0, x1: 1, y1: 1, w: 1, h: 1 }; // the canvas's edges, in the placed original's pixels
  let fit = { scale: 1, ox: 0, oy: 0 }; // board CSS px = offset + scale * image px
  const read = () => {
    const [[cw, ch], [x, y], [w, h]] = ["canvas", "location", "size"].map((name) => model.get(name));
    frame = { x0: -x, y0: -y, x1: cw - x, y1: ch - y, w, h };
  };
  const refit = () => { // the frame and the original, with room to drag, fitted to the board
    const { width, height } = board.getBoundingClientRect();
    if (!width || !height) return;
    const [x0, y0] = [Math.min(frame.x0, 0), Math.min(frame.y0, 0)];
    const [x1, y1] = [Math.max(frame.x1, frame.w), Math.max(frame.y1, frame.h)];
    const room = MARGIN * Math.max(x1 - x0, y1 - y0);
    const scale = Math.min(width / (x1 - x0 + 2 * room), height / (y1 - y0 + 2 * room));
    fit = { scale, ox: width / 2 - scale * (x0 + x1) / 2, oy: height / 2 - scale * (y0 + y1) / 2 };
    board.dataset.scale = String(scale);
  };
  const box = (node, x0, y0, x1, y1) => Object.assign(node.style, {
    left: `${fit.ox + fit.scale * x0}px`, top: `${fit.oy + fit.scale * y0}px`,
    width: `${fit.scale * (x1 - x0)}px`, height: `${fit.scale * (y1 - y0)}px`,
  });
  const layout = () => {
    const { x0, y0, x1, y1 } = frame;
    box(paper, x0, y0, x1, y1);
    box(placed, 0, 0, frame.w, frame.h);
    for (const handle of handles) {
      const sides = handle.dataset.handle;
      const x = sides.includes("w") ? x0 : sides.includes("e") ? x1 : (x0 + x1) / 2;
      const y = sides.includes("n") ? y0 : sides.includes("s") ? y1 : (y0 + y1) / 2;
      Object.assign(handle.style, { left: `${fit.ox + fit.scale * x}px`, top: `${fit.oy + fit.scale * y}px` });
    }
    Object.assign(label.style, { left: `${fit.ox + fit.scale * x0}px`, top: `${fit.oy + fit.scale * y0}px` });
    const price = model.get("outpaint_price");
    label.textContent = `${x1 - x0}×${y1 - y0}${price ? ` · ${price}` : ""}`;
  };
  const place = (canvas, location, size = [frame.w, frame.h]) => {
    save(model, { canvas, location, size });
  };

  let drag = null;
  board.addEventListener("pointerdown", (event) => {
    const sides = event.target.dataset && event.target.dataset.handle;
    if (!sides || (event.pointerType === "mouse" && event.button !== 0)) return;
    event.preventDefault();
    event.stopPropagation();
    board.setPointerCapture(event.pointerId);
    board.focus({ preventScroll: true });
    drag = { id: event.pointerId, sides, x: event.clientX, y: event.clientY, from: { ...frame } };
  });
  board.addEventListener("pointermove", (event) => {
    if (!drag || event.pointerId !== drag.id) return;
    const [dx, dy] = [(event.clientX - drag.x) / fit.scale, (event.clientY - drag.y) / fit.scale].map(Math.round);
    const { from, sides } = drag;
    frame = { ...from };
    if (sides.includes("w")) frame.x0 = Math.min(from.x0 + dx, from.x1 - 1); // an edge never passes its opposite
    if (sides.includes("e")) frame.x1 = Math.max(from.x1 + dx, from.x0 + 1);
    if (sides.includes("n")) frame.y0 = Math.min(from.y0 + dy, from.y1 - 1);
    if (sides.includes("s")) frame.y1 = Math.max(from.y1 + dy, from.y0 + 1);
    layout();
  });
  const release = (event) => {
    if (!drag || event.pointerId !== drag.id) return;
    drag = null;
    place([frame.x1 - frame.x0, frame.y1 - frame.y0], [-frame.x0, -frame.y0]);
    refit();
    layout();
  };
  board.addEventListener("pointerup", release);
  board.addEventListener("pointercancel", release);
  board.addEventListener("keydown", (event) => {
    const side = ARROWS[event.key];
    if (!side || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    event.stopPropagation();
    send({ event: "extend", [side]: event.shiftKey ? -STEP : STEP });
  });
  new ResizeObserver(() => { refit(); layout(); }).observe(board);

  const bar = make("div", "ik-toolbar ik-frame-bar", { role: "toolbar" });
  bar.setAttribute("aria-label", "outpaint frame");
  const typed = (name, which) => (value) => {
    const pair = [...model.get(name)];
    pair[which] = value;
    save(model, { [name]: pair });
  };
  const inputs = [
    ["Canvas width", "canvas", 0], ["Canvas height", "canvas", 1], ["Left", "location", 0], ["Top", "location", 1],
    ["Image width", "size", 0], ["Image height", "size", 1],
  ].map(([name, trait, which]) => [number(bar, name, typed(trait, which)), trait, which]);
  const ratioWrap = make("label", "ik-field", { textContent: "Ratio" });
  const ratio = make("select", "", { title: "widen or heighten the canvas, about its centre, to a ratio" });
  ratio.append(make("option", "", { value: "", textContent: "—" }), ...RATIOS.map((r) => make("option", "", { value: r, textContent: r })));
  ratio.addEventListener("change", () => {
    if (ratio.value) send({ event: "ratio", ratio: ratio.value });
    ratio.value = "";
  });
  ratioWrap.append(ratio);
  const run = make("button", "ik-btn", { type: "button", textContent: "Outpaint" });
  run.dataset.action = "outpaint";
  run.addEventListener("click", outpaint);
  const problem = make("span", "ik-problem", { role: "alert" });
  bar.append(ratioWrap, run, problem);

  const refresh = () => {
    read();
    for (const [input, trait, which] of inputs) {
      if (document.activeElement !== input) input.value = String(model.get(trait)[which]);
    }
    const price = model.get("outpaint_price");
    const why = model.get("frame_problem");
    const editable = model.get("editable");
    run.textContent = price ? `Outpaint · ${price}` : "Outpaint";
    run.disabled = model.get("busy") || !editable || Boolean(why);
    run.title = editable
      ? `expand the canvas: the service paints the checkered area${price ? ` (${price})` : ""}`
      : "needs an image on the service: make the widget from an Image handle";
    run.setAttribute("aria-label", "Outpaint");
    problem.textContent = why;
    if (!drag) { refit(); layout(); }
  };
  return { board, bar, refresh, image: (url) => { placed.src = url || ""; } };
}
