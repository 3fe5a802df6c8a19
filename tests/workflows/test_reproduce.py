"""A file from someone else is data, never a command: ``reproduce`` reads back only what the toolkit
writes, checked by the one validator, and refuses anything else in one line naming the field and the
file, before anything is read, priced or sent. Hostile files are the toolkit's own, tampered with.
On both faces of the sandbox."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import imagekit
from imagekit.provenance.embed import embed
from imagekit.provenance.read import fields_of
from tests.helpers import balance
from tests.utils.service import server_images


def tampered(path: Path, **changes: object) -> Path:
    """The file at ``path`` with its record's text fields changed (JSON for what is not text), written
    back by the toolkit's own writer."""
    with open(path, "rb") as source:
        fields = fields_of(source)
    fields.update({name: value if isinstance(value, str) else json.dumps(value) for name, value in changes.items()})
    out = io.BytesIO()
    embed(io.BytesIO(path.read_bytes()), out, fields)
    hostile = path.with_name(f"hostile-{len(list(path.parent.iterdir()))}.png")
    hostile.write_bytes(out.getvalue())
    return hostile


@pytest.fixture
def made(connect, tmp_path):
    """A client and a file the toolkit wrote for an image it made (2 credits' worth of style)."""
    ik = connect()
    image = ik.create("a fox in the snow", style=ik.styles()[0], ratio="4:3").images[0]
    return ik, image.save(tmp_path / "fox.png")


def test_a_hostile_file_is_refused_naming_the_field_and_the_file_before_anything_is_sent(made, box, tmp_path, capsys):
    ik, path = made
    source = imagekit.read_provenance(path).image_id
    referenced = ik.create("a fox, again", image=source).images[0].save(tmp_path / "again.png")
    assert imagekit.read_provenance(referenced).params == {"image": source}  # an id: what files keep
    secret = tmp_path / "credentials"
    secret.write_text("[default]\naws_secret_access_key = do-not-upload\n")
    before, images = balance(ik), len(server_images(box, ik.user_id))
    with pytest.raises(imagekit.ValidationError) as refused:
        imagekit.reproduce(tampered(referenced, params={"image": str(secret)}), ik)
    assert refused.value.field == "image" and "a file names a reference image by its image id only" in str(refused.value)
    cases = [
        ({"params": {"extra_body": {"count": 4}}}, "params.extra_body", "not a field this toolkit writes for create"),
        ({"count": 1000}, "count", "the interface makes 1, 2 or 4 images a request"),
        ({"count": '"4"'}, "count", "the interface makes 1, 2 or 4 images a request"),
        ({"ratio": "3:2"}, "ratio", "one of square, vertical"),
        ({"style": '"My Photo"'}, "style", "an id is a whole number from 1"),
        ({"params": {"api_type": "standard\r\nX-Api-Key: stolen"}}, "api_type", "a header value is visible ASCII"),
        ({"params": {"platform": "api\r\nX-Evil: 1"}}, "platform", "one of web, app, figma, api"),
        ({"service": "http://x.test\x1b[2J"}, "service", "not a service address this toolkit writes"),
        ({"operation": "delete"}, "operation", "one of create, enhance"),
        ({"count": "{not json"}, None, "count = '{not json': not the JSON this toolkit writes"),
        ({"operation": "enhance", "parent_id": 1, "params": {"scale": "2x", "timeout": 0.001}}, "params.timeout",
         "not a field this toolkit writes for enhance"),
    ]
    for changes, field, said in cases:
        hostile = tampered(path, **changes)
        with pytest.raises(imagekit.ValidationError) as refused:
            imagekit.reproduce(hostile, ik)
        message = str(refused.value)
        assert message.startswith(f"{hostile}: ") and said in message and "\n" not in message, (changes, message)
        assert field is None or refused.value.field == field, (changes, refused.value.field)
        assert "do-not-upload" not in message and capsys.readouterr().out == ""  # nothing priced, nothing shown
    assert balance(ik) == before and len(server_images(box, ik.user_id)) == images
    assert [entry.operation for entry in ik.ledger.entries()] == ["create", "create"]  # made above, nothing since


