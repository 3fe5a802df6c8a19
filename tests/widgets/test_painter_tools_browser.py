"""MaskPainter's selection tools in JupyterLab, by mouse and keys, each one undo step, compared with the
kernel's mask: grow, shrink and smooth; Box and Lasso, adding and (Alt or the eraser) subtracting."""

from __future__ import annotations

import numpy as np
from PIL import Image

from imagekit.widgets.mask_ops import box, grow, polygon, shrink, smooth
from tests.utils.browser import keep_figures

from .painting import Painter, iou, painter_setup, settled_box

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


def shape_drag(painter, points, alt: bool = False) -> None:
    """Press at the first point, move through the rest, release (Alt held if asked); waits for the kernel."""
    if alt:
        painter.page.keyboard.down("Alt")
    try:
        painter.drag(*points, steps=12)
    finally:
        if alt:
            painter.page.keyboard.up("Alt")


def click_points(painter, points) -> None:
    """Click each point (image pixels) on the painter's view, one click apiece."""
    box = settled_box(painter.picture)
    scale = box["width"] / painter.size[0]
    for x, y in points:
        painter.page.mouse.click(box["x"] + x * scale, box["y"] + y * scale)


def test_box_and_lasso_add_and_subtract_each_one_undo_step(notebook, shots):
    notebook.run(painter_setup(brush=16))
    painter = Painter(notebook, shots)
    painter.click("box")
    painter.root.locator('button[data-action="box"][aria-pressed="true"]').wait_for()
    shape_drag(painter, [(200, 300), (600, 700)])
    boxed = painter.kernel_mask("box")
    expected = box(SIZE, (200, 300, 600, 700))
    figures = {"box IoU": iou(boxed, expected)}
    assert figures["box IoU"] >= 0.98, figures
    # Its undo entry is the bands of rows it covers (7 of 64 rows, 129 bytes a row), not a full copy.
    figures["box undo bytes"] = int(painter.root.get_attribute("data-history-bytes"))
    assert figures["box undo bytes"] == 7 * 64 * (1 + 1024 // 8), figures
    painter.shot("box")

    shape_drag(painter, [(300, 400), (500, 600)], alt=True)  # Alt: the box takes away
    holed = painter.kernel_mask("box-minus-box")
    expected &= ~box(SIZE, (300, 400, 500, 600))
    figures["box subtracted with Alt IoU"] = iou(holed, expected)
    assert iou(holed, expected) >= 0.98, figures

    painter.press("l", syncs=False)  # the Lasso from the keyboard, then a freehand drag
    painter.root.locator('button[data-action="lasso"][aria-pressed="true"]').wait_for()
    triangle = [(700, 100), (950, 400), (700, 400)]
    shape_drag(painter, [*triangle, triangle[0]])
    lassoed = painter.kernel_mask("lasso")
    expected |= polygon(SIZE, triangle)
    figures["freehand lasso IoU"] = iou(lassoed, expected)
    assert iou(lassoed, expected) >= 0.98, figures
    painter.press("Control+z")  # one shape, one undo step
    np.testing.assert_array_equal(painter.kernel_mask("lasso-undone"), holed)
    painter.press("Control+Shift+z")
    np.testing.assert_array_equal(painter.kernel_mask("lasso-redone"), lassoed)

    painter.press("e", syncs=False)  # the eraser with the Lasso: clicked points, closed with Enter
    painter.root.locator('button[data-action="eraser"][aria-pressed="true"]').wait_for()
    cut = [(150, 250), (450, 250), (450, 450), (150, 450)]
    click_points(painter, cut)
    painter.press("Enter")
    erased = painter.kernel_mask("lasso-erased")
    expected &= ~polygon(SIZE, cut)
    figures["clicked lasso erased IoU"] = iou(erased, expected)
    assert iou(erased, expected) >= 0.98, figures
    painter.shot("lasso-erased")

    painter.press("b", syncs=False)
    painter.press("l", syncs=False)  # clicked points closed on the first point, then Escape cancels one
    star = [(100, 800), (300, 750), (250, 950)]
    synced = painter.synced
    click_points(painter, [*star, (102, 802)])
    painter.wait_synced(synced + 1)
    closed = painter.kernel_mask("lasso-closed")
    expected |= polygon(SIZE, star)
    figures["clicked lasso closed on its first point IoU"] = iou(closed, expected)
    assert iou(closed, expected) >= 0.98, figures
    click_points(painter, [(800, 800), (900, 800), (900, 900)])
    painter.press("Escape", syncs=False)
    painter.root.locator(".ik-view:not(.ik-shaping)").wait_for()
    np.testing.assert_array_equal(painter.kernel_mask("cancelled"), closed)

    # From Python: one undo step each in the page too.
    painter.wait_loaded(int(notebook.run("painter.select_box((0, 0, 100, 100))\nprint(painter.revision)")))
    np.testing.assert_array_equal(painter.kernel_mask("python-box"), closed | box(SIZE, (0, 0, 100, 100)))
    painter.press("Control+z")
    np.testing.assert_array_equal(painter.kernel_mask("python-box-undone"), closed)
    keep_figures(shots, {key: round(value, 4) for key, value in figures.items()})
    painter.shot("shapes")


def test_subject_priced_before_the_click_recorded_and_free_the_second_time(notebook, shots):
    notebook.run(painter_setup(prompt="a friendly robot on the beach", brush=16))
    painter = Painter(notebook, shots)
    price = notebook.run("price = next(c.credit for c in ik.me().plan.credit_cost_info if c.type == 'removeBg')\n"
                         "print(f'{price:g}')").strip()
    subject = painter.root.get_by_role("button", name="Subject", exact=True)
    assert subject.inner_text() == f"Subject · {price} credit{'' if price == '1' else 's'}"  # before the click
    balance = notebook.run("print(ik.usage().current_credit)")

    revision = int(painter.root.get_attribute("data-loaded") or 0)
    subject.click()
    painter.wait_loaded(revision + 1)
    found = painter.kernel_mask("subject")
    assert 0.02 < found.mean() < 0.98
    painter.root.get_by_role("button", name="Subject", exact=True).filter(has_text="free").wait_for()
    painter.shot("subject")
    spent = notebook.run("print(ik.usage().current_credit)\n"
                         "print([(e.credits, e.source_id == image.id) for e in ik.ledger.entries()"
                         " if e.operation == 'removeBg' and e.source_id == image.id])")
    assert spent == f"{float(balance) - float(price):g}\n[({float(price)}, True)]\n", spent

    painter.page.keyboard.down("Alt")  # Alt: the subject taken away; the kept cut-out makes it free
    try:
        subject.click()
    finally:
        painter.page.keyboard.up("Alt")
    painter.wait_loaded(revision + 2)
    assert not painter.kernel_mask("subject-taken-away").any()
    painter.press("Control+z")
    np.testing.assert_array_equal(painter.kernel_mask("take-away-undone"), found)
    painter.press("Control+z")
    assert not painter.kernel_mask("subject-undone").any()
    assert notebook.run("print(ik.usage().current_credit)") == spent.splitlines()[0] + "\n"  # not charged again
    expected = notebook.run(
        "import io\nfrom PIL import Image as P\n"
        "alpha = P.open(io.BytesIO(image.remove_bg().read('png'))).convert('RGBA').getchannel('A')\n"
        f"alpha.point(lambda v: 255 if v >= 128 else 0).save({str(shots / 'alpha.png')!r})")
    assert expected == ""
    np.testing.assert_array_equal(found, np.asarray(Image.open(shots / "alpha.png")) > 0)
