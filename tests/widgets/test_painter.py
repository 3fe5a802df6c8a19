"""MaskPainter without a browser: traits, the mask's forms, callbacks, edits and errors."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from PIL import Image
from traitlets import TraitError

import imagekit
from imagekit.widgets import MaskPainter
from imagekit.widgets.mask_ops import box
from tests.helpers import SIZE
from tests.utils.users import make_user


def browser_png(mask: np.ndarray, alpha: int = 255) -> memoryview:
    """What the browser sends: an RGBA PNG whose alpha marks the paint, as a memoryview."""
    rgba = np.zeros((*mask.shape, 4), np.uint8)
    rgba[mask] = (255, 42, 90, alpha)
    out = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(out, format="PNG")
    return memoryview(out.getvalue())


@pytest.fixture
def painter() -> MaskPainter:
    return MaskPainter(Image.new("RGB", (120, 80), "navy"))


def test_starts_empty_at_the_image_size(painter):
    assert painter.mask.mode == "L" and painter.mask.size == (120, 80)
    assert painter.mask_array().shape == (80, 120) and not painter.mask_array().any()
    assert (painter.width, painter.height, painter.tool) == (120, 80, "brush")
    assert repr(painter) == "MaskPainter(120x80, painted=0.0%, tool='brush')"


def test_accepts_a_path_and_keeps_its_bytes(tmp_path):
    Image.new("RGB", (64, 48), "red").save(tmp_path / "a.jpg")
    painter = MaskPainter(tmp_path / "a.jpg")
    assert painter.image_data == (tmp_path / "a.jpg").read_bytes() and painter.source is None
    with pytest.raises(TypeError):
        MaskPainter(42)


def test_browser_mask_arrives_as_memoryview_and_is_thresholded(painter):
    seen = []
    painter.on_mask(lambda p: seen.append(p.mask_array().sum()))
    mask = np.zeros((80, 120), bool)
    mask[10:30, 20:60] = True
    soft = np.zeros((80, 120), bool)
    soft[50:60, 0:10] = True  # antialiased edge pixels: alpha below one half is not paint
    painter.set_state({"mask_png": browser_png(mask), "revision": 1})
    painter.set_state({"mask_png": browser_png(mask | soft, alpha=100), "revision": 2})
    assert seen == [800, 0]
    painter.set_state({"mask_png": browser_png(mask), "revision": 3})
    assert np.array_equal(painter.mask_array(), mask) and painter.received == 3


def test_a_one_bit_png_from_the_browser_is_read_as_white_painted(painter):
    mask = np.zeros((80, 120), bool)
    mask[5:25, 30:90] = True
    out = io.BytesIO()
    Image.fromarray(mask).save(out, format="PNG")  # what the browser sends: bit depth 1, white = paint
    painter.set_state({"mask_png": memoryview(out.getvalue()), "revision": 1})
    assert np.array_equal(painter.mask_array(), mask)


def test_python_sends_its_mask_as_one_bit(painter):
    painter.mask = np.eye(80, 120, dtype=bool)
    assert Image.open(io.BytesIO(painter.mask_png)).mode == "1"


def test_mask_colour_is_checked(painter):
    painter.mask_color = "#00C8FF"
    assert painter.mask_color == "#00c8ff"
    with pytest.raises(TraitError, match="#rrggbb"):
        painter.mask_color = "cyan"


def test_python_sets_clears_and_inverts(painter):
    mask = np.zeros((80, 120), bool)
    mask[:40] = True
    painter.mask = mask
    assert painter.revision == 1 and np.array_equal(painter.mask_array(), mask)
    assert repr(painter) == "MaskPainter(120x80, painted=50.0%, tool='brush')"
    painter.invert()
    assert np.array_equal(painter.mask_array(), ~mask)
    painter.mask = Image.fromarray(mask.astype(np.uint8) * 255)
    assert np.array_equal(painter.mask_array(), mask)
    painter.clear()
    assert not painter.mask_array().any() and painter.revision == 4
    with pytest.raises(ValueError, match="the mask is 10x20 but the image is 120x80"):
        painter.mask = np.zeros((20, 10), bool)
    with pytest.raises(ValueError, match="the mask is 60x40 but the image is 120x80"):
        painter.mask = Image.new("L", (60, 40), 255)  # never stretched to fit


def test_mask_from_any_mode_and_saved(painter, tmp_path):
    mask = np.zeros((80, 120), bool)
    mask[10:50, 30:70] = True
    rgba = np.zeros((80, 120, 4), np.uint8)
    rgba[mask] = (255, 0, 0, 255)  # red paint on transparent: the alpha marks it, not the grey
    painter.mask = Image.fromarray(rgba, "RGBA")
    assert np.array_equal(painter.mask_array(), mask)
    painter.mask = mask.astype(np.float32) * 0.9
    assert np.array_equal(painter.mask_array(), mask)
    path = painter.save_mask(tmp_path / "mask.png")
    saved = Image.open(path)
    assert saved.mode == "L" and saved.size == (120, 80)
    assert np.array_equal(np.asarray(saved) == 255, mask) and set(np.unique(saved)) == {0, 255}


def test_brush_size_defaults_to_the_image_and_stays_positive(painter):
    assert painter.brush_size == 4
    assert MaskPainter(Image.new("RGB", (1024, 512)), brush_size=50).brush_size == 50
    painter.brush_size = 0  # the page's slider and Python alike: never below 1
    assert painter.brush_size == 1
    for wrong in (0, -5, 2.5, "big"):  # said at once, not replaced by a default
        with pytest.raises(ValueError, match=rf"brush_size is the brush's diameter in image pixels, at least 1, "
                                             rf"not {re.escape(repr(wrong))}"):
            MaskPainter(Image.new("RGB", (64, 64)), brush_size=wrong)


def test_what_is_not_an_image_or_not_a_box_is_one_line(painter, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(notes))} is not an image imagekit can read"):
        MaskPainter(notes)
    with pytest.raises(TypeError, match=r"got int \(an image id: give ik.image\(id\)\)"):
        MaskPainter(7)
    for wrong in ((1, 2, 3), "40,40,200,200", (None, 0, 5, 5)):
        with pytest.raises(ValueError, match=r"a box is \(left, top, right, bottom\) in image pixels"):
            painter.select_box(wrong)
    with pytest.raises(ValueError, match=r"holds no pixel of the 120x80 image"):
        painter.select_box((5000, 5000, 6000, 6000))
    with pytest.raises(ValueError, match="a whole number of pixels, 0 or more, got 'x'"):
        painter.grow("x")
    assert painter.mask_array().sum() == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_edits_need_an_image_on_the_service(painter):
    assert not painter.editable and painter.history == []
    with pytest.raises(ValueError, match="Image handle"):
        painter.clean_up()
    with pytest.raises(ValueError, match="no result"):
        painter.continue_on_result()


def test_an_edit_in_the_background_then_continue_on_its_result(sandbox):
    with imagekit.Client(sandbox.url, make_user(sandbox)[1]) as ik:
        image = ik.create("a red fox", style=ik.styles()[0].style_id, count=1, ratio="16:9").images[0]
        painter = MaskPainter(image)
        assert painter.editable and painter.history == [image]
        mask = np.zeros((SIZE * 9 // 16, SIZE), bool)
        mask[50:100, 150:250] = True
        painter.mask = mask
        busy, sent = [], []
        painter.observe(lambda change: busy.append(change["new"]), "busy")
        original_send = painter._send
        painter._send = lambda msg, buffers=None: (  # what the page receives, message by message
            sent.append(set(msg["state"]) | {path[0] for path in msg["buffer_paths"]}), original_send(msg, buffers))
        cleaned = painter.run_in_background(painter.clean_up).result(timeout=60)
        assert busy[0] is True and busy[-1] is False and painter.result is cleaned
        # the result, its status and the freed buttons arrive together: no moment shows the work done without it
        assert [keys for keys in sent if "busy" in keys][-1] == {"result_data", "status", "busy"}
        shown = painter.result_data
        assert painter.continue_on_result() is cleaned
        assert painter.source is cleaned and painter.history == [image, cleaned] and painter.result is None
        assert painter.image_data == shown and painter.result_data == b""
        assert np.array_equal(painter.mask_array(), mask)  # the mask stays for the next edit
        painter.clear()
        assert painter.run_in_background(painter.clean_up).result(timeout=60) is None  # shown, not raised
        assert painter.status.startswith("The mask is empty: paint what to clean up") and not painter.busy
        painter.close()


def test_clean_up_and_fill_show_the_result(sandbox):
    with imagekit.Client(sandbox.url, make_user(sandbox)[1]) as ik:
        image = ik.create("a red fox", style=ik.styles()[0].style_id, count=1).images[0]
        painter = MaskPainter(image)
        results = []
        painter.on_result(results.append)
        mask = np.zeros((SIZE, SIZE), bool)
        mask[150:250, 150:300] = True
        painter.mask = mask
        cleaned = painter.clean_up()
        filled = painter.fill("a blue ball")
        assert results == [cleaned, filled] and painter.result is filled
        assert Image.open(io.BytesIO(painter.result_data)).size == (SIZE, SIZE)
        painter.clear()
        credits = (ik.me().model_dump(), ik.usage().model_dump())
        for edit in (painter.clean_up, lambda: painter.fill("a kite")):
            with pytest.raises(ValueError, match="The mask is empty"):  # refused here, before sending
                edit()
        assert painter.status.startswith("The mask is empty") and painter.result is filled
        assert (ik.me().model_dump(), ik.usage().model_dump()) == credits  # nothing charged, no edit counted


def test_select_box_and_polygon_add_and_subtract(painter):
    painter.select_box((10, 20, 50, 60))
    expected = np.zeros((80, 120), bool)
    expected[20:60, 10:50] = True
    assert np.array_equal(painter.mask_array(), expected) and painter.revision == 1
    painter.select_box((30, 0, 120, 40), subtract=True)
    expected[:40, 30:] = False
    assert np.array_equal(painter.mask_array(), expected)
    painter.select_polygon([(100, 10), (110, 10), (110, 20), (100, 20)])
    expected[10:20, 100:110] = True
    assert np.array_equal(painter.mask_array(), expected) and painter.revision == 3
    assert painter.shape == "stroke"


def test_select_subject_is_paid_once_an_image_and_priced_before(sandbox, tmp_path):
    with imagekit.Client(sandbox.url, make_user(sandbox)[1], ledger=tmp_path / "ledger.sqlite") as ik:
        image = ik.create("a friendly robot on the beach", style=ik.styles()[0].style_id, count=1).images[0]
        painter = MaskPainter(image)
        price = next(cost.credit for cost in ik.me().plan.credit_cost_info if cost.type == "removeBg")
        assert painter.subject_price == f"{price:g} credit{'' if price == 1 else 's'}"  # 1 credit here
        before = ik.usage().current_credit
        painter.select_subject()
        subject = painter.mask_array()
        assert 0.02 < subject.mean() < 0.98 and painter.subject_price == "free" and painter.status == ""
        assert ik.usage().current_credit == before - price
        painter.clear()
        painter.select_box((0, 0, 10, 10))
        painter.select_subject()  # the kept cut-out: free
        assert np.array_equal(painter.mask_array(), subject | box((SIZE, SIZE), (0, 0, 10, 10)))
        painter.select_subject(subtract=True)
        assert np.array_equal(painter.mask_array(), box((SIZE, SIZE), (0, 0, 10, 10)) & ~subject)
        assert ik.usage().current_credit == before - price
        paid = [entry for entry in ik.ledger.entries() if entry.operation == "removeBg"]
        assert [(entry.source_id, entry.credits) for entry in paid] == [(image.id, price)]
        painter.close()


def test_before_and_after_starts_off_at_the_middle(painter):
    assert (painter.compare, painter.divider) == (False, 0.5)
    with pytest.raises(TraitError):
        painter.divider = 1.5
