"""MaskPainter's selection tools in JupyterLab: grow, shrink and smooth by buttons and keys, each one
undo step, compared with the kernel's mask."""

from __future__ import annotations

import numpy as np

from imagekit.widgets.mask_ops import grow, shrink, smooth

from .painting import Painter, painter_setup

SIZE = (1024, 1024)
SQUARE = np.zeros(SIZE[::-1], bool)
SQUARE[300:700, 200:600] = True  # 400 px a side


def extent(bits: np.ndarray) -> tuple[int, int]:
    """The painted width along the square's middle row and height along its middle column."""
    return int(bits[500].sum()), int(bits[:, 400].sum())


def test_grow_shrink_and_smooth_by_n_pixels_each_one_undo_step(notebook, shots):
    notebook.run(painter_setup(brush=16))
    painter = Painter(notebook, shots)
    notebook.run("import numpy as np\nsquare = np.zeros((1024, 1024), bool)\nsquare[300:700, 200:600] = True\n"
                 "square[100, 100] = True")  # and a speck for Smooth
    painter.set_mask("square")
    start = painter.kernel_mask("start")
    amount = painter.root.get_by_role("slider", name="Amount", exact=True)
    assert amount.get_attribute("aria-valuetext") == "4 px"
    amount.focus()
    for _ in range(8):  # the keyboard sets the amount: 4 + 8 = 12 px
        notebook.page.keyboard.press("ArrowRight")
    assert amount.get_attribute("aria-valuetext") == "12 px"

    painter.kernel_change("grow")
    grown = painter.kernel_mask("grown")
    assert extent(grown) == (424, 424)
    np.testing.assert_array_equal(grown, grow(start, 12))
    painter.shot("grown")
    painter.press("Control+z")  # one undo step takes the whole grow back
    np.testing.assert_array_equal(painter.kernel_mask("grow-undone"), start)

    painter.root.get_by_role("button", name="Shrink", exact=True).focus()
    revision = int(painter.root.get_attribute("data-loaded"))
    notebook.page.keyboard.press("Enter")  # the button from the keyboard
    painter.wait_loaded(revision + 1)
    shrunk = painter.kernel_mask("shrunk")
    assert extent(shrunk) == (376, 376) and not shrunk[100, 100]
    np.testing.assert_array_equal(shrunk, shrink(start, 12))
    painter.press("Control+z")
    np.testing.assert_array_equal(painter.kernel_mask("shrink-undone"), start)

    painter.kernel_change("smooth")
    smoothed = painter.kernel_mask("smoothed")
    assert not smoothed[100, 100] and extent(smoothed) == (400, 400)  # the speck went, the square stayed
    np.testing.assert_array_equal(smoothed, smooth(start, 12))
    painter.press("Control+z")
    np.testing.assert_array_equal(painter.kernel_mask("smooth-undone"), start)
    painter.press("Control+Shift+z")
    np.testing.assert_array_equal(painter.kernel_mask("smooth-redone"), smoothed)
    assert notebook.run("painter.grow(5)\nprint(painter.mask_array()[500].sum())") == "410\n"
    painter.shot("smoothed")
