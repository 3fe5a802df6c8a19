"""MaskPainter in JupyterLab, used as a person would: strokes, keys, buttons, a tall image."""

from __future__ import annotations

import numpy as np
from PIL import Image

from tests.docs_pictures import keep_picture
from tests.utils.browser import in_both_frontends, keep_figures

from .painting import Painter, iou, painter_setup, stroke

SIZE = (1024, 1024)
BRUSH = 64
PAYLOAD_LIMIT = 8_000  # bytes for one stroke's mask at 1024 px (a 1-bit PNG)
CELLS = "() => window.jupyterapp.shell.currentWidget.content.widgets.length"


def test_stroke_eraser_undo_redo_and_payload(notebook, shots):
    notebook.run(painter_setup(brush=BRUSH))
    painter = Painter(notebook, shots)
    assert painter.kernel_link() == "heard"  # on a quiet page anywidget passes the kernel's messages on
    painted = stroke((200, 300), (820, 620), BRUSH, SIZE)
    painter.drag((200, 300), (820, 620))
    first = painter.kernel_mask("stroke")
    one_stroke = painter.sync_stats()
    assert iou(first, painted) >= 0.8, iou(first, painted)
    assert one_stroke["bytes"] <= PAYLOAD_LIMIT, one_stroke
    assert notebook.run("print(repr(painter))").startswith("MaskPainter(1024x1024, painted=")
    keep_picture("painter.png", painter.root.screenshot())  # the docs show the painter with its stroke

    painter.click("eraser")
    erased = stroke((620, 200), (420, 800), BRUSH, SIZE)
    painter.drag((620, 200), (420, 800))
    second = painter.kernel_mask("erased")
    assert iou(second, painted & ~erased) >= 0.8, iou(second, painted & ~erased)
    assert (second & erased).sum() < 0.05 * erased.sum()  # the eraser really unpainted its path
    painter.shot("erased")

    painter.click("undo")
    np.testing.assert_array_equal(painter.kernel_mask("undone"), first)
    painter.click("redo")
    np.testing.assert_array_equal(painter.kernel_mask("redone"), second)
    painter.click("clear")
    assert not painter.kernel_mask("cleared").any()
    empty = painter.sync_stats()
    painter.click("undo")
    np.testing.assert_array_equal(painter.kernel_mask("clear-undone"), second)
    keep_figures(shots, {"one stroke at 1024 px": one_stroke, "empty mask at 1024 px": empty})


@in_both_frontends
def test_keyboard_undo_redo_tools_and_size(notebook, shots):
    notebook.run(painter_setup(brush=BRUSH))
    painter = Painter(notebook, shots)
    painter.drag((100, 100), (900, 200))
    first = painter.kernel_mask("first")
    painter.drag((100, 800), (900, 700))
    second = painter.kernel_mask("second")

    painter.press("Control+z")
    np.testing.assert_array_equal(painter.kernel_mask("ctrl-z"), first)
    painter.press("Control+z")
    assert not painter.kernel_mask("ctrl-z-twice").any()
    painter.press("Control+Shift+z")
    np.testing.assert_array_equal(painter.kernel_mask("ctrl-shift-z"), first)
    painter.press("Control+y")
    np.testing.assert_array_equal(painter.kernel_mask("ctrl-y"), second)

    cells = notebook.page.evaluate(CELLS)
    painter.press("e", syncs=False)
    painter.root.locator('button[data-action="eraser"][aria-pressed="true"]').wait_for()
    painter.press("]", syncs=False)
    notebook.page.wait_for_function("el => el.querySelector('.ik-slider output').textContent !== '64 px'",
                                    arg=painter.root.element_handle())
    painter.press("b", syncs=False)
    painter.root.locator('button[data-action="brush"][aria-pressed="true"]').wait_for()
    painter.press("+", syncs=False)
    assert float(painter.root.get_attribute("data-zoom")) > 1
    painter.shot("zoomed")
    painter.press("0", syncs=False)
    assert painter.root.get_attribute("data-zoom") == "1.00"
    # The keys were the painter's: JupyterLab did not add a cell for B (its "insert below" key).
    assert notebook.page.evaluate(CELLS) == cells
    notebook.wait_output("print(painter.tool, painter.brush_size > 64)", "brush True\n")
    painter.shot("keys")


