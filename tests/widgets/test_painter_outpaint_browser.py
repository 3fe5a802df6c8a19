"""Outpaint framing in the browser: the canvas's edges and corners dragged with the mouse, moved with
the keys and typed; the price shown is what the sandbox charges, the request it received carries the
frame, and the result can be continued on. In MaskPainter's outpaint mode and in OutpaintFramer."""

from __future__ import annotations

import ast

from tests.helpers import wait_until
from tests.utils.browser import served_edit

from .painting import Painter, painter_setup, settled_box

PRICE = "print(f\"{next(c.credit for c in ik.me().plan.credit_cost_info if c.type == 'outpaint'):g}\")"


class Board:
    """The outpaint frame in the page (``root`` holds it) and the kernel's frame (``name`` is the widget)."""

    def __init__(self, notebook, root, name: str):
        self.notebook, self.page, self.root, self.name = notebook, notebook.page, root, name
        self.board = root.locator(".ik-board")
        self.board.wait_for(state="visible")

    def drag(self, handle: str, dx: float, dy: float) -> None:
        """Drag a handle (n, se, w...) by (dx, dy) image pixels with the mouse."""
        scale = float(self.board.get_attribute("data-scale"))
        box = settled_box(self.root.locator(f'[data-handle="{handle}"]'))
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        self.page.mouse.move(x, y)
        self.page.mouse.down()
        self.page.mouse.move(x + dx * scale, y + dy * scale, steps=8)
        self.page.mouse.up()

    def kernel(self) -> tuple[list[int], list[int]]:
        return ast.literal_eval(self.notebook.run(f"print(({self.name}.canvas, {self.name}.location))"))

    def wait_kernel(self, canvas, location, slack: int = 0) -> tuple[list[int], list[int]]:
        """Wait until the kernel's frame is within ``slack`` px of ``canvas`` and ``location``; return it."""
        def near() -> bool:
            got = self.kernel()
            return all(abs(a - b) <= slack for a, b in zip([*got[0], *got[1]], [*canvas, *location], strict=True))
        wait_until(near, timeout=20, what=f"the kernel's frame near {canvas} at {location}")
        return self.kernel()

    def shot(self, folder, name: str) -> None:
        """A screenshot of the widget alone."""
        self.root.screenshot(path=folder / f"{name}.png")

    def shown_price(self) -> str:
        return self.root.locator('button[data-action="outpaint"]').inner_text()


def run_and_check(notebook, board, sandbox, name: str, price: str) -> dict:
    """Click Outpaint; check the sandbox received the kernel's frame and charged the price shown."""
    canvas, location = board.kernel()
    assert board.shown_price() == f"Outpaint · {price} credit{'' if price == '1' else 's'}"  # before the click
    board.root.locator('button[data-action="outpaint"]').click()
    notebook.page.wait_for_function("el => Number(el.dataset.results || 0) >= 1", arg=board.root.element_handle())
    result_id = int(notebook.run(f"print({name}.result.id)"))
    served = served_edit(sandbox, result_id)
    assert served["params"]["canvasSize"] == canvas and served["params"]["originalImageLocation"] == location
    assert served["size"] == tuple(canvas) and f"{served['credits']:g}" == price
    assert board.root.locator("figcaption").inner_text() == f"result {canvas[0]}×{canvas[1]}"
    recorded = notebook.run(f"print([e.credits for e in ik.ledger.entries() if e.operation == 'outpaint'"
                            f" and e.source_id == {name}.source.id])")
    assert recorded == f"[{float(price)}]\n", recorded
    return {"canvas": canvas, "location": location, "result": result_id}


