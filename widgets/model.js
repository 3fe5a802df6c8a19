// The widgets' one door to their model, kept to the anywidget model interface (get, set, save_changes,
// on, off, send): one key per `set`, one event per `on` and `off`. That is all marimo implements;
// JupyterLab's Backbone models also take several keys or events in one call, marimo drops them silently.

// Set each trait in `values` on the model, then send them to the kernel together.
export function save(model, values) {
  for (const [name, value] of Object.entries(values)) model.set(name, value);
  model.save_changes();
}

// Call each handler when one of its traits changes (keys: trait names separated by spaces);
// returns a function that stops listening.
export function listen(model, handlers) {
  const pairs = Object.entries(handlers).flatMap(([names, handler]) =>
    names.split(/\s+/).filter(Boolean).map((name) => [name, handler]));
  pairs.forEach(([name, handler]) => model.on(`change:${name}`, handler));
  return () => pairs.forEach(([name, handler]) => model.off(`change:${name}`, handler));
}
