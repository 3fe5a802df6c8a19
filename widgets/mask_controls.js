// The painter's controls: tools, sliders, colour, history and view buttons, and the edit bar
// (fill prompt, negative prompt, Fill, Clean up, progress, Continue on result). Every control has an
// accessible name; sliders say their value; tool buttons say whether they are pressed.

import { save } from "./model.js";

export function make(tag, className, props = {}) {
  const node = Object.assign(document.createElement(tag), props);
  if (className) node.className = className;
  return node;
}

const MAGIC = { 0x89: "image/png", 0xff: "image/jpeg", 0x52: "image/webp" };

// Show encoded image bytes (a DataView, or nothing) in an <img>, freeing the URL it showed before.
export function show(img, data) {
  if (img.src) URL.revokeObjectURL(img.src);
  img.src = data && data.byteLength ? URL.createObjectURL(new Blob([data], { type: MAGIC[data.getUint8(0)] || "image/png" })) : "";
}

// Keys pressed in `el` are the widget's, not the notebook's. JupyterLab handles shortcuts as a key
// bubbles up, so the attribute on `el` (and the widget's own stopPropagation) is enough there; Notebook 7
// handles them as the key goes down, and a shortcut whose selector matches the focused element itself
// (":focus" in command mode) still runs unless that element carries the attribute too.
export function ownKeys(el) {
  el.setAttribute("data-lm-suppress-shortcuts", "true");
  el.addEventListener("focusin", (event) => event.target.setAttribute("data-lm-suppress-shortcuts", "true"));
}

// The result beside the original: its image, a caption with its size, `more` buttons, and "Continue on
// result". el.dataset.results counts the results shown (tests wait on it).
export function resultPane(model, el, continueTitle, more = []) {
  const pane = make("figure", "ik-pane ik-result-pane");
  const image = make("img", "ik-result", { alt: "the edit's result" });
  const caption = make("figcaption");
  const again = make("button", "ik-btn", { type: "button", textContent: "Continue on result", title: continueTitle });
  again.dataset.action = "continue";
  again.addEventListener("click", () => model.send({ event: "continue" }));
  pane.append(image, caption, ...more, again);
  image.addEventListener("load", () => {
    const { naturalWidth: w, naturalHeight: h } = image;
    el.style.setProperty("--ik-result-aspect", String(w / h));
    caption.textContent = `result ${w}×${h}`;
    el.dataset.results = String(Number(el.dataset.results || 0) + 1);
  });
  return { pane, image };
}

// A button named by its label (or `name` when the label is a symbol), described by `title`.
function button(parent, action, label, title, onClick, name = label) {
  const b = make("button", "ik-btn", { type: "button", textContent: label, title });
  b.dataset.action = action;
  if (name !== label) b.setAttribute("aria-label", name);
  b.addEventListener("click", onClick);
  parent.append(b);
  return b;
}

// Keys that move a slider, as steps: in JupyterLab something above the output cancels the browser's
// own arrow keys on a range input, so the slider moves itself and keeps the key from going further.
const SLIDER_KEYS = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10 };

