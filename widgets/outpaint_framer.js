// OutpaintFramer, browser side: the outpaint frame of outpaint_frame.js on its own, with the result
// beside the original and "Continue on result".

import { make, ownKeys, resultPane, show } from "./mask_controls.js";
import { listen } from "./model.js";
import { framing } from "./outpaint_frame.js";

function render({ model, el }) {
  el.classList.add("ik-painter", "ik-framer");
  ownKeys(el); // keys pressed here are the widget's, not the notebook's
  el.style.setProperty("--ik-max-view", `${model.get("max_view")}px`);
  const frame = framing(model, (content) => model.send(content), () => model.send({ event: "edit", op: "outpaint" }));
  const progress = make("progress", "ik-progress");
  progress.setAttribute("aria-label", "edit in progress");
  const status = make("span", "ik-status", { role: "status" });
  frame.bar.append(progress, status);
  const picture = make("img", "", { hidden: true }); // holds the image's URL for the board
  const original = make("figure", "ik-pane");
  original.append(frame.board);
  const { pane: result, image: resultImage } = resultPane(model, el, "frame the result next");
  const panes = make("div", "ik-panes");
  panes.append(original, result);
  el.append(frame.bar, panes);

  const showImage = () => {
    show(picture, model.get("image_data"));
    frame.image(picture.src);
    el.style.setProperty("--ik-aspect", String(model.get("width") / model.get("height")));
  };
  const showResult = () => {
    const data = model.get("result_data");
    panes.classList.toggle("ik-has-result", Boolean(data && data.byteLength));
    show(resultImage, data);
  };
  const onBusy = () => {
    progress.hidden = !model.get("busy");
    status.textContent = model.get("status");
    frame.refresh();
  };
  const stop = listen(model, {
    "image_data width height": showImage,
    result_data: showResult,
    "canvas location size outpaint_price frame_problem editable": frame.refresh,
    "busy status": onBusy,
  });
  showImage();
  showResult();
  onBusy();
  el.dataset.ready = "1";
  return () => {
    stop();
    show(picture, null);
    show(resultImage, null);
  };
}

export default { render };
