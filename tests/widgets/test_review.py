"""The review widget's kernel side: every page message calls the Desk's method, mistakes come back in
one line, and the mime bundle carries a picture of the grid for where no widget runs."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

import imagekit
from imagekit.desk.desk import BLURRED_SHARE
from imagekit.widgets import review
from imagekit.widgets.review import ReviewWidget
from tests.utils.users import make_user


@pytest.fixture
def desk(either_sandbox, tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGEKIT_HOME", str(tmp_path / "home"))
    with imagekit.Client(either_sandbox.url, make_user(either_sandbox)[1], ledger=False) as client:
        images = client.create("a lighthouse at dusk", style=client.styles()[0], count=4).images
        yield imagekit.review(images)


def test_thumbnails_are_drawn_when_the_page_asks_for_their_rows(desk, monkeypatch):
    """A desk of 1,000 opened in 6.4 s when every thumbnail went with the widget: now the first screenful
    goes with it and the page asks for the rows it shows; what it asks is data (indexes in range only)."""
    monkeypatch.setattr(review, "_FIRST_SCREEN", 2)
    widget = desk.widget()
    assert "thumbnails" not in widget.keys and widget.drawn["batch"] == 1 and list(widget.drawn["urls"]) == ["0", "1"]
    assert widget._thumbnails[2:] == [None, None]  # the rest drawn when shown
    widget._page_said(widget, {"event": "thumbnails", "indexes": [3, 2, 3, 99, -1, "1", True, 1.0]}, [])
    assert widget.drawn["batch"] == 2 and list(widget.drawn["urls"]) == ["3", "2"]
    assert widget.drawn["urls"]["2"] == widget.thumbnail(2) and widget.drawn["urls"]["2"].startswith("data:image/jpeg")
    widget._page_said(widget, {"event": "thumbnails", "indexes": [3, 2]}, [])  # another view asks again
    assert widget.drawn["batch"] == 3 and list(widget.drawn["urls"]) == ["3", "2"]
    widget._page_said(widget, {"event": "thumbnails", "indexes": "all"}, [])
    assert widget.drawn["batch"] == 3
    with pytest.raises(IndexError, match="^the desk holds 4 images: there is no image 4$"):
        widget.thumbnail(4)


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
    said(widget, {"event": "rate", "image": ids[1], "stars": 9, "seq": 7}, [])
    assert widget.message == "a rating is 1 to 5 stars (0 or None clears it), not 9" and widget.ratings == {str(ids[1]): 4}
    assert widget.answered == 7  # refused, answered all the same: the page draws the kernel's state again
    said(widget, {"event": "undo"}, [])
    said(widget, {"event": "unknown"}, [])
    assert widget.votes == 1 and widget.message == ""
    assert repr(widget) == "ReviewWidget(4 images, 1 rated, 1 selected)"
    said(widget, {"event": "rate", "image": ids[0], "stars": 2, "seq": 8}, [])
    assert widget.answered == 8 and widget.ratings == {str(ids[1]): 4, str(ids[0]): 2}
    said(widget, {"event": "rate", "image": ids[0], "stars": 0, "seq": "9"}, [])  # a seq is a number or nothing
    assert widget.answered == 8 and widget.ratings == {str(ids[1]): 4}


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


def test_the_picture_draws_only_the_thumbnails_it_shows(desk, monkeypatch):
    """A desk of 1,000 took 1.2 s more to show when its picture drew every thumbnail for the 24 it shows."""
    monkeypatch.setattr(review, "_FIRST_SCREEN", 0)
    monkeypatch.setattr(review, "_SNAPSHOT_TILES", 2)
    widget = ReviewWidget(desk)
    assert widget._thumbnails == [None] * 4
    with Image.open(io.BytesIO(base64.b64decode(widget._repr_mimebundle_()[0]["image/jpeg"]))) as picture:
        assert picture.size == (2 * (96 + 8), 96 + 18 + 8)
    assert [url is not None for url in widget._thumbnails] == [True, True, False, False]


def test_the_next_steps_price_follows_the_picks_and_send_charges_what_was_shown(desk):
    """The widget's quote is ``Desk.quote()`` (the same ``send.quote`` Python gives) for the picks as
    they change, a decision made from Python included; Send charges it, and only the price shown."""
    widget = desk.widget()
    assert widget.quote == {}  # no next step named: nothing priced
    chain = imagekit.chain().enhance("2x")
    ids, said = widget.ids, widget._page_said
    with pytest.raises(imagekit.ValidationError, match="^nothing is selected"):
        desk.send(chain)  # names the next step all the same
    assert widget.quote["ok"] is False and widget.quote["text"].startswith("nothing is selected")
    said(widget, {"event": "select", "image": ids[0]}, [])
    each = chain.estimate(desk.client)
    one = desk.quote()
    assert widget.quote == {"text": one.summary, "picks": 1, "credits": each, "after": one.balance_after, "ok": True}
    desk.select(ids[2])  # from Python: the widget follows
    assert widget.quote["picks"] == 2 and widget.quote["credits"] == 2 * each == desk.quote().credits
    said(widget, {"event": "send", "picks": 1, "credits": each}, [])  # a stale price is not sent
    assert widget.message.startswith(f"the price changed since it was shown ({each} credits for 1, now {2 * each:g}")
    assert widget.sent is None
    before = desk.client.usage().current_credit
    said(widget, {"event": "send", "picks": 2, "credits": 2 * each}, [])
    assert widget.message == f"sent: 2 images made for {2 * each:g} credits; the widget's sent holds their desk"
    assert before - desk.client.usage().current_credit == 2 * each  # charged = shown
    assert widget.sent.decisions()["parent_id"].tolist() == [ids[0], ids[2]]
    assert widget.quote["after"] == desk.client.usage().current_credit - 2 * each  # the balance moved on


def test_quality_sorts_and_flags_measured_on_asking(desk, tmp_path):
    """The page's quality sort asks the kernel to measure; a blurred near-duplicate is flagged both ways."""
    from PIL import ImageFilter

    widget = desk.widget()
    assert widget.signals == {}  # nothing measured at opening: 1,000 thumbnails open quickly
    # A folder whose last file holds the first image blurred (its own record kept), reviewed first:
    # signals are kept by image id, so the desk on the same images measures nothing again.
    folder = tmp_path / "saved"
    folder.mkdir()
    for n, image in enumerate(desk.images):
        image.save(folder / f"{n}.png")
    last = Image.open(folder / "3.png")
    Image.open(folder / "0.png").filter(ImageFilter.GaussianBlur(3)).save(folder / "3.png",
                                                                              pnginfo=_text_chunks(last))
    mine = imagekit.review(folder, desk.client)
    shown = mine.widget()
    frame = mine.quality()
    # the blurred copy is flagged; a picture of the sandbox's may be smooth enough to be flagged too
    assert frame["blurred"].iloc[3] and frame["sharpness"].iloc[3] < 0.5 * frame["sharpness"].iloc[0]
    assert frame["blurred"].tolist() == (frame["sharpness"] < BLURRED_SHARE * frame["sharpness"].median()).tolist()
    assert frame["dup_of"].isna().tolist() == [True, True, True, False] and frame["dup_of"].iloc[3] == desk.images[0].id
    assert shown.signals["blurred"] == frame["blurred"].tolist()  # the widget shown follows
    assert shown.signals["dup_of"] == [None, None, None, desk.images[0].id]
    widget._page_said(widget, {"event": "measure"}, [])  # what the page's "Sort by sharpness" sends
    assert widget.message == "" and widget.signals == shown.signals


def _text_chunks(picture):
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    for key, value in picture.text.items():
        info.add_text(key, value)
    return info