function keyed(input) {
  input.addEventListener("keydown", (event) => {
    const [min, max, step] = [Number(input.min), Number(input.max), Number(input.step) || 1];
    const steps = SLIDER_KEYS[event.key];
    let value = null;
    if (steps) value = Number(input.value) + steps * (Math.abs(steps) > 1 ? Math.max(step, (max - min) / 10) : step);
    else if (event.key === "Home") value = min;
    else if (event.key === "End") value = max;
    if (value === null || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    event.stopPropagation();
    input.value = String(Math.min(max, Math.max(min, value))); // the input snaps it to its step
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

// A range input named by its label alone ("Size"); its value is spoken from aria-valuetext and shown
// beside it. Arrow keys (and Page Up/Down, Home, End) move it.
export function slider(parent, label, props, describe, onInput) {
  const wrap = make("label", "ik-slider");
  const input = make("input", "", { type: "range", ...props });
  input.setAttribute("aria-label", label); // the shown value below would otherwise join the name
  const shown = make("output", "ik-value");
  shown.setAttribute("aria-hidden", "true"); // aria-valuetext says it already
  input.addEventListener("input", () => onInput(Number(input.value)));
  keyed(input);
  wrap.append(make("span", "", { textContent: label }), input, shown);
  parent.append(wrap);
  return (value) => {
    input.value = value;
    input.setAttribute("aria-valuetext", describe(value));
    shown.textContent = describe(value);
  };
}

function field(parent, label, placeholder) {
  const wrap = make("label", "ik-field", { textContent: label });
  const input = make("input", "", { type: "text", placeholder });
  wrap.append(input);
  parent.append(wrap);
  return input;
}

export function controls(model, actions) {
  const tools = make("div", "ik-toolbar", { role: "toolbar" });
  tools.setAttribute("aria-label", "mask tools");
  const pick = (tool, shape) => save(model, { tool, ...(shape ? { shape } : {}), mode: "mask" });
  const brush = button(tools, "brush", "Brush", "paint the mask (B)", () => pick("brush", "stroke"));
  const eraser = button(tools, "eraser", "Eraser", "unpaint; with Box or Lasso, take the shape away (E)", () => pick("eraser"));
  const box = button(tools, "box", "Box", "drag a rectangle to add; Alt or the eraser takes it away (M)", () => pick("brush", "box"));
  const lasso = button(tools, "lasso", "Lasso",
    "drag around an area, or click points and close (first point, double-click or Enter) to add; Alt or the eraser takes it away (L)",
    () => pick("brush", "lasso"));
  const longSide = Math.max(model.get("width"), model.get("height"));
  const size = slider(tools, "Size", { min: 1, max: Math.max(8, Math.round(longSide / 4)), step: 1 },
    (v) => `${v} px`, (v) => save(model, { brush_size: v }));
  const opacity = slider(tools, "Opacity", { min: 0, max: 1, step: 0.05 },
    (v) => `${Math.round(v * 100)}%`, (v) => save(model, { opacity: v }));
  const colourWrap = make("label", "ik-slider", { textContent: "Colour" });
  const colour = make("input", "", { type: "color" });
  colour.addEventListener("input", () => save(model, { mask_color: colour.value }));
  colourWrap.append(colour);
  tools.append(colourWrap);
  button(tools, "undo", "Undo", "undo the last change (Ctrl+Z)", actions.undo);
  button(tools, "redo", "Redo", "redo what was undone (Ctrl+Shift+Z or Ctrl+Y)", actions.redo);
  button(tools, "clear", "Clear", "unpaint everything", actions.clear);
  button(tools, "invert", "Invert", "swap painted and unpainted", actions.invert);
  // Subject: the service's background removal makes the mask; its price shows before the click.
  const subject = button(tools, "subject", "Subject", "", (event) => actions.subject(event.altKey || model.get("tool") === "eraser"));
  subject.setAttribute("aria-label", "Subject");
  const shape = make("div", "ik-group", { role: "group" }); // grow, shrink, smooth: by one amount
  shape.setAttribute("aria-label", "change the mask's outline");
  let by = 4;
  const amount = slider(shape, "Amount", { min: 1, max: 64, step: 1 }, (v) => `${v} px`, (v) => { by = v; amount(v); });
  amount(by);
  button(shape, "grow", "Grow", "paint the amount further out on every side, in image pixels", () => actions.morph("grow", by));
  button(shape, "shrink", "Shrink", "unpaint the amount from every edge, in image pixels", () => actions.morph("shrink", by));
  button(shape, "smooth", "Smooth", "remove specks and close gaps narrower than the amount", () => actions.morph("smooth", by));
  tools.append(shape);
  button(tools, "zoom-out", "−", "zoom out (-)", actions.zoomOut, "Zoom out");
  button(tools, "zoom-in", "+", "zoom in (+, or Ctrl+wheel)", actions.zoomIn, "Zoom in");
  button(tools, "fit", "Fit", "show the whole image (0)", actions.fit);
  const expand = button(tools, "outpaint-mode", "Expand canvas",
    "outpaint: frame a larger canvas around the image by dragging its edges or corners (O; O again, or B, E, M, L, returns to the mask)",
    actions.outpaintMode);

  const edits = make("div", "ik-toolbar ik-edits", { role: "toolbar" });
  edits.setAttribute("aria-label", "edits");
  const prompt = field(edits, "Fill with", "what to paint into the mask");
  const negative = field(edits, "Avoid", "negative prompt (optional)");
  const fill = button(edits, "fill", "Fill", "regenerate the painted area from the prompt",
    () => actions.edit("fill", prompt.value, negative.value));
  const cleanUp = button(edits, "clean-up", "Clean up", "remove what is painted", () => actions.edit("clean_up"));
  const progress = make("progress", "ik-progress");
  progress.setAttribute("aria-label", "edit in progress");
  const status = make("span", "ik-status", { role: "status" });
  edits.append(progress, status);
  prompt.addEventListener("input", () => refresh());

  const refresh = () => {
    const busy = model.get("busy");
    const editable = model.get("editable");
    const [tool, shape] = [model.get("tool"), model.get("shape")];
    const masking = model.get("mode") === "mask";
    const pressed = [[brush, masking && tool === "brush" && shape === "stroke"], [eraser, masking && tool === "eraser"],
      [box, masking && shape === "box"], [lasso, masking && shape === "lasso"], [expand, !masking]];
    for (const [node, on] of pressed) {
      node.classList.toggle("ik-active", on);
      node.setAttribute("aria-pressed", String(on));
    }
    size(model.get("brush_size"));
    opacity(model.get("opacity"));
    colour.value = model.get("mask_color");
    const price = model.get("subject_price");
    subject.textContent = price ? `Subject · ${price}` : "Subject";
    subject.disabled = busy || !editable;
    subject.title = editable
      ? `add the subject the service finds (its background removal${price ? `, ${price}` : ""}); Alt or the eraser takes it away`
      : "needs an image on the service: make the painter from an Image handle";
    fill.disabled = busy || !editable || !prompt.value.trim();
    cleanUp.disabled = busy || !editable;
    const why = editable ? "" : " (needs an image on the service: make the painter from an Image handle)";
    fill.title = `regenerate the painted area from the prompt${why}`;
    cleanUp.title = `remove what is painted${why}`;
    progress.hidden = !busy;
    status.textContent = model.get("status");
  };
  return { tools, edits, refresh };
}
