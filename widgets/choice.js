// Choice, browser side: a labelled group of buttons, one of them chosen (a radio group).
// The group is named by its visible label; arrow keys move the choice, as in any radio group.

import { listen, save } from "./model.js";

function render({ model, el }) {
  el.classList.add("ik-choice");
  const label = Object.assign(document.createElement("span"), { className: "ik-choice-label" });
  label.id = `ik-choice-${Math.random().toString(36).slice(2)}`;
  const group = Object.assign(document.createElement("div"), { className: "ik-choice-group" });
  group.setAttribute("role", "radiogroup");
  group.setAttribute("aria-labelledby", label.id);
  el.append(label, group);

  const choose = (index) => {
    if (model.get("disabled")) return;
    save(model, { index });
  };
  const draw = () => {
    const chosen = model.get("index");
    label.textContent = model.get("description");
    group.replaceChildren(...model.get("labels").map((text, index) => {
      const button = Object.assign(document.createElement("button"), { type: "button", textContent: text });
      button.className = "ik-choice-button";
      button.setAttribute("role", "radio");
      button.setAttribute("aria-checked", String(index === chosen));
      button.tabIndex = index === chosen ? 0 : -1; // one tab stop for the group
      button.disabled = model.get("disabled");
      button.addEventListener("click", () => choose(index));
      return button;
    }));
  };
  group.addEventListener("keydown", (event) => {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
    if (!step) return;
    event.preventDefault();
    const count = model.get("labels").length;
    choose((model.get("index") + step + count) % count);
    group.querySelector('[aria-checked="true"]')?.focus();
  });

  const stop = listen(model, { "labels index description disabled": draw });
  draw();
  return stop;
}

export default { render };
