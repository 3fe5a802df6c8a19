// Box and Lasso for the painter: drag a rectangle; drag freehand, or click points and close the shape
// (click the first point again, double-click, or Enter; Escape cancels). The outline is drawn in image
// pixels over the mask and follows zoom and pan; the finished shape goes to onDone(points, subtract).

const DRAG = 4; // CSS pixels a pressed pointer moves before a lasso press is a freehand drag

export function shapeTool(view, onDone) {
  const holder = document.createElement("div"); // the HTML parser gives the SVG its namespace
  holder.innerHTML = '<svg class="ik-outline" preserveAspectRatio="none" aria-hidden="true"><polygon/></svg>';
  const svg = holder.firstElementChild;
  const outline = svg.firstElementChild;
  view.append(svg);
  let shape = null; // {kind, points, subtract, anchor, pressed: {x, y} in CSS pixels, freehand, hover}

  const show = () => {
    const points = shape ? [...shape.points, ...(shape.hover ? [shape.hover] : [])] : [];
    outline.setAttribute("points", points.map((p) => `${p.x},${p.y}`).join(" "));
    view.classList.toggle("ik-shaping", Boolean(shape));
  };
  const corners = (a, b) => [{ x: a.x, y: a.y }, { x: b.x, y: a.y }, { x: b.x, y: b.y }, { x: a.x, y: b.y }];
  const close = () => {
    const done = shape;
    shape = null;
    show();
    if (done && done.points.length >= 3) onDone(done.points, done.subtract);
  };
  const cancel = () => { shape = null; show(); };

  return {
    active: () => Boolean(shape),
    close,
    cancel,
    // The image's size (the outline's coordinates) and the stage's transform (zoom and pan).
    fit: (width, height, transform) => {
      svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
      svg.style.transform = transform;
    },
    // A press at `point` (image pixels; `at` in CSS pixels); `near` is how close, in image pixels,
    // a click must come to the first point to close a lasso.
    down(kind, point, at, subtract, near) {
      if (shape && shape.kind === "lasso") {
        const first = shape.points[0];
        if (shape.points.length >= 3 && Math.hypot(point.x - first.x, point.y - first.y) <= near) return close();
        shape.points.push(point);
      } else {
        shape = { kind, subtract, anchor: point, points: kind === "box" ? corners(point, point) : [point] };
      }
      Object.assign(shape, { pressed: at, freehand: false, hover: null });
      show();
    },
    move(point, at) {
      if (!shape) return;
      if (shape.kind === "box" && shape.pressed) shape.points = corners(shape.anchor, point);
      else if (shape.pressed && (shape.freehand || Math.hypot(at.x - shape.pressed.x, at.y - shape.pressed.y) > DRAG)) {
        shape.freehand = true;
        shape.points.push(point);
      } else if (!shape.pressed) shape.hover = point; // clicking points: the edge to the pointer
      show();
    },
    up() {
      if (!shape) return;
      if (shape.kind === "box" || shape.freehand) close();
      else shape.pressed = null;
    },
  };
}