def test_max_credits_refuses_beyond_and_confirm_asks_first(made, box, monkeypatch, capsys):
    ik, path = made
    style = ik.styles()[0]
    before, images = balance(ik), len(server_images(box, ik.user_id))
    with pytest.raises(imagekit.BudgetExceededError, match=rf"may cost {style.credit_cost:g} credits, more than "
                                                           r"max_credits=1; nothing was sent"):
        imagekit.reproduce(path, ik, max_credits=1)
    asked: list[str] = []
    monkeypatch.setattr("builtins.input", lambda question: asked.append(question) or "n")
    assert imagekit.reproduce(path, ik, confirm=True) is None
    assert asked == [f"Send it, for up to {style.credit_cost:g} credits? [y/N] "] and "Not sent." in capsys.readouterr().out
    assert balance(ik) == before and len(server_images(box, ik.user_id)) == images
    monkeypatch.setattr("builtins.input", lambda question: "y")
    again = imagekit.reproduce(path, ik, confirm=True, max_credits=style.credit_cost)
    assert len(again.images) == 1 and before - balance(ik) == style.credit_cost


def test_a_file_saved_from_an_image_handle_says_what_the_metadata_shows_and_is_refused_before_pricing(
        made, box, tmp_path, capsys):
    ik, _ = made
    [(image_id, _, _)] = server_images(box, ik.user_id)
    handle = ik.image(image_id)  # an image known by its id only: made elsewhere, in another session
    record = imagekit.read_provenance(handle.save(tmp_path / "elsewhere.png"))
    assert (record.operation, record.image_id, record.ratio, record.credits) == (
        "unknown", image_id, "4:3", ik.styles()[0].credit_cost)
    assert record.describe().startswith(f"image #{image_id}, made by a request the service does not show")
    before = balance(ik)
    capsys.readouterr()
    with pytest.raises(imagekit.ValidationError, match=r"elsewhere\.png: image \d+ cannot be sent again: the file "
                                                       r"was saved from an image whose request the service does not show"):
        imagekit.reproduce(tmp_path / "elsewhere.png", ik)
    assert capsys.readouterr().out == "" and balance(ik) == before


def test_a_file_from_the_embedded_sandbox_names_it_by_its_data_not_its_port(tmp_path):
    """The sandbox of IMAGEKIT_HOME listens on a new port each session: a file made in yesterday's
    session is reproduced today at the same service, not 'made at http://127.0.0.1:<old port>'."""
    import os
    import re
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("IMAGEKIT_")} | {"IMAGEKIT_HOME": str(tmp_path)}
    make = ("import imagekit; ik = imagekit.connect(); "
            "ik.create('a fox', style=ik.styles()[0]).images[0].save('fox.png'); print(ik.config.base_url)")
    again = "import imagekit; imagekit.reproduce('fox.png')"
    runs = []
    for script in (make, again):
        runs.append(subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True,
                                   text=True, timeout=180))
        assert runs[-1].returncode == 0, runs[-1].stderr[-2000:]
    service = imagekit.read_provenance(tmp_path / "fox.png").service
    assert re.fullmatch(r"imagekit sandbox [0-9a-f]{32}", service or ""), service
    said = runs[1].stdout.splitlines()[0]
    assert said.startswith("Reproducing image ") and "made at" not in said, said
    assert runs[0].stdout.strip() not in said  # another session, another port: the same service


def test_an_image_id_from_another_service_is_refused_before_anything_is_priced_or_sent(made, tmp_path):
    """An edit's parent, a reference image: ids of the service that made the file. Elsewhere the same
    id is someone else's image (a green apple edited for a lighthouse's price): refused, nothing paid."""
    ik, path = made
    source = imagekit.read_provenance(path).image_id
    edited = ik.image(source).remove_bg().save(tmp_path / "cut.png")
    referenced = ik.create("a fox, again", image=source).images[0].save(tmp_path / "again.png")
    before = balance(ik)
    for own in (edited, referenced):
        elsewhere = tampered(own, service="https://images.example.com/v1")
        with pytest.raises(imagekit.ValidationError, match=rf"image {source} is an image of "
                                                           r"https://images.example.com/v1, where it was made"):
            imagekit.reproduce(elsewhere, client=ik)
    assert balance(ik) == before
    imagekit.reproduce(tampered(path, service="https://images.example.com/v1"), client=ik)  # a create: no id of theirs
