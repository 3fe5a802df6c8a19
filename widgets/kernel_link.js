// Keeps a widget hearing its kernel in JupyterLab and Notebook 7.
//
// anywidget 0.11 drops, for good and without a word, every message the kernel sends a model whose
// module was not loaded and bound within 2 s of the model's creation: its handler awaits a promise that
// a 2 s timer has rejected. On a busy machine that happens (seen with an 8192 px painter beside other
// work). The view still renders and its own messages still reach the kernel, so the widget looks alive
// while no mask, result or status the kernel sets ever shows.
//
// Once a view has rendered, the model's module is bound, so its handler either passes a message on or
// never will. `keepHearing` asks it with a message that means nothing; if the handler refuses, the
// model's comm is handed to the widget base's own handler (what anywidget's calls after its wait) and
// the kernel is asked for its state again, since what it sent meanwhile is lost.
//
// Hosts whose models are not ipywidgets' (marimo's: no comm handler) have no such timer and are left alone.

const PROBE = { content: { data: { method: "imagekit-probe" } }, buffers: [] }; // the base handler ignores it

// The prototype that defines `name` for `object` (the nearest one up its chain).
function definer(object, name) {
  let proto = Object.getPrototypeOf(object);
  while (proto && !Object.prototype.hasOwnProperty.call(proto, name)) proto = Object.getPrototypeOf(proto);
  return proto;
}

// Whether the model's kernel messages reach it, and if not, make them: "heard", "healed", or why
// neither could be told ("no widget manager", ...). Each model is checked once, whatever its views.
export function keepHearing(model) {
  const manager = model.widget_manager;
  const id = model.get("_model_ref");
  if (!manager || typeof manager.get_model !== "function") return Promise.resolve("no widget manager");
  if (!id) return Promise.resolve("no model id");
  return Promise.resolve(manager.get_model(id)).then((real) => {
    if (!real) return "no model";
    real.imagekitHearing ??= check(real, () => model.send({ event: "resync" }));
    return real.imagekitHearing;
  }).catch((error) => `no model: ${error}`); // never the view's failure: the widget works as it can
}

async function check(real, resync) {
  if (typeof real._handle_comm_msg !== "function") return "no comm handler";
  try {
    await real._handle_comm_msg(PROBE);
    return "heard";
  } catch (error) {
    const base = Object.getPrototypeOf(definer(real, "_handle_comm_msg") ?? {})?._handle_comm_msg;
    if (!base || typeof real.comm?.on_msg !== "function") return `deaf, no other handler (${error})`;
    real.comm.on_msg((message) => base.call(real, message));
    resync();
    return "healed";
  }
}
