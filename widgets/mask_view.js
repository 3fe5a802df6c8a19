// Zoom and pan for the painter: the stage (image and mask) is scaled and moved inside a fixed view.
// Ctrl+wheel or a trackpad pinch zooms at the pointer; the wheel pans once zoomed in; a middle-button
// or Space drag pans; two fingers pinch and pan. Scale 1 is the whole image fitted to the view.

const MAX_ZOOM = 32;

export function zoomable(view, stage, onChange) {
  let scale = 1;
  let tx = 0;
  let ty = 0;

  const apply = () => {
    const { width, height } = view.getBoundingClientRect();
    tx = Math.min(0, Math.max(width - width * scale, tx)); // the image always covers the view
    ty = Math.min(0, Math.max(height - height * scale, ty));
    stage.style.transform = `translate(${tx}px, ${ty}px) scale(${scale})`;
    onChange(scale);
  };
  // Zoom to `next` keeping the view point (px, py) over the same image point.
  const zoomAt = (next, px, py) => {
    next = Math.min(MAX_ZOOM, Math.max(1, next));
    tx = px - (px - tx) * (next / scale);
    ty = py - (py - ty) * (next / scale);
    scale = next;
    apply();
  };
  const centre = () => {
    const { width, height } = view.getBoundingClientRect();
    return [width / 2, height / 2];
  };
  const local = (event) => {
    const rect = view.getBoundingClientRect();
    return [event.clientX - rect.left, event.clientY - rect.top];
  };

  view.addEventListener("wheel", (event) => {
    if (event.ctrlKey || event.metaKey) { // a trackpad pinch arrives as a wheel with ctrlKey
      event.preventDefault();
      zoomAt(scale * Math.exp(-event.deltaY / 300), ...local(event));
    } else if (scale > 1) { // zoomed in: the wheel pans; at fit it scrolls the page as usual
      event.preventDefault();
      tx -= event.deltaX;
      ty -= event.deltaY;
      apply();
    }
  }, { passive: false });

  // Dragging to pan: middle button, or any button while Space is held; two touches pinch.
  const touches = new Map();
  let drag = null;
  let pinch = null;
  let space = false;
  const wantsPan = (event) => event.button === 1 || space;
  const onDown = (event) => {
    if (event.pointerType === "touch") touches.set(event.pointerId, local(event));
    if (touches.size === 2) {
      const [a, b] = [...touches.values()];
      pinch = { distance: Math.hypot(a[0] - b[0], a[1] - b[1]), scale, mid: [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2] };
      return true;
    }
    if (!wantsPan(event)) return false;
    drag = { x: event.clientX, y: event.clientY };
    return true;
  };
  const onMove = (event) => {
    if (pinch && touches.has(event.pointerId)) {
      touches.set(event.pointerId, local(event));
      const [a, b] = [...touches.values()];
      const mid = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
      tx += mid[0] - pinch.mid[0];
      ty += mid[1] - pinch.mid[1];
      pinch.mid = mid;
      zoomAt(pinch.scale * Math.hypot(a[0] - b[0], a[1] - b[1]) / pinch.distance, ...mid);
      return true;
    }
    if (!drag) return false;
    tx += event.clientX - drag.x;
    ty += event.clientY - drag.y;
    drag = { x: event.clientX, y: event.clientY };
    apply();
    return true;
  };
  const onUp = (event) => {
    touches.delete(event.pointerId);
    const was = Boolean(drag || pinch);
    if (touches.size < 2) pinch = null;
    drag = null;
    return was;
  };
  const holdSpace = (down) => {
    space = down;
    view.classList.toggle("ik-panning", down);
  };

  return {
    onDown, onMove, onUp, holdSpace,
    zoomIn: () => zoomAt(scale * 1.5, ...centre()),
    zoomOut: () => zoomAt(scale / 1.5, ...centre()),
    reset: () => { scale = 1; tx = ty = 0; apply(); },
    get transform() { return { scale, tx, ty }; },
  };
}
