"""The outpaint frame's arithmetic: dragged edges, ratios, and the service's limits."""

from __future__ import annotations

import importlib

import pytest

from imagekit.widgets import framing
from imagekit.widgets.framing import Frame, check, extend, problem, start, with_ratio

IMAGE = start((1024, 768))


def test_limits_are_the_services():
    service = importlib.import_module("imagekit.sandbox.engines.edits.outpaint")  # the package's name is a function
    assert framing.MAX_SIDE == service.MAX_OUTPUT_SIDE and framing.MAX_PLACED_SIDE == service.MAX_PLACED_SIDE


def test_a_new_frame_adds_nothing():
    assert IMAGE == Frame((1024, 768), (0, 0), (1024, 768)) and problem(*IMAGE) == ""


@pytest.mark.parametrize(("sides", "expected"), [
    ({"right": 256}, Frame((1280, 768), (0, 0), (1024, 768))),
    ({"left": 256}, Frame((1280, 768), (256, 0), (1024, 768))),  # the original moves right on the canvas
    ({"left": 100, "top": 50, "right": 20, "bottom": 30}, Frame((1144, 848), (100, 50), (1024, 768))),
    ({"left": -200}, Frame((824, 768), (-200, 0), (1024, 768))),  # inward: the original sticks out, location < 0
    ({"top": -700}, Frame((1024, 100), (0, -668), (1024, 768))),  # stops at the 100 px floor
    ({"right": 10_000}, Frame((8192, 768), (0, 0), (1024, 768))),  # and at 8192 px
    ({"left": -2000}, Frame((100, 768), (-924, 0), (1024, 768))),
])
def test_extend_moves_edges_within_the_limits(sides, expected):
    assert extend(IMAGE, **sides) == expected
    assert problem(*expected) == ""


def test_extend_never_loses_the_original():
    off = Frame((300, 300), (-1000, 0), (1024, 768))  # the canvas over the original's right part
    moved = extend(off, right=-250)  # would end left of the original's right edge... keeps 100 px
    assert moved == Frame((100, 300), (-1000, 0), (1024, 768)) and problem(*moved) == ""
    far = Frame((200, 200), (-1023, 0), (1024, 768))  # one column of the original on the canvas
    assert extend(far, left=-500) == far  # the left edge cannot pass it


@pytest.mark.parametrize(("ratio", "expected"), [
    ("16:9", Frame((1365, 768), (170, 0), (1024, 768))),
    ("1:1", Frame((1024, 1024), (0, 128), (1024, 768))),
    ("9:16", Frame((1024, 1820), (0, 526), (1024, 768))),
])
def test_a_ratio_grows_the_canvas_about_its_centre(ratio, expected):
    assert with_ratio(IMAGE, ratio) == expected


def test_a_ratio_too_large_is_the_largest_of_that_ratio():
    frame = with_ratio(Frame((8000, 4000), (0, 0), (8000, 4000)), "1:4")
    assert frame.canvas == (2048, 8192) and frame.location == (-2976, 2096)
    with pytest.raises(ValueError, match="16:9"):
        with_ratio(IMAGE, "wide")


@pytest.mark.parametrize(("frame", "says"), [
    (((60, 768), (0, 0), (1024, 768)), "the canvas must be 100 to 8192 px a side, got 60×768"),
    (((9000, 768), (0, 0), (1024, 768)), "got 9000×768"),
    (((1024, 768), (0, 0), (0, 768)), "the original's size must be 1 to 32768 px a side, got 0×768"),
    (((1024, 768), (1024, 0), (1024, 768)), "the original (1024×768 at 1024, 0) does not overlap the 1024×768 canvas"),
    (((1024, 768), (-1024, 0), (1024, 768)), "does not overlap"),
    (((1024.5, 768), (0, 0), (1024, 768)), "two whole numbers"),
    (((1024,), (0, 0), (1024, 768)), "two whole numbers"),
])
def test_frames_the_service_refuses_are_named(frame, says):
    assert says in problem(*frame)
    with pytest.raises(ValueError, match="cannot outpaint"):
        check(*frame)


def test_check_takes_whole_floats_as_json_sends_them():
    assert check([1280.0, 768], (-10, 0.0), [1024, 768]) == Frame((1280, 768), (-10, 0), (1024, 768))
