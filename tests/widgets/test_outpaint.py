"""Outpainting from the widgets without a browser: the frame's traits, its price, the edit, Continue."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

import imagekit
from imagekit.widgets import MaskPainter, OutpaintFramer
from tests.helpers import SIZE
from tests.utils.browser import served_edit
from tests.utils.users import make_user


def test_the_frame_starts_as_the_image_and_follows_keys_and_ratios():
    framer = OutpaintFramer(Image.new("RGB", (400, 300), "navy"))
    assert (framer.canvas, framer.location, framer.size) == ([400, 300], [0, 0], [400, 300])
    assert repr(framer) == "OutpaintFramer(400x300, canvas=(400, 300), location=(0, 0), size=(400, 300))"
    framer._browser_asked(framer, {"event": "extend", "left": 64}, [])  # what an arrow key sends
    assert (framer.canvas, framer.location) == ([464, 300], [64, 0])
    framer._browser_asked(framer, {"event": "ratio", "ratio": "1:1"}, [])
    assert (framer.canvas, framer.location) == ([464, 464], [64, 82])
    assert framer.frame_problem == "" and not framer.editable and framer.outpaint_price == ""
    framer.canvas = [60, 464]  # as a typed size arrives
    assert framer.frame_problem == "the canvas must be 100 to 8192 px a side, got 60×464"
    with pytest.raises(ValueError, match="Image handle"):
        framer.outpaint((800, 300))
    framer.close()


def test_outpaint_runs_with_the_frame_and_charges_its_price(either_sandbox):
    with imagekit.Client(either_sandbox.url, make_user(either_sandbox)[1]) as ik:
        image = ik.create("a red fox", style=ik.styles()[0].style_id, count=1, ratio="16:9").images[0]
        framer = OutpaintFramer(image)
        price = next(cost.credit for cost in ik.me().plan.credit_cost_info if cost.type == "outpaint")
        assert framer.outpaint_price == f"{price:g} credit{'' if price == 1 else 's'}"
        before = ik.usage().current_credit
        with pytest.raises(ValueError, match="does not overlap"):  # refused before any request
            framer.outpaint((1280, 576), (1280, 0))
        framer.canvas, framer.location = [1280, 700], [-20, 100]  # a frame typed or dragged in the page
        framer._browser_asked(framer, {"event": "edit", "op": "outpaint"}, [])  # the Outpaint button
        framer._pool.submit(lambda: None).result(timeout=60)  # the edit it queued has finished
        assert framer.result is not None and framer.status == "" and not framer.busy
        assert served_edit(either_sandbox, framer.result.id) == {
            "params": {"canvasSize": [1280, 700], "originalImageSize": [SIZE, SIZE * 9 // 16],
                       "originalImageLocation": [-20, 100]},
            "size": (1280, 700), "credits": price}
        assert Image.open(io.BytesIO(framer.result_data)).size == (1280, 700)
        assert ik.usage().current_credit == before - price
        assert framer.continue_on_result() is framer.history[-1]
        assert (framer.width, framer.height, framer.canvas, framer.location) == (1280, 700, [1280, 700], [0, 0])
        framer.close()


def test_the_painter_outpaints_and_continues_with_an_empty_mask(either_sandbox):
    with imagekit.Client(either_sandbox.url, make_user(either_sandbox)[1]) as ik:
        image = ik.create("a red fox", style=ik.styles()[0].style_id, count=1).images[0]
        painter = MaskPainter(image)
        assert painter.mode == "mask" and painter.outpaint_price
        painter.select_box((0, 0, 100, 100))
        result = painter.outpaint(canvas=(1024, 1280), location=(0, -64), size=(1024, 1024))
        assert result.meta().resolution == "1024x1280" and painter.result is result
        assert (painter.canvas, painter.location) == ([1024, 1280], [0, -64])
        assert served_edit(either_sandbox, result.id)["params"] == {
            "canvasSize": [1024, 1280], "originalImageSize": [1024, 1024], "originalImageLocation": [0, -64]}
        painter.continue_on_result()
        assert (painter.width, painter.height) == (1024, 1280) and not painter.mask_array().any()
        assert painter.mask.size == (1024, 1280) and painter.source is result
        with pytest.raises(ValueError, match="the canvas must be 100 to 8192 px a side"):
            painter.outpaint(canvas=(9000, 1280))
        assert np.asarray(painter.mask).shape == (1280, 1024)
        painter.close()