def test_controls_have_accessible_names_and_values(notebook, shots):
    notebook.run(painter_setup(brush=BRUSH))
    painter = Painter(notebook, shots)
    names = ["Brush", "Eraser", "Undo", "Redo", "Clear", "Invert", "Zoom out", "Zoom in", "Fit", "Fill", "Clean up"]
    for name in names:
        assert painter.root.get_by_role("button", name=name, exact=True).count() == 1, name
    # A slider's name is its label alone; its value is in aria-valuetext.
    size = painter.root.get_by_role("slider", name="Size", exact=True)
    assert size.get_attribute("aria-valuetext") == "64 px"
    assert painter.root.get_by_role("slider", name="Opacity", exact=True).get_attribute("aria-valuetext") == "50%"
    assert painter.root.get_by_role("application").get_attribute("aria-label").startswith("image to paint")
    assert painter.root.get_by_role("img", name="the painted mask").count() == 1
    assert painter.root.get_by_role("textbox", name="Fill with").count() == 1
    painter.root.get_by_label("Colour").fill("#00c8ff")
    notebook.wait_output("print(painter.mask_color)", "#00c8ff\n")
    painter.drag((300, 300), (700, 700))
    colour = painter.canvas.evaluate(
        "c => Array.from(c.getContext('2d').getImageData(c.width / 2, c.height / 2, 1, 1).data)")
    assert colour == [0, 200, 255, 255]
    painter.shot("cyan-mask")


def test_clean_up_and_fill_from_the_buttons_then_continue_on_the_result(notebook, shots):
    notebook.run(painter_setup(ratio="16:9", brush=BRUSH))
    painter = Painter(notebook, shots)
    assert painter.size == (1024, 576)
    painter.drag((400, 200), (600, 300))
    painter.click("clean-up")
    painter.root.locator("progress.ik-progress").wait_for(state="visible")  # shown while the edit runs
    painter.shot("cleaning-up")
    painter.wait_result(1)
    painter.root.locator("progress.ik-progress").wait_for(state="hidden")
    view = painter.root.locator(".ik-view").bounding_box()
    result = painter.root.locator("img.ik-result").bounding_box()
    assert result["width"] >= view["width"] - 1 and result["height"] >= view["height"] - 1, (view, result)
    assert result["x"] >= view["x"] + view["width"]  # beside the original, not under it
    assert painter.root.locator("figcaption").inner_text() == "result 1024×576"
    painter.shot("cleaned-up")
    assert notebook.run("print(painter.result.id != painter.source.id, painter.status == '')") == "True True\n"

    painter.root.get_by_label("Fill with").fill("a blue balloon")
    painter.root.get_by_label("Avoid").fill("text")
    painter.click("fill")
    painter.wait_result(2)
    filled = notebook.run("print(painter.result.id)").strip()
    painter.shot("filled")

    painter.click("continue")
    painter.page.wait_for_function(
        "el => el.dataset.ready === '1' && !el.querySelector('.ik-panes').classList.contains('ik-has-result')",
        arg=painter.root.element_handle())
    assert notebook.run("print(painter.source.id, len(painter.history), painter.result)") == f"{filled} 2 None\n"
    # The mask and its history stayed: undo still takes the stroke back.
    assert painter.kernel_mask("kept").any()
    painter.press("Control+z")
    assert not painter.kernel_mask("undone-after-continue").any()
    painter.shot("continued")


def test_a_failed_edit_says_why_and_stops_the_progress(notebook, shots):
    notebook.run(painter_setup(brush=BRUSH))
    painter = Painter(notebook, shots)
    painter.click("clean-up")  # nothing painted: refused before anything is sent
    painter.page.wait_for_function("el => el.querySelector('.ik-status').textContent.includes('The mask is empty')",
                                   arg=painter.root.element_handle())
    painter.root.locator("progress.ik-progress").wait_for(state="hidden")
    assert painter.root.locator('button[data-action="clean-up"]').is_enabled()
    painter.shot("refused")


def test_a_portrait_image_fits_the_window(notebook, shots):
    notebook.page.set_viewport_size({"width": 1400, "height": 900})
    try:
        notebook.run(painter_setup(ratio="9:16", brush=BRUSH))
        painter = Painter(notebook, shots)
        assert painter.size == (576, 1024)
        view = painter.root.locator(".ik-view")
        view.scroll_into_view_if_needed()
        box = view.bounding_box()
        assert box["height"] <= 900 * 0.75 + 1 and abs(box["width"] / box["height"] - 576 / 1024) < 0.01, box
        assert 0 <= box["y"] and box["y"] + box["height"] <= 900, box  # wholly in the window
        painter.drag((100, 100), (476, 924))  # strokes still land where drawn on a scaled view
        expected = stroke((100, 100), (476, 924), BRUSH, (576, 1024))
        assert iou(painter.kernel_mask("portrait"), expected) >= 0.8
        painter.shot("portrait")
    finally:
        notebook.page.set_viewport_size({"width": 1400, "height": 1000})