def test_painter_outpaint_framed_by_dragging_keys_and_typing_then_continued(notebook, shots, lab_sandbox):
    notebook.run(painter_setup(ratio="16:9", brush=16))  # 1024x576
    painter = Painter(notebook, shots)
    price = notebook.run(PRICE).strip()
    painter.press("o", syncs=False)  # the outpaint mode from the keyboard
    painter.root.locator('button[data-action="outpaint-mode"][aria-pressed="true"]').wait_for()
    board = Board(notebook, painter.root, "painter")
    assert "conic-gradient" in board.root.locator(".ik-canvas").evaluate("n => getComputedStyle(n).backgroundImage")
    assert price in painter.root.locator(".ik-frame-label").inner_text()  # the cost, on the new area too

    board.drag("e", 200, 0)  # the right edge out
    board.wait_kernel([1224, 576], [0, 0], slack=2)
    board.drag("nw", -100, -150)  # the top-left corner out: the original moves right and down
    canvas, location = board.wait_kernel([1324, 726], [100, 150], slack=3)
    board.drag("w", 160, 0)  # the left edge in, past the original's: its location turns negative
    canvas, location = board.wait_kernel([canvas[0] - 160, canvas[1]], [location[0] - 160, location[1]], slack=2)
    assert location[0] < 0
    board.shot(shots, "dragged")

    board.board.focus()
    notebook.page.keyboard.press("ArrowDown")  # the bottom edge out by 64 px
    notebook.page.keyboard.press("Shift+ArrowRight")  # the right edge in by 64 px
    canvas, location = board.wait_kernel([canvas[0] - 64, canvas[1] + 64], location)
    typed = painter.root.get_by_role("spinbutton", name="Top", exact=True)
    typed.fill(str(location[1] + 10))
    typed.press("Tab")  # a typed size: the original 10 px lower on the canvas
    canvas, location = board.wait_kernel(canvas, [location[0], location[1] + 10])
    board.shot(shots, "framed")

    run = run_and_check(notebook, board, lab_sandbox, "painter", price)
    board.shot(shots, "outpainted")
    painter.root.get_by_role("button", name="Continue on result", exact=True).click()
    notebook.page.wait_for_function("([img, w]) => img.naturalWidth === w",
                                    arg=[painter.picture.element_handle(), run["canvas"][0]])
    board.wait_kernel(run["canvas"], [0, 0])  # the new image's frame adds nothing yet
    assert notebook.run("print(painter.source.id, painter.width, painter.height, painter.mask_array().any())") == \
        f"{run['result']} {run['canvas'][0]} {run['canvas'][1]} False\n"
    board.board.focus()
    notebook.page.keyboard.press("o")  # back to the mask, painting on the result
    painter.root.locator(".ik-view").wait_for(state="visible")
    painter.size = tuple(run["canvas"])
    painter.drag((100, 100), (400, 300))
    assert notebook.run("print(painter.mask_array().any())") == "True\n"


def test_outpaint_framer_by_corner_drag_and_ratio(notebook, shots, lab_sandbox):
    notebook.run(painter_setup(brush=16).replace("painter = MaskPainter(image, brush_size=16)\npainter",
                                                 "from imagekit.widgets import OutpaintFramer\n"
                                                 "framer = OutpaintFramer(image)\nframer"))
    price = notebook.run(PRICE).strip()
    root = notebook.page.locator('.ik-framer[data-ready="1"]')
    root.wait_for()
    root.scroll_into_view_if_needed()
    board = Board(notebook, root, "framer")
    board.drag("se", 120, 80)
    canvas, location = board.wait_kernel([1144, 1104], [0, 0], slack=2)
    root.get_by_label("Ratio").select_option("16:9")  # wider, about the canvas's centre
    canvas, location = board.wait_kernel([round(canvas[1] * 16 / 9), canvas[1]],
                                         [(round(canvas[1] * 16 / 9) - canvas[0]) // 2, 0], slack=1)
    assert notebook.run("print(framer.frame_problem == '')") == "True\n"
    run_and_check(notebook, board, lab_sandbox, "framer", price)
    board.root.get_by_role("button", name="Continue on result", exact=True).click()
    board.wait_kernel(canvas, [0, 0])
    assert notebook.run("print(framer.width, framer.height)") == f"{canvas[0]} {canvas[1]}\n"
    board.shot(shots, "framer")
