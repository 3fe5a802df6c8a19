"""The review widget's kernel side: every page message calls the Desk's method, mistakes come back in
one line, and the mime bundle carries a picture of the grid for where no widget runs."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

import imagekit
from imagekit.widgets.review import ReviewWidget
from tests.utils.users import make_user


@pytest.fixture
def desk(either_sandbox, tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGEKIT_HOME", str(tmp_path / "home"))
    with imagekit.Client(either_sandbox.url, make_user(either_sandbox)[1], ledger=False) as client:
        images = client.create("a lighthouse at dusk", style=client.styles()[0], count=4).images
        yield imagekit.review(images)


def test_page_messages_call_the_desk_and_the_decisions_come_back(desk):
    widget = desk.widget()
    ids = widget.ids
    assert ids == [image.id for image in desk.images] and len(widget.thumbnails) == 4
    assert all(url.startswith("data:image/jpeg;base64,") and len(url) < 12_000 for url in widget.thumbnails)
    said = widget._page_said
    said(widget, {"event": "rate", "image": ids[1], "stars": 4}, [])
    said(widget, {"event": "select", "image": ids[2]}, [])
    said(widget, {"event": "vote", "winner": ids[0], "loser": ids[3]}, [])
    said(widget, {"event": "vote", "winner": ids[1], "loser": ids[2], "tie": True}, [])
    assert widget.ratings == {str(ids[1]): 4} and widget.selected == [ids[2]] and widget.votes == 2
    assert widget.scores[str(ids[0])] > 0 > widget.scores[str(ids[3])] and widget.message == ""
    frame = desk.decisions().set_index("image_id")
    assert frame.loc[ids[1], "rating"] == 4 and frame.loc[ids[0], "wins"] == 1 and frame.loc[ids[2], "ties"] == 1
    said(widget, {"event": "rate", "image": ids[1], "stars": 9}, [])
    assert widget.message == "a rating is 1 to 5 stars (0 or None clears it), not 9" and widget.ratings == {str(ids[1]): 4}
    said(widget, {"event": "undo"}, [])
    said(widget, {"event": "unknown"}, [])
    assert widget.votes == 1 and widget.message == ""
    assert repr(widget) == "ReviewWidget(4 images, 1 rated, 1 selected)"


def test_the_mime_bundle_carries_a_picture_of_the_grid(desk):
    desk.rate(desk.images[0], 5)
    desk.select(desk.images[0])
    data, _ = ReviewWidget(desk)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    with Image.open(io.BytesIO(base64.b64decode(data["image/jpeg"]))) as picture:
        assert picture.size == (4 * (96 + 8), 96 + 18 + 8)
        # the first thumbnail's frame is the selection's blue
        red, green, blue = picture.convert("RGB").getpixel((1, 1))
        assert blue > 150 and red < 100
    shown, _ = desk._repr_mimebundle_()  # a desk shown in a notebook is its widget, with the picture
    assert "application/vnd.jupyter.widget-view+json" in shown and "image/jpeg" in shown