def test_zoom_with_the_wheel_pan_and_paint_in_detail(notebook, shots):
    notebook.run(painter_setup(brush=8))
    painter = Painter(notebook, shots)
    page, view = notebook.page, painter.root.locator(".ik-view").bounding_box()
    page.mouse.move(view["x"] + view["width"] / 2, view["y"] + view["height"] / 2)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -600)  # Ctrl+wheel, as a trackpad pinch arrives: zoom in at the pointer
    page.keyboard.up("Control")
    page.wait_for_function("el => Number(el.dataset.zoom) > 4", arg=painter.root.element_handle())
    zoomed = painter.picture.bounding_box()
    page.mouse.wheel(40, 0)  # zoomed in, the plain wheel pans
    page.wait_for_function("x => document.querySelector('.ik-painter img.ik-image').getBoundingClientRect().x !== x",
                           arg=zoomed["x"])
    painter.drag((500, 500), (540, 520), steps=8)  # a fine stroke, well inside the zoomed view
    detail = painter.kernel_mask("detail")
    assert iou(detail, stroke((500, 500), (540, 520), 8, SIZE)) >= 0.8
    painter.shot("detail")
    before = painter.picture.bounding_box()
    page.mouse.move(view["x"] + 200, view["y"] + 200)
    page.mouse.down(button="middle")  # a middle-button drag pans and paints nothing
    page.mouse.move(view["x"] + 300, view["y"] + 260, steps=5)
    page.mouse.up(button="middle")
    moved = painter.picture.bounding_box()
    assert (round(moved["x"] - before["x"]), round(moved["y"] - before["y"])) == (100, 60)
    np.testing.assert_array_equal(painter.kernel_mask("after-pan"), detail)
    painter.click("fit")
    assert painter.root.get_attribute("data-zoom") == "1.00"


def test_a_mask_set_in_python_shows_undoes_and_saves(notebook, shots):
    notebook.run(painter_setup(brush=BRUSH))
    painter = Painter(notebook, shots)
    square = np.zeros(SIZE[::-1], bool)
    square[200:600, 300:700] = True
    # Red paint on transparent RGBA, as an editor saves it: the alpha marks the paint.
    notebook.run("import numpy as np\nfrom PIL import Image\nrgba = np.zeros((1024, 1024, 4), np.uint8)\n"
                 "rgba[200:600, 300:700] = (255, 0, 0, 255)")
    painter.set_mask('Image.fromarray(rgba, "RGBA")')
    centre = painter.canvas.evaluate(  # the square's centre, (500, 400), on the page's canvas
        "c => Array.from(c.getContext('2d').getImageData(c.width * 500 / 1024, c.height * 400 / 1024, 1, 1).data)")
    assert centre[3] == 255, centre
    painter.drag((100, 900), (900, 900))
    both = painter.kernel_mask("square-and-stroke")
    assert iou(both, square | stroke((100, 900), (900, 900), BRUSH, SIZE)) >= 0.9
    painter.press("Control+z")
    np.testing.assert_array_equal(painter.kernel_mask("stroke-undone"), square)
    painter.press("Control+z")  # the mask set in Python was one undo step
    assert not painter.kernel_mask("set-undone").any()
    painter.press("Control+Shift+z")
    saved = shots / "saved-mask.png"
    assert notebook.run(f"print(painter.save_mask({str(saved)!r}).name)") == "saved-mask.png\n"
    np.testing.assert_array_equal(np.asarray(Image.open(saved)) == 255, square)
    refused = notebook.run("try:\n    painter.mask = np.zeros((100, 200), bool)\nexcept ValueError as e:\n    print(e)")
    assert refused.startswith("the mask is 200x100 but the image is 1024x1024"), refused
    painter.shot("mask-in-and-out")


def test_arrow_keys_move_every_slider(notebook, shots):
    notebook.run(painter_setup(brush=BRUSH))
    painter = Painter(notebook, shots)
    sliders = painter.root.get_by_role("slider")
    names = [sliders.nth(i).get_attribute("aria-label") for i in range(sliders.count())]
    assert "Size" in names and "Opacity" in names, names
    for name in names:
        slider = painter.root.get_by_role("slider", name=name, exact=True)
        before = slider.get_attribute("aria-valuetext")
        slider.focus()
        notebook.page.keyboard.press("ArrowRight")
        notebook.page.keyboard.press("ArrowRight")
        notebook.page.wait_for_function("([s, v]) => s.getAttribute('aria-valuetext') !== v",
                                        arg=[slider.element_handle(), before])
        notebook.page.keyboard.press("ArrowLeft")
        notebook.page.wait_for_function("s => s.value !== s.min", arg=slider.element_handle())
    notebook.wait_output("print(painter.brush_size, round(painter.opacity, 2))", "65 0.55\n")
    painter.shot("sliders-moved")
