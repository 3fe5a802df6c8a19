"""The widgets' pictures for views without widgets: in the mime bundle beside the live view, and
``snapshot()`` for a cell. (nbconvert's HTML of the committed notebooks: test_static_views_browser.py.)"""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

import imagekit
from imagekit.widgets import Gallery, MaskPainter, OutpaintFramer
from tests.utils.users import make_user

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def bundled_picture(widget) -> Image.Image:
    """The JPEG a widget's mime bundle carries, checked to sit beside the live view and the text."""
    data, metadata = widget._repr_mimebundle_()
    assert {WIDGET_VIEW, "text/plain", "image/jpeg"} <= set(data) and "text/html" not in data
    picture = Image.open(io.BytesIO(base64.b64decode(data["image/jpeg"])))
    assert picture.format == "JPEG"
    return picture


def close(a: Image.Image, b: Image.Image) -> bool:
    """Equal but for JPEG's losses (which average out over 8x8 blocks, even on a noisy texture)."""
    if a.size != b.size:
        return False
    a, b = (picture.convert("RGB").reduce(8) if min(picture.size) >= 8 else picture.convert("RGB") for picture in (a, b))
    return np.abs(np.asarray(a, int) - np.asarray(b, int)).mean() < 3


def test_the_painter_shows_its_mask_over_the_image_at_most_max_view_wide():
    painter = MaskPainter(Image.new("RGB", (1280, 720), (40, 90, 160)), mask_color="#ff0000", opacity=1.0)
    painter.select_box((0, 0, 640, 720))  # the left half
    picture = painter.snapshot()
    assert picture.size == (640, 360)  # max_view (640) wide, the image's ratio
    assert picture.getpixel((100, 180)) == (255, 0, 0) and picture.getpixel((540, 180)) == (40, 90, 160)
    painter.opacity = 0.5
    assert picture.getpixel((100, 180)) != painter.snapshot().getpixel((100, 180))
    assert close(bundled_picture(painter), painter.snapshot())
    assert len(painter._repr_mimebundle_()[0]["image/jpeg"]) < 40_000  # JPEG: small enough for a notebook


def test_an_empty_mask_shows_the_image_alone():
    image = Image.new("RGB", (200, 100), (200, 30, 30))
    assert close(MaskPainter(image).snapshot(), image)


def test_the_result_shows_beside_the_original(sandbox):
    with imagekit.Client(sandbox.url, make_user(sandbox)[1]) as ik:
        image = ik.create("a red fox", style=ik.styles()[0].style_id, count=1, ratio="16:9").images[0]
        painter = MaskPainter(image)
        painter.select_box((100, 100, 300, 200))
        painter.clean_up()
        picture = painter.snapshot()
        width = min(640, painter.width)
        height = round(painter.height * width / painter.width)
        assert picture.size == (2 * width + 8, height)  # the original and the result, 8 px apart
        assert close(bundled_picture(painter), picture)
        framer = OutpaintFramer(image)
        assert bundled_picture(framer).size == (width, height)  # a frame that adds nothing: the image
        painter.close()
        framer.close()


def test_a_frame_shows_the_image_on_its_new_canvas_the_added_area_checkered():
    blue = (40, 90, 160)
    framer = OutpaintFramer(Image.new("RGB", (400, 300), blue))
    framer.use_ratio("16:9")  # a 533x300 canvas, the image in its middle
    framed = framer.snapshot()
    assert framed.size == (533, 300) and close(bundled_picture(framer), framed)
    assert framed.getpixel((266, 150)) == blue and framed.getpixel((66 + 3, 150)) == blue
    left = [framed.getpixel((x, 5)) for x in (5, 17)]  # the added strip on the left: a checkerboard
    assert blue not in left and left[0] != left[1] and all(min(colour) > 200 for colour in left)
    painter = MaskPainter(Image.new("RGB", (400, 300), blue))
    painter.select_box((0, 0, 100, 100))
    painter.mode = "outpaint"
    painter.extend(left=100)
    assert painter.snapshot().size == (500, 300) and painter.snapshot().getpixel((5, 5)) != blue
    painter.mode = "mask"  # back to its mask over the image
    assert painter.snapshot().size == (400, 300)


def test_a_gallery_shows_its_thumbnails_and_an_empty_one_no_picture():
    gallery = Gallery([Image.new("RGB", (300, 200), "red"), Image.new("RGB", (200, 300), "blue")])
    picture = bundled_picture(gallery)
    assert picture.size == (300 * 200 // 200 + 8 + 133, 200)  # the thumbnails at the shorter one's height
    assert picture.getpixel((10, 10))[0] > 200 and picture.getpixel((picture.width - 10, 10))[2] > 200
    data, _ = Gallery()._repr_mimebundle_()
    assert "image/jpeg" not in data and Gallery().snapshot() is None


def test_a_large_gallery_shows_its_first_rows_of_eight():
    gallery = Gallery([Image.new("RGB", (40, 30), (n, 0, 0)) for n in range(1000)])
    picture = bundled_picture(gallery)  # (1,000 side by side: 48,000 px, past what a JPEG holds at 65,535)
    assert picture.size == (8 * 40 + 7 * 8, 4 * 30 + 3 * 8)


@pytest.mark.parametrize("picture", [lambda: 1 / 0, lambda: Image.new("RGB", (70_000, 2))])
def test_a_picture_that_cannot_be_drawn_or_encoded_leaves_the_live_view(monkeypatch, picture):
    painter = MaskPainter(Image.new("RGB", (64, 64)))
    monkeypatch.setattr(painter, "snapshot", picture)
    data, _ = painter._repr_mimebundle_()
    assert WIDGET_VIEW in data and "image/jpeg" not in data


@pytest.mark.parametrize("size", [(64, 48), (2000, 100)])
def test_any_image_size_draws(size):
    painter = MaskPainter(Image.new("RGB", size, "white"))
    painter.mask = np.ones(size[::-1], bool)
    picture = painter.snapshot()
    assert picture.width == min(size[0], 640) and picture.height >= 1


def test_a_cut_out_shows_on_white():
    cutout = Image.new("RGBA", (100, 100), (0, 0, 0, 0))
    cutout.paste((200, 30, 30, 255), (25, 25, 75, 75))
    picture = MaskPainter(cutout).snapshot()
    assert picture.getpixel((5, 5)) == (255, 255, 255) and picture.getpixel((50, 50)) == (200, 30, 30)
    sheet = Gallery([cutout]).snapshot()
    assert sheet.getpixel((5, 5)) == (255, 255, 255)


def test_the_picture_follows_a_new_image():
    painter = MaskPainter(Image.new("RGB", (64, 48), "red"))
    assert painter.snapshot().getpixel((10, 10)) == (255, 0, 0)
    out = io.BytesIO()
    Image.new("RGB", (64, 48), "blue").save(out, format="PNG")
    painter.image_data = out.getvalue()  # as continue_on_result shows the result
    assert painter.snapshot().getpixel((10, 10)) == (0, 0, 255)
