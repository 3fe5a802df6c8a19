// Before and after: the result laid over the original inside the zoomed stage (so zoom and pan apply
// to both), shown right of a divider that is dragged, or moved with the arrow keys when focused.

import { save } from "./model.js";

export function comparer(model, stage) {
  const after = Object.assign(document.createElement("img"), {
    className: "ik-after", alt: "the edit's result, right of the divider", draggable: false, hidden: true,
  });
  const handle = Object.assign(document.createElement("div"), { className: "ik-divider", tabIndex: 0, hidden: true });
  handle.setAttribute("role", "slider");
  handle.setAttribute("aria-label", "Before and after");
  handle.setAttribute("aria-valuemin", "0");
  handle.setAttribute("aria-valuemax", "100");
  handle.title = "drag, or use the arrow keys (Shift: by tens), to move between the original and the result";
  stage.append(after, handle);

  const set = (value) => save(model, { divider: Math.min(1, Math.max(0, value)) });
  let dragging = false;
  const follow = (event) => {
    const rect = stage.getBoundingClientRect(); // zoom and pan included
    set((event.clientX - rect.left) / rect.width);
  };
  handle.addEventListener("pointerdown", (event) => {
    event.stopPropagation(); // the divider moves; nothing is painted
    event.preventDefault();
    handle.setPointerCapture(event.pointerId);
    handle.focus({ preventScroll: true });
    dragging = true;
  });
  handle.addEventListener("pointermove", (event) => { if (dragging) { event.stopPropagation(); follow(event); } });
  const release = () => { dragging = false; };
  handle.addEventListener("pointerup", release);
  handle.addEventListener("pointercancel", release);
  const KEYS = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10 };
  handle.addEventListener("keydown", (event) => {
    const steps = KEYS[event.key];
    const at = model.get("divider");
    const next = steps ? at + (steps * (event.shiftKey ? 10 : 1)) / 100 : event.key === "Home" ? 0 : event.key === "End" ? 1 : null;
    if (next === null) return;
    event.preventDefault();
    event.stopPropagation();
    set(Math.round(next * 100) / 100);
  });

  return {
    show: (url) => { after.src = url || ""; },
    // Show or hide the comparison (it needs a result); returns whether it shows.
    refresh: (hasResult) => {
      const on = Boolean(model.get("compare") && hasResult);
      const percent = model.get("divider") * 100;
      after.hidden = handle.hidden = !on;
      after.style.clipPath = `inset(0 0 0 ${percent}%)`;
      handle.style.left = `${percent}%`;
      handle.setAttribute("aria-valuenow", String(Math.round(percent)));
      handle.setAttribute("aria-valuetext", `original left of ${Math.round(percent)}%, result right of it`);
      return on;
    },
  };
}
