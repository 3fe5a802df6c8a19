"""Driving a MaskPainter shown in JupyterLab: mouse strokes, keys, buttons, and the kernel's mask."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw


def painter_setup(prompt: str = "a red fox in the snow", ratio: str = "1:1", brush: int = 64,
                  then: str = "", before_shown: str = "") -> str:
    """Notebook code: a generated image (plus ``then``, e.g. an enhance) in a MaskPainter named painter
    (``before_shown`` runs between making it and showing it)."""
    return f"""
import imagekit
from imagekit.widgets import MaskPainter
ik = imagekit.connect()
image = ik.create({prompt!r}, style=ik.styles()[0].style_id, count=1, ratio={ratio!r}).images[0]{then}
painter = MaskPainter(image, brush_size={brush}){before_shown and chr(10) + before_shown.strip()}
painter
"""


def stroke(start, end, width: int, size: tuple[int, int]) -> np.ndarray:
    """The mask a round brush of ``width`` leaves along start -> end (image pixels)."""
    picture = Image.new("L", size, 0)
    draw = ImageDraw.Draw(picture)
    draw.line([start, end], fill=255, width=width)
    for x, y in (start, end):
        draw.ellipse([x - width / 2, y - width / 2, x + width / 2, y + width / 2], fill=255)
    return np.asarray(picture) > 0


# Resolves with the element's box once it has kept still for a few animation frames: running a cell
# below a widget scrolls the notebook to it a frame or more after the cell ends, later under load, and a
# drag measured before that lands beside the widget. Frames, not milliseconds, so load only slows it.
_SETTLED_BOX = """async ([el, frames]) => {
  const box = () => JSON.stringify(el.getBoundingClientRect());
  let last = box(), still = 0;
  while (still < frames) {
    await new Promise(requestAnimationFrame);
    const now = box();
    still = now === last ? still + 1 : 0;
    last = now;
  }
  const {x, y, width, height} = el.getBoundingClientRect();
  return {x, y, width, height};
}"""


def settled_box(locator, frames: int = 5) -> dict:
    """The box of ``locator``'s element, in view and no longer moving (see ``_SETTLED_BOX``)."""
    locator.scroll_into_view_if_needed()
    return locator.page.evaluate(_SETTLED_BOX, [locator.element_handle(), frames])


def iou(a: np.ndarray, b: np.ndarray) -> float:
    return (a & b).sum() / (a | b).sum()


# The page's timeline (see conftest.PAGE_TRACE) without the short long tasks.
TRACE_WORTH_READING = "(window.ikTrace || []).filter(line => !/long task ([0-9]|[0-9][0-9]|[0-2][0-9][0-9]) ms/.test(line))"


class Painter:
    """The painter's view in the page, and the kernel's mask."""

    def __init__(self, notebook, folder):
        self.notebook, self.page, self.folder = notebook, notebook.page, folder
        self.root = self.page.locator('.ik-painter[data-ready="1"]')
        self.root.wait_for()
        self.root.scroll_into_view_if_needed()
        self.canvas = self.root.locator("canvas.ik-mask")
        self.picture = self.root.locator("img.ik-image")
        self.size = tuple(self.picture.evaluate("img => [img.naturalWidth, img.naturalHeight]"))

    def kernel_link(self) -> str:
        """What the view found when it checked that the kernel's messages reach its model (kernel_link.js)."""
        self.page.wait_for_function("el => el.dataset.kernelLink !== undefined", arg=self.root.element_handle())
        return self.root.get_attribute("data-kernel-link")

    @property
    def synced(self) -> int:
        return int(self.root.get_attribute("data-synced") or 0)

    def drag(self, *points, steps: int = 24) -> None:
        """One stroke through ``points`` (image pixels), as a mouse drag; waits until the kernel has it."""
        box = settled_box(self.picture)
        scale = box["width"] / self.size[0]
        synced = self.synced
        self.page.mouse.move(box["x"] + points[0][0] * scale, box["y"] + points[0][1] * scale)
        self.page.mouse.down()
        for x, y in points[1:]:
            self.page.mouse.move(box["x"] + x * scale, box["y"] + y * scale, steps=steps)
        self.page.mouse.up()
        self.wait_synced(synced + 1)

    def click(self, action: str) -> None:
        """Click a toolbar button; history buttons wait until the kernel has the new mask."""
        synced = self.synced
        self.root.locator(f'button[data-action="{action}"]').click()
        if action in ("undo", "redo", "clear", "invert"):
            self.wait_synced(synced + 1)

    def press(self, keys: str, syncs: bool = True) -> None:
        """Press ``keys`` with focus in the painter's view (running a cell moves focus to the notebook)."""
        synced = self.synced
        self.root.locator(".ik-view").focus()
        self.page.keyboard.press(keys)
        if syncs:
            self.wait_synced(synced + 1)

    def wait_synced(self, revision: int) -> None:
        try:
            self.page.wait_for_function(
                "([el, n]) => Number(el.dataset.synced || 0) >= n", arg=[self.root.element_handle(), revision])
        except Exception as error:  # say what the page and the kernel show, not only that time ran out
            state = self.root.evaluate("el => ({...el.dataset})")
            try:
                kernel = self.notebook.run("print(painter.revision, painter.received, len(painter.mask_png))")
            except Exception as failed:  # noqa: BLE001  (the kernel's answer is a clue, not the finding)
                kernel = f"no answer ({failed})"
            raise AssertionError(f"the kernel never had mask revision {revision}; the painter's state: {state}; "
                                 f"the kernel's revision, received, mask bytes: {kernel.strip()}; the page's last "
                                 f"complaints: {getattr(self.page, 'complaints', [])[-5:]}; the page's timeline: "
                                 f"{self.page.evaluate(TRACE_WORTH_READING)[-30:]}") from error

    def set_mask(self, code: str) -> None:
        """Set the mask in the kernel (``code`` is the value) and wait until the page shows it."""
        self.wait_loaded(int(self.notebook.run(f"painter.mask = {code}\nprint(painter.revision)")))

    def wait_loaded(self, revision: int) -> None:
        """Wait until the page shows the kernel's mask of ``revision`` (or a later one)."""
        self.page.wait_for_function("([el, n]) => Number(el.dataset.loaded || 0) >= n",
                                    arg=[self.root.element_handle(), revision])

    def kernel_change(self, action: str) -> None:
        """Click a button whose change the kernel makes (grow, shrink, smooth); wait until it shows."""
        revision = int(self.root.get_attribute("data-loaded") or 0)
        self.root.locator(f'button[data-action="{action}"]').click()
        self.wait_loaded(revision + 1)

    def kernel_mask(self, name: str) -> np.ndarray:
        path = self.folder / f"mask-{name}.png"
        self.notebook.run(f"painter.mask.save({str(path)!r})")
        return np.asarray(Image.open(path)) > 0

    def sync_stats(self) -> dict:
        return {key: float(self.root.get_attribute(f"data-sync-{key}"))
                for key in ("bytes", "encode-ms", "roundtrip-ms")}

    def wait_result(self, count: int) -> None:
        """Wait until the painter has shown ``count`` edit results."""
        self.page.wait_for_function("([el, n]) => Number(el.dataset.results || 0) >= n",
                                    arg=[self.root.element_handle(), count])

    def shot(self, name: str) -> None:
        self.page.screenshot(path=self.folder / f"{name}.png")
