// PromptStudio's controls, browser side: the prompt with its live character count, the source (a style,
// a reference image or a collection), ratio and count, Enhance and Generate, progress, balance, the
// message, and the enhanced prompt offered beside the typed one. The kernel does the work: the buttons
// send it `{ event }` messages, and it answers by setting traits (busy, progress, balance, message).

import { listen, save } from "./model.js";
import { radioGroup } from "./radio.js";

const make = (tag, props = {}) => Object.assign(document.createElement(tag), props);

// A control with its visible label, which also names it for screen readers.
function labelled(text, control) {
  const label = make("label", { className: "ik-field" });
  label.append(make("span", { className: "ik-field-label", textContent: text }), control);
  return label;
}

// <option>s of [label, value] pairs, the one whose value is `chosen` selected.
function fill(select, pairs, chosen) {
  select.replaceChildren(...pairs.map(([text]) => make("option", { textContent: text })));
  select.selectedIndex = pairs.findIndex(([, value]) => value === chosen);
}

function render({ model, el }) {
  el.classList.add("ik-studio-controls");
  const prompt = make("textarea", { rows: 3, placeholder: "Describe the image…", className: "ik-prompt" });
  const counter = make("span", { className: "ik-counter" });
  prompt.addEventListener("input", () => save(model, { prompt: prompt.value }));

  const sources = [["style", "Style"], ["image", "Reference image"], ["collection", "Collection"]];
  const source = radioGroup("Source", (index) => save(model, { source: sources[index][0] }));
  const style = make("select", { className: "ik-style" });
  style.addEventListener("change", () => save(model, { style: model.get("styles")[style.selectedIndex][1] }));
  const file = make("input", { type: "file", accept: "image/*", className: "ik-reference" });
  file.addEventListener("change", async () => {
    const chosen = file.files[0];
    if (!chosen) return;
    save(model, { reference: new DataView(await chosen.arrayBuffer()) });
  });
  const collection = make("input", { type: "number", min: 1, step: 1, className: "ik-collection" });
  collection.addEventListener("change", () => {
    const id = Number(collection.value);
    if (Number.isInteger(id) && id >= 1) save(model, { collection: id });
    else collection.value = String(model.get("collection"));
  });
  const panes = { style: labelled("Style", style), image: labelled("Reference", file),
                  collection: labelled("Collection", collection) };

  const ratio = make("select", { className: "ik-ratio" });
  ratio.addEventListener("change", () => save(model, { ratio: model.get("ratios")[ratio.selectedIndex][1] }));
  const count = radioGroup("Count", (index) => save(model, { count: model.get("counts")[index] }));
  count.el.classList.add("ik-count");

  const enhance = make("button", { type: "button", textContent: "Enhance prompt", className: "ik-enhance" });
  const generate = make("button", { type: "button", textContent: "Generate", className: "ik-generate" });
  enhance.addEventListener("click", () => model.send({ event: "enhance" }));
  generate.addEventListener("click", () => model.send({ event: "generate" }));
  const progress = make("progress", { className: "ik-progress" });
  progress.setAttribute("aria-label", "Generating");
  const balance = make("span", { className: "ik-balance" });

  const suggestion = make("div", { className: "ik-suggestion" });
  const offered = {};
  for (const [which, title, label] of [["initial", "Your prompt", "Keep mine"], ["enhanced", "Enhanced", "Use enhanced"]]) {
    const pane = make("div", { className: "ik-offer" });
    offered[which] = make("div", { className: "ik-offer-text" });
    const take = make("button", { type: "button", textContent: label, className: `ik-use-${which}`,
                                  title: `${label}: put this version in the prompt box` });
    take.addEventListener("click", () => model.send({ event: "use", which }));
    pane.append(make("b", { textContent: title }), offered[which], take);
    suggestion.append(pane);
  }
  const message = make("div", { className: "ik-message", role: "status" });

  const settings = make("div", { className: "ik-row" });
  settings.append(labelled("Ratio", ratio), count.el);
  const actions = make("div", { className: "ik-row" });
  actions.append(enhance, generate, progress, balance);
  el.append(labelled("Prompt", prompt), counter, source.el, ...Object.values(panes), settings, actions,
            suggestion, message);

  const drawPrompt = () => {
    const text = model.get("prompt");
    if (prompt.value !== text) prompt.value = text;
    const length = [...text].length; // characters, as the kernel counts them
    counter.textContent = `${length} / ${model.get("limit")} characters`;
    counter.classList.toggle("ik-over", length > model.get("limit"));
  };
  const drawSource = () => {
    const chosen = model.get("source");
    source.draw(sources.map(([, label]) => label), sources.findIndex(([name]) => name === chosen), false);
    for (const [name, pane] of Object.entries(panes)) pane.hidden = name !== chosen;
  };
  const drawStyle = () => fill(style, model.get("styles"), model.get("style"));
  const drawRatio = () => fill(ratio, model.get("ratios"), model.get("ratio"));
  const drawCollection = () => { collection.value = String(model.get("collection")); };
  const drawCount = () => {
    const counts = model.get("counts");
    count.draw(counts.map(String), counts.indexOf(model.get("count")), model.get("busy"));
  };
  const drawButtons = () => {
    enhance.disabled = model.get("busy"); // the rest may change while images are made: a call takes them as it starts
    generate.disabled = model.get("busy") || !model.get("ready");
  };
  const drawProgress = () => {
    progress.hidden = !model.get("working");
    progress.max = Math.max(1, model.get("total"));
    progress.value = model.get("done");
  };
  const drawStatus = () => {
    balance.textContent = model.get("balance");
    message.textContent = model.get("message");
    message.classList.toggle("ik-error", model.get("error"));
  };
  const drawSuggestion = () => {
    const [initial, enhanced] = model.get("suggestion");
    suggestion.hidden = initial === undefined;
    offered.initial.textContent = initial ?? "";
    offered.enhanced.textContent = enhanced ?? "";
  };
  const stop = listen(model, {
    "prompt limit": drawPrompt,
    source: drawSource,
    "styles style": drawStyle,
    "ratios ratio": drawRatio,
    collection: drawCollection,
    "counts count busy": drawCount,
    "busy ready": drawButtons,
    "working total done": drawProgress,
    "balance message error": drawStatus,
    suggestion: drawSuggestion,
  });
  for (const draw of [drawPrompt, drawSource, drawStyle, drawRatio, drawCollection, drawCount, drawButtons,
                      drawProgress, drawStatus, drawSuggestion]) draw();
  return stop;
}

export default { render };
