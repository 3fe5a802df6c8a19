"""MaskPainter's before and after in JupyterLab: the divider dragged with the mouse and moved with the
keys, the original left of it and the result right, at the same zoom and pan."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from tests.helpers import wait_until

from .painting import Painter, painter_setup


def view_pixels(painter) -> np.ndarray:
    """The painter's view as the page shows it, as a float array."""
    return np.asarray(Image.open(io.BytesIO(painter.root.locator(".ik-view").screenshot())).convert("RGB"), float)


def test_before_and_after_divider_by_mouse_and_keys(notebook, shots):
    notebook.run(painter_setup(prompt="a red fox in the snow", brush=16))
    painter = Painter(notebook, shots)
    original, result = shots / "original.png", shots / "result.png"
    notebook.run("painter.select_box((100, 300, 900, 700))\npainter.clean_up()\n"
                 f"open({str(original)!r}, 'wb').write(painter.image_data)\n"
                 f"open({str(result)!r}, 'wb').write(painter.result_data)")
    painter.wait_result(1)
    compare = painter.root.get_by_role("button", name="Compare", exact=True)
    compare.click()
    painter.root.locator('button[data-action="compare"][aria-pressed="true"]').wait_for()
    divider = painter.root.get_by_role("slider", name="Before and after", exact=True)
    assert divider.get_attribute("aria-valuenow") == "50"

    stage = painter.picture.bounding_box()
    handle = divider.bounding_box()
    page = notebook.page
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(stage["x"] + stage["width"] * 0.25, handle["y"] + handle["height"] / 2, steps=8)
    page.mouse.up()
    page.wait_for_function("d => d.getAttribute('aria-valuenow') === '25'", arg=divider.element_handle())
    # The page moves first; the kernel hears of each move over the comm a moment later.
    wait_until(lambda: abs(float(notebook.run("print(painter.divider)")) - 0.25) <= 0.005, timeout=20,
               what="the kernel's divider at 0.25")

    for _ in range(5):
        divider.press("ArrowRight")
    divider.press("Shift+ArrowLeft")
    page.wait_for_function("d => d.getAttribute('aria-valuenow') === '20'", arg=divider.element_handle())
    notebook.wait_output("print(painter.divider)", "0.2\n")
    painter.shot("compared")

    # Left of the divider the page shows the original, right of it the result (inside the cleaned box).
    shown = view_pixels(painter)
    height, width = shown.shape[:2]
    before = np.asarray(Image.open(original).convert("RGB").resize((width, height)), float)
    after = np.asarray(Image.open(result).convert("RGB").resize((width, height)), float)
    rows = slice(int(height * 0.35), int(height * 0.65))
    for columns, expect, other in ((slice(int(width * 0.11), int(width * 0.18)), before, after),
                                   (slice(int(width * 0.3), int(width * 0.85)), after, before)):
        near = np.abs(shown[rows, columns] - expect[rows, columns]).mean()
        far = np.abs(shown[rows, columns] - other[rows, columns]).mean()
        assert near < far, (columns, near, far)

    painter.press("+", syncs=False)  # zoomed, the divider stays at the same place in the image
    assert float(painter.root.get_attribute("data-zoom")) > 1
    stage, handle = painter.picture.bounding_box(), divider.bounding_box()
    assert abs(handle["x"] + handle["width"] / 2 - (stage["x"] + stage["width"] * 0.2)) <= 1, (stage, handle)
    painter.shot("compared-zoomed")
    compare.click()
    painter.root.locator('button[data-action="compare"][aria-pressed="false"]').wait_for()
    notebook.wait_output("print(painter.compare)", "False\n")
