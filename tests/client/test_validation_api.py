"""The clients check every create and edit against the interface before anything is sent: on both
faces of a real sandbox, for both clients, a mistake is one ValidationError, no request leaves and
the balance is unchanged; a style named by name becomes its id, or is refused naming the account's."""

from __future__ import annotations

import logging

import pytest

import imagekit
from tests.helpers import balance
from tests.utils.scripted_http import Counting


@pytest.fixture
def counted(user_client, either_sandbox, tmp_path):
    """A client of this test's kind on either face, whose sent requests are counted, with a ledger."""
    transport = Counting()
    ik = user_client(box=either_sandbox, transport=transport, ledger=str(tmp_path / "ledger.sqlite"))
    ik.transport = transport
    return ik


def writes(ik) -> list[str]:
    return [request.url.path for request in ik.transport.requests if request.method == "POST"]


@pytest.mark.parametrize(("options", "field"), [
    ({"style": 1, "ratio": "3:2"}, "ratio"),
    ({"style": 1, "count": 3}, "count"),
    ({}, "mode"),
    ({"style": 1, "collection": 1}, "mode"),
    ({"style": 1, "platform": "tv"}, "platform"),
    ({"style": 1, "api_type": "standard\r\nX-Evil: 1"}, "api_type"),
])
def test_a_create_the_interface_does_not_allow_is_never_sent(counted, options, field):
    before = balance(counted)
    with pytest.raises(imagekit.ValidationError) as refused:
        counted.create("a lighthouse", **options)
    assert refused.value.field == field and "\n" not in str(refused.value)
    assert writes(counted) == [] and balance(counted) == before
    assert counted.ledger.entries() == []


@pytest.mark.parametrize(("edit", "field"), [
    (lambda image: image.enhance("1x"), "scale"),
    (lambda image: image.outpaint(canvas=(0, 512), size=(512, 512), at=(0, 0)), "canvas"),
    (lambda image: image.retry(strength="wild"), "strength"),
    (lambda image: image.remove_bg(request_id="abc\r\nX-Evil: 1"), "request_id"),
    (lambda image: image.fill(None, "a kite"), "mask"),
])
def test_an_edit_the_interface_does_not_allow_is_never_sent(counted, edit, field):
    image = counted.image(1)  # no image is needed: nothing is read or sent
    with pytest.raises(imagekit.ValidationError) as refused:
        edit(image)
    assert refused.value.field == field and counted.transport.requests == []


def test_a_style_given_by_name_becomes_its_id_and_says_so(counted, caplog):
    mine = counted.styles()[0]
    before = balance(counted)
    with caplog.at_level(logging.WARNING, logger="imagekit"):
        made = counted.create("a fox", style=mine.main_text)
    assert f"style {mine.main_text!r} is style {mine.style_id} of this account" in caplog.text
    assert made.images[0].provenance.style == mine.style_id
    assert before - balance(counted) == mine.credit_cost
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="imagekit"):  # a public style, named as reports name it
        counted.create("a fox", style="style 1")
    assert "style 'style 1' is public style 1 (not one of this account's own)" in caplog.text
    assert "of this account\n" not in caplog.text


@pytest.mark.parametrize("by_name", [False, True])
def test_each_create_is_checked_once(counted, monkeypatch, by_name):
    from imagekit.resources import images

    checks = []
    check = images.check_create
    monkeypatch.setattr(images, "check_create", lambda *args, **kw: checks.append(args) or check(*args, **kw))
    style = counted.styles()[0]
    counted.create("a fox", style=style.main_text if by_name else style.style_id)
    assert len(checks) == 1


def test_an_unknown_style_name_is_refused_naming_the_account_styles_and_the_ledger_reads_on(counted):
    names = ", ".join(f"{s.style_id} {s.main_text!r}" for s in counted.styles())
    before = balance(counted)
    with pytest.raises(imagekit.ValidationError) as refused:
        counted.create("a fox", style="My Fotos")
    assert str(refused.value) == (f"style = 'My Fotos': no style of yours has this name (yours: {names}); "
                                  "a public style is given by its id")
    assert writes(counted) == [] and balance(counted) == before
    assert counted.ledger.entries() == [] and len(counted.ledger.to_pandas()) == 0  # nothing poisoned
