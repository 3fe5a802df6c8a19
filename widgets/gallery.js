// Gallery, browser side: a grid of thumbnails; a click selects or unselects one.

import { listen, save } from "./model.js";

function render({ model, el }) {
  el.classList.add("ik-gallery");
  const grid = document.createElement("div");
  grid.className = "ik-grid";
  el.append(grid);

  const toggle = (index) => {
    const chosen = model.get("selected");
    const next = chosen.includes(index)
      ? chosen.filter((i) => i !== index)
      : model.get("multiple") ? [...chosen, index] : [index];
    save(model, { selected: next });
  };

  const draw = () => {
    const captions = model.get("captions");
    const chosen = model.get("selected");
    grid.replaceChildren(...model.get("thumbnails").map((src, index) => {
      const figure = document.createElement("figure");
      figure.className = "ik-tile" + (chosen.includes(index) ? " ik-selected" : "");
      figure.tabIndex = 0;
      figure.title = "click to select";
      const img = Object.assign(document.createElement("img"), { src, alt: captions[index] || "", className: "ik-thumb" });
      const label = Object.assign(document.createElement("figcaption"), { textContent: captions[index] || "" });
      figure.append(img, label);
      figure.addEventListener("click", () => toggle(index));
      figure.addEventListener("keydown", (e) => { if (e.key === " " || e.key === "Enter") { e.preventDefault(); toggle(index); } });
      return figure;
    }));
    el.dataset.count = String(model.get("thumbnails").length);
  };

  const stop = listen(model, { "thumbnails captions selected": draw });
  draw();
  return stop;
}

export default { render };
