// Review desk, browser side: a virtualised grid of thumbnails (only the rows in view are in the page),
// keyboard first; `c` lays the next image over the current one with the painter's before/after divider.
// Every decision goes to the kernel as a message that calls the Desk's own method; the page draws what
// the kernel sends back (ratings, selection, scores, quality signals, the next step's price) and keeps
// nothing of its own. A rating or a selection is drawn at once, marked pending, until the kernel answers
// that message (its `answered` number): then the kernel's state is drawn, so a refused one goes back.
// Sorting by a quality signal not measured yet asks the kernel to measure it.

import { comparer } from "./mask_compare.js";
import { listen, save } from "./model.js";

const TILE = 150; // pixels of a tile's width, gap included
const SORTS = ["desk", "rating", "score", "prompt", "style", "cost", "sharpness", "noise", "duplicates"];
const MEASURED = new Set(["sharpness", "noise", "duplicates"]); // the quality signals (Desk.quality)

function button(label, name, onClick) {
  const b = Object.assign(document.createElement("button"), { type: "button", textContent: label });
  b.setAttribute("aria-label", name);
  b.addEventListener("click", onClick);
  return b;
}

function group(className, name) {
  const g = Object.assign(document.createElement("div"), { className });
  g.setAttribute("role", "group");
  g.setAttribute("aria-label", name);
  return g;
}

