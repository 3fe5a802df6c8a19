// A labelled group of buttons with one chosen (a radio group), named for screen readers by its visible
// label; arrow keys move the choice, as in any radio group. The caller keeps the state: `choose(index)`
// asks for a choice, `draw(labels, index, disabled)` shows one.

export function radioGroup(description, choose) {
  const el = Object.assign(document.createElement("div"), { className: "ik-choice" });
  const label = Object.assign(document.createElement("span"), { className: "ik-choice-label", textContent: description });
  label.id = `ik-choice-${Math.random().toString(36).slice(2)}`;
  const group = Object.assign(document.createElement("div"), { className: "ik-choice-group" });
  group.setAttribute("role", "radiogroup");
  group.setAttribute("aria-labelledby", label.id);
  el.append(label, group);

  let shown = { labels: [], index: 0, disabled: false };
  const pick = (index) => { if (!shown.disabled) choose(index); };
  const draw = (labels, index, disabled) => {
    shown = { labels, index, disabled };
    group.replaceChildren(...labels.map((text, at) => {
      const button = Object.assign(document.createElement("button"), { type: "button", textContent: text });
      button.className = "ik-choice-button";
      button.setAttribute("role", "radio");
      button.setAttribute("aria-checked", String(at === index));
      button.tabIndex = at === index ? 0 : -1; // one tab stop for the group
      button.disabled = disabled;
      button.addEventListener("click", () => pick(at));
      return button;
    }));
  };
  group.addEventListener("keydown", (event) => {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
    if (!step || !shown.labels.length) return;
    event.preventDefault();
    pick((shown.index + step + shown.labels.length) % shown.labels.length);
    group.querySelector('[aria-checked="true"]')?.focus();
  });
  return { el, draw };
}
