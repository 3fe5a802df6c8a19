"""MaskPainter in JupyterLab: strokes drawn with the mouse reach the kernel as the expected mask."""

from __future__ import annotations

import json

import numpy as np
from PIL import Image, ImageDraw

SIZE = 1024
BRUSH = 64

SETUP = f"""
import imagekit
from imagekit.widgets import MaskPainter
ik = imagekit.connect()
image = ik.create("a red fox in the snow", style=ik.styles()[0].style_id, count=1).images[0]
painter = MaskPainter(image, brush_size={BRUSH})
painter
"""


def stroke(start, end, width=BRUSH, size=SIZE) -> np.ndarray:
    """The mask a round brush of ``width`` leaves along start -> end (image pixels)."""
    picture = Image.new("L", (size, size), 0)
    draw = ImageDraw.Draw(picture)
    draw.line([start, end], fill=255, width=width)
    for x, y in (start, end):
        draw.ellipse([x - width / 2, y - width / 2, x + width / 2, y + width / 2], fill=255)
    return np.asarray(picture) > 0


def iou(a: np.ndarray, b: np.ndarray) -> float:
    return (a & b).sum() / (a | b).sum()


class Painter:
    """The painter's view in the page, and the kernel's mask."""

    def __init__(self, notebook, tmp_path):
        self.notebook, self.page, self.tmp_path = notebook, notebook.page, tmp_path
        self.root = self.page.locator('.ik-painter[data-ready="1"]')
        self.root.wait_for()
        self.root.scroll_into_view_if_needed()

    def drag(self, *points) -> None:
        """One stroke through ``points`` (image pixels), as a mouse drag."""
        box = self.root.locator("canvas.ik-mask").bounding_box()
        scale = box["width"] / SIZE
        synced = int(self.root.get_attribute("data-synced") or 0)
        self.page.mouse.move(box["x"] + points[0][0] * scale, box["y"] + points[0][1] * scale)
        self.page.mouse.down()
        for x, y in points[1:]:
            self.page.mouse.move(box["x"] + x * scale, box["y"] + y * scale, steps=24)
        self.page.mouse.up()
        self.wait_synced(synced + 1)

    def click(self, action: str) -> None:
        synced = int(self.root.get_attribute("data-synced") or 0)
        self.root.locator(f'button[data-action="{action}"]').click()
        if action not in ("brush", "eraser"):
            self.wait_synced(synced + 1)

    def wait_synced(self, revision: int) -> None:
        self.page.wait_for_function(
            "([el, n]) => Number(el.dataset.synced || 0) >= n", arg=[self.root.element_handle(), revision])

    def kernel_mask(self, name: str) -> np.ndarray:
        path = self.tmp_path / f"{name}.png"
        self.notebook.run(f"painter.mask.save({str(path)!r})")
        return np.asarray(Image.open(path)) > 0

    def sync_stats(self) -> dict:
        return {key: self.root.get_attribute(f"data-sync-{key}") for key in ("bytes", "encode-ms", "roundtrip-ms")}


def test_stroke_eraser_undo_redo(notebook, tmp_path):
    notebook.run(SETUP)
    painter = Painter(notebook, tmp_path)
    painted = stroke((200, 300), (820, 620))
    painter.drag((200, 300), (820, 620))
    first = painter.kernel_mask("stroke")
    stats = painter.sync_stats()
    (tmp_path / "sync.json").write_text(json.dumps(stats))
    print("mask sync 1024x1024:", stats)
    assert iou(first, painted) >= 0.8, iou(first, painted)
    assert notebook.run("print(repr(painter))").startswith("MaskPainter(1024x1024, painted=")

    painter.click("eraser")
    erased = stroke((620, 200), (420, 800))
    painter.drag((620, 200), (420, 800))
    second = painter.kernel_mask("erased")
    assert iou(second, painted & ~erased) >= 0.8, iou(second, painted & ~erased)
    assert (second & erased).sum() < 0.05 * erased.sum()  # the eraser really unpainted its path
    painter.page.screenshot(path=tmp_path / "erased.png")

    painter.click("undo")
    np.testing.assert_array_equal(painter.kernel_mask("undone"), first)
    painter.click("redo")
    np.testing.assert_array_equal(painter.kernel_mask("redone"), second)
    painter.click("clear")
    assert not painter.kernel_mask("cleared").any()
    painter.click("undo")
    np.testing.assert_array_equal(painter.kernel_mask("clear-undone"), second)


def test_mask_from_python_and_clean_up(notebook, tmp_path):
    notebook.run(SETUP)
    painter = Painter(notebook, tmp_path)
    painter.drag(*[(60 + 60 * i, 80 if i % 2 else 940) for i in range(16)])  # a long zig-zag scribble
    scribble = painter.sync_stats()
    notebook.run("import numpy as np\nm = np.zeros((1024, 1024), bool); m[400:600, 300:700] = True\n"
                 "painter.mask = m")
    painter.click("invert")  # the browser inverts what Python drew
    inverted = painter.kernel_mask("inverted")
    expected = np.ones((SIZE, SIZE), bool)
    expected[400:600, 300:700] = False
    assert iou(inverted, expected) >= 0.99
    stats = {"scribble": scribble, "inverted": painter.sync_stats()}
    (tmp_path / "sync.json").write_text(json.dumps(stats))
    print("mask sync 1024x1024:", stats)
    painter.click("invert")
    notebook.run("result = painter.clean_up()")
    painter.root.locator("img.ik-result").wait_for()
    painter.page.wait_for_function("el => el.dataset.result === '1'", arg=painter.root.element_handle())
    width = painter.root.locator("img.ik-result").evaluate("img => img.naturalWidth")
    assert width == SIZE
    assert notebook.run("print(painter.result is result, painter.status == '')") == "True True\n"
    painter.root.locator("img.ik-result").scroll_into_view_if_needed()
    painter.page.screenshot(path=tmp_path / "clean_up.png")