function render({ model, el }) {
  el.classList.add("ik-review");
  el.tabIndex = 0;
  el.setAttribute("role", "application");
  // The front end's own shortcuts (Notebook 7 moves between cells on the arrows) skip the desk's keys.
  el.setAttribute("data-lm-suppress-shortcuts", "true");
  el.setAttribute("aria-label", "Review desk: arrows move, 1 to 5 rate, 0 clears, space selects, c compares, p votes, z undoes");
  let cursor = 0, sort = "desk", pairing = false, measuring = false;

  // Decisions drawn before the kernel answered them: image id -> { stars } or { selected }, with the
  // number of the message that asked (cleared once the kernel's `answered` reaches it).
  const pending = new Map();
  let said = 0;
  const send = (content) => { said += 1; model.send({ ...content, seq: said }); return said; };
  const answered = () => {
    const upTo = model.get("answered");
    for (const [id, mark] of pending) if (mark.seq <= upTo) pending.delete(id);
    draw();
  };
  const ratingOf = (id) => pending.get(id)?.stars ?? (model.get("ratings")[String(id)] || 0);
  const isSelected = (id) => pending.get(id)?.selected ?? model.get("selected").includes(id);
  const ids = () => model.get("ids");
  const order = () => {
    const list = ids().map((id, index) => index);
    const ratings = model.get("ratings"), scores = model.get("scores");
    const costs = model.get("costs"), prompts = model.get("prompts"), styles = model.get("styles");
    const signals = model.get("signals");
    const measured = (name, i) => (signals[name] ? signals[name][i] : 0);
    const key = {
      rating: (i) => -(ratings[String(ids()[i])] || 0), score: (i) => -(scores[String(ids()[i])] || 0),
      prompt: (i) => prompts[i], style: (i) => styles[i], cost: (i) => (costs[i] ?? Infinity), desk: (i) => i,
      sharpness: (i) => -measured("sharpness", i), noise: (i) => measured("noise", i),
      // near-duplicates first, each after the image it repeats; then the rest in the desk's order
      duplicates: (i) => (signals.dup_of && signals.dup_of[i] != null ? 0 : 1),
    }[sort];
    return list.sort((a, b) => { const x = key(a), y = key(b); return x < y ? -1 : x > y ? 1 : a - b; });
  };
  const current = () => ids()[order()[cursor]];

  // The bar: sorting, then the actions on the current image (each key's twin, by name).
  const bar = document.createElement("div");
  bar.className = "ik-bar";
  const sorter = group("ik-sorter", "Sort by");
  for (const name of SORTS) {
    const b = button(name, `Sort by ${name}`, () => {
      sort = name; cursor = 0;
      if (MEASURED.has(name) && !model.get("signals").sharpness) { measuring = true; send({ event: "measure" }); }
      draw();
    });
    b.dataset.sort = name;
    sorter.append(b);
  }
  const actions = group("ik-actions", "Decide");
  for (let stars = 1; stars <= 5; stars++) actions.append(button(String(stars), `Rate ${stars}`, () => rate(stars)));
  actions.append(button("0", "Clear rating", () => rate(0)), button("select", "Select or unselect", () => toggle()),
                 button("vote", "Vote between this image and the next", () => { pairing = true; draw(); }),
                 button("compare", "Compare this image with the next", () => save(model, { compare: !model.get("compare") })),
                 button("undo", "Undo", () => send({ event: "undo" })));
  const status = document.createElement("span");
  status.className = "ik-status";
  status.setAttribute("role", "status");
  bar.append(sorter, actions, status);

  // The next step, priced for the picks as they are (the kernel's quote), and its confirmation.
  const next = group("ik-next", "Send the picks on");
  const price = document.createElement("span");
  price.className = "ik-quote";
  price.setAttribute("role", "status");
  const sender = button("send", "Send the picks", () => {
    const shown = model.get("quote");
    sender.disabled = true;
    send({ event: "send", picks: shown.picks, credits: shown.credits });
  });
  next.append(price, sender);
  bar.append(next);

  const viewport = document.createElement("div");
  viewport.className = "ik-viewport";
  const spacer = document.createElement("div");
  spacer.className = "ik-spacer";
  const layer = document.createElement("div");
  layer.className = "ik-layer";
  spacer.append(layer);
  viewport.append(spacer);

  const pair = group("ik-pair", "Which is better?");
  const comparing = group("ik-compare", "Compare two images");
  const stage = document.createElement("div");
  stage.className = "ik-stage";
  const before = Object.assign(document.createElement("img"), { className: "ik-before", alt: "the current image, left of the divider", draggable: false });
  stage.append(before);
  comparing.append(stage, button("done", "Stop comparing", () => save(model, { compare: false })));
  const divider = comparer(model, stage);
  el.append(bar, pair, comparing, viewport);

  // Thumbnails come from the kernel as their rows come into view, so a desk of 1,000 opens as fast as
  // one of a screenful: the page keeps those it was sent and asks once for the others it shows.
  const thumbs = new Map(), asked = new Set();
  let wanting = [];
  const thumbnail = (index) => {
    if (thumbs.has(index)) return thumbs.get(index);
    if (!asked.has(index)) wanting.push(index);
    return "";
  };
  const askForThumbnails = () => {
    const wanted = [...new Set(wanting)].filter((index) => !asked.has(index) && !thumbs.has(index));
    wanting = [];
    if (!wanted.length) return;
    wanted.forEach((index) => asked.add(index));
    send({ event: "thumbnails", indexes: wanted });
  };
  const received = () => {
    const urls = model.get("drawn").urls || {};
    let fresh = false;
    for (const [index, url] of Object.entries(urls)) {
      asked.delete(Number(index));
      if (!thumbs.has(Number(index))) { thumbs.set(Number(index), url); fresh = true; }
    }
    if (fresh) draw();
  };
  const picture = (img, index) => {
    const url = thumbnail(index);
    if (url) img.src = url; else img.removeAttribute("src");
    return img;
  };

  const decide = (image, content, mark) => {
    pending.set(image, { ...pending.get(image), ...mark, seq: send({ ...content, image }) });
    drawGrid();
  };
  const rate = (stars) => decide(current(), { event: "rate", stars }, { stars });
  const toggle = () => {
    const image = current(), selected = !isSelected(image);
    decide(image, { event: selected ? "select" : "unselect" }, { selected });
  };
  const vote = (side) => {
    const shown = order();
    if (cursor + 1 >= shown.length) { pairing = false; draw(); return; }
    const left = ids()[shown[cursor]], right = ids()[shown[cursor + 1]];
    if (side === "tie") send({ event: "vote", winner: left, loser: right, tie: true });
    else send(side === "left" ? { event: "vote", winner: left, loser: right } : { event: "vote", winner: right, loser: left });
    cursor = Math.min(cursor + 1, shown.length - 1);
    if (cursor + 1 >= shown.length) pairing = false;
    draw();
  };

  const columns = () => Math.max(1, Math.floor((viewport.clientWidth || 900) / TILE));
  const tile = (index, place) => {
    const id = ids()[index];
    const stars = ratingOf(id);
    const cost = model.get("costs")[index];
    const signals = model.get("signals");
    const dup = signals.dup_of ? signals.dup_of[index] : null, blurred = signals.blurred ? signals.blurred[index] : false;
    const flags = [];
    if (dup != null) flags.push(Object.assign(document.createElement("span"), { className: "ik-flag ik-dup", textContent: `≈ #${dup}`, title: `a near-duplicate of image #${dup}` }));
    if (blurred) flags.push(Object.assign(document.createElement("span"), { className: "ik-flag ik-blurred", textContent: "blurred", title: "sharpness under half the desk's median" }));
    const figure = document.createElement("figure");
    figure.className = "ik-tile" + (isSelected(id) ? " ik-selected" : "") + (place === cursor ? " ik-current" : "") +
      (pending.has(id) ? " ik-pending" : "");
    figure.dataset.id = String(id);
    const said = [`image #${id}`, dup != null ? `near-duplicate of #${dup}` : "", blurred ? "blurred" : ""].filter(Boolean);
    const img = picture(Object.assign(document.createElement("img"), { alt: said.join(", "), className: "ik-thumb" }), index);
    const label = document.createElement("figcaption");
    label.innerHTML = "";
    label.append(Object.assign(document.createElement("span"), { className: "ik-stars", textContent: "★".repeat(stars) + "☆".repeat(5 - stars) }),
                 Object.assign(document.createElement("span"), { className: "ik-cost", textContent: cost == null ? "" : `${cost} cr` }));
    figure.append(img, label);
    if (flags.length) {
      const marks = Object.assign(document.createElement("div"), { className: "ik-flags" });
      marks.append(...flags);
      figure.append(marks);
    }
    figure.addEventListener("click", () => { cursor = place; draw(); el.focus(); });
    return figure;
  };

  const drawGrid = () => {
    const shown = order(), across = columns(), height = model.get("row_height");
    const rows = Math.ceil(shown.length / across);
    spacer.style.height = `${rows * height}px`;
    const first = Math.max(0, Math.floor(viewport.scrollTop / height) - 1);
    const last = Math.min(rows, Math.ceil((viewport.scrollTop + (viewport.clientHeight || 480)) / height) + 1);
    layer.style.transform = `translateY(${first * height}px)`;
    const tiles = [];
    for (let place = first * across; place < Math.min(shown.length, last * across); place++) tiles.push(tile(shown[place], place));
    layer.replaceChildren(...tiles);
    layer.style.gridTemplateColumns = `repeat(${across}, ${TILE - 8}px)`;
    const ahead = last + (last - first); // a screen below, asked for with this one: scrolling finds it there
    for (let place = last * across; place < Math.min(shown.length, ahead * across); place++) thumbnail(shown[place]);
    askForThumbnails();
  };

  const drawPair = () => {
    pair.hidden = !pairing;
    if (!pairing) { pair.replaceChildren(); return; }
    const shown = order();
    const side = (place) => picture(Object.assign(document.createElement("img"), {
      alt: `image #${ids()[shown[place]]}`, className: "ik-pair-image" }), shown[place]);
    pair.replaceChildren(side(cursor), side(cursor + 1),
      button("← better", "Left is better", () => vote("left")), button("tie ↓", "Tie", () => vote("tie")),
      button("better →", "Right is better", () => vote("right")), button("done", "Stop voting", () => { pairing = false; draw(); }));
  };

  const drawCompare = () => {
    const shown = order(), on = model.get("compare") && cursor + 1 < shown.length;
    comparing.hidden = !on;
    if (!on) return;
    picture(before, shown[cursor]);
    divider.show(thumbnail(shown[cursor + 1]));
    divider.refresh(true);
    comparing.dataset.pair = `${ids()[shown[cursor]]},${ids()[shown[cursor + 1]]}`;
  };

  const draw = () => {
    cursor = Math.max(0, Math.min(cursor, ids().length - 1));
    sorter.querySelectorAll("button").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.sort === sort)));
    const message = model.get("message");
    const count = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
    status.textContent = message || `${count(ids().length, "image")} · ${Object.keys(model.get("ratings")).length} rated · ` +
      `${model.get("selected").length} selected · ${count(model.get("votes"), "vote")}`;
    status.classList.toggle("ik-error", Boolean(message));
    if (model.get("signals").sharpness) measuring = false;
    if (measuring && !message) status.textContent = `measuring the quality of ${count(ids().length, "image")}…`;
    const quote = model.get("quote");
    next.hidden = !quote.text;
    price.textContent = quote.text || "";
    price.classList.toggle("ik-error", quote.text ? !quote.ok : false);
    sender.disabled = !quote.ok;
    sender.textContent = quote.ok ? `send ${quote.picks} for ${quote.credits} credits` : "send";
    drawGrid();
    drawPair();
    drawCompare();
    askForThumbnails(); // (those the pair and the comparison show)
    el.dataset.current = String(current());
  };

  const scrollToCursor = () => {
    const height = model.get("row_height"), row = Math.floor(cursor / columns());
    if (row * height < viewport.scrollTop) viewport.scrollTop = row * height;
    else if ((row + 1) * height > viewport.scrollTop + viewport.clientHeight) viewport.scrollTop = (row + 1) * height - viewport.clientHeight;
  };

  el.addEventListener("keydown", (e) => {
    if (e.target !== el && e.target.tagName === "BUTTON" && (e.key === " " || e.key === "Enter")) return;
    const move = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: columns(), ArrowUp: -columns() };
    if (pairing) {
      const side = { ArrowLeft: "left", ArrowRight: "right", ArrowDown: "tie" }[e.key];
      if (side) vote(side);
      else if (e.key === "Escape" || e.key === "p") { pairing = false; draw(); }
      else return;
    } else if (e.key in move) {
      cursor = Math.max(0, Math.min(cursor + move[e.key], ids().length - 1));
      scrollToCursor();
      draw();
    }
    else if (/^[0-5]$/.test(e.key)) rate(Number(e.key));
    else if (e.key === " ") toggle();
    else if (e.key === "p") { pairing = true; draw(); }
    else if (e.key === "c") save(model, { compare: !model.get("compare") });
    else if (e.key === "Escape" && model.get("compare")) save(model, { compare: false });
    else if (e.key === "z") send({ event: "undo" });
    else return;
    e.preventDefault();
    e.stopPropagation(); // JupyterLab's own shortcuts (z, arrows, 0-9) stay out of the desk
  });
  viewport.addEventListener("scroll", drawGrid);
  const resized = new ResizeObserver(() => drawGrid());
  resized.observe(viewport);

  received(); // the first screenful came with the widget
  const stop = listen(model, { "ids ratings scores selected votes message costs compare signals quote": draw,
                               drawn: received, divider: drawCompare, answered });
  draw();
  return () => { stop(); resized.disconnect(); };
}

export default { render };
