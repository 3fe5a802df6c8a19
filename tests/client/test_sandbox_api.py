"""Every endpoint through both clients, against the real sandbox on a loopback port."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

import imagekit
from tests.helpers import SIZE, control
from tests.utils.scripted_http import SECRET
from tests.utils.users import make_user

ROOT = Path(__file__).resolve().parents[2]


def balance(client) -> int:
    return client.usage().current_credit


def test_account(ik):
    me = ik.me()
    assert isinstance(me, imagekit.User) and me.user_id == ik.user_id and me.role == "normal"
    assert me.plan.grade == "standard" and me.plan.credit_cost_info and me.plan.price_obj.currency == "USD"
    usage = ik.usage()
    assert usage.current_credit == me.default_credit + me.daily_credit + me.monthly_credit
    assert usage.max_edit_count == me.plan.max_edit_number
    styles = ik.styles()
    assert styles and all(isinstance(style, imagekit.Style) and style.style_id for style in styles)
    assert styles[0].thumb_link.startswith("/api/images/")
    assert isinstance(ik.collection_count(), int)


def test_create_by_style_reports_balances_and_cost(ik):
    style = ik.styles()[0]
    before = balance(ik)
    res = ik.create("a lighthouse on a cliff at dusk", style=style, count=2, ratio="16:9", seed=40)
    assert len(res) == 2 and res.credits_charged == style.credit_cost * 2
    assert res.credits_remaining == before - res.credits_charged == balance(ik)
    assert res.default_credit + res.daily_credit + res.monthly_credit == res.credits_remaining
    assert [image.status for image in res] == ["COMPLETED", "COMPLETED"]
    assert [image.info.generation_info.variation_id for image in res] == [40, 41]
    assert {image.resolution for image in res} == {f"{SIZE}x{SIZE * 9 // 16}"}


def test_same_seed_same_pixels(ik):
    style = ik.styles()[0].style_id
    first, again = (ik.create("a kite", style=style, seed=7).images[0] for _ in range(2))
    assert first.id != again.id and first.read("png") == again.read("png")


def test_create_asynchronously_then_wait(ik):
    res = ik.create("a quiet harbour", style=ik.styles()[0], count=2, is_async=True)
    assert {image.status for image in res} <= {"PENDING", "COMPLETED"}
    assert res.wait(timeout=60) is not None
    assert [image.status for image in res] == ["COMPLETED", "COMPLETED"]
    assert res.images[0].read().startswith(b"\x89PNG")


def test_reference_and_collection_modes(ik):
    source = ik.create("a red apple", style=ik.styles()[0], seed=1).images[0]
    for reference in (source, source.id, PILImage.new("RGB", (64, 48), (200, 30, 30)),
                      np.zeros((32, 32, 3), dtype=np.uint8)):
        made = ik.create("the same, at night", image=reference)
        assert made.images[0].status == "COMPLETED"
    assert ik.create("a harbour", collection=1).images[0].info.generation_info.super_ == "collection"


def test_meta_read_pil_and_save(ik, tmp_path):
    image = ik.create("a red apple", style=ik.styles()[0], seed=2).images[0]
    meta = image.meta()
    assert isinstance(meta, imagekit.ImageMeta) and meta.image_id == image.id and meta.generation_status == "COMPLETED"
    assert image.read("png").startswith(b"\x89PNG") and image.read("jpeg").startswith(b"\xff\xd8")
    assert image.read("webp")[8:12] == b"WEBP"
    assert image.pil().size == (SIZE, SIZE)
    for name, magic in (("a.png", b"\x89PNG"), ("a.jpg", b"\xff\xd8"), ("sub.webp", b"RIFF")):
        assert image.save(tmp_path / name).read_bytes().startswith(magic)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jpg", "a.png", "sub.webp"]


def test_a_handle_shows_as_a_small_thumbnail(ik):
    image = ik.create("a red apple", style=ik.styles()[0], seed=2).images[0]
    thumb = PILImage.open(io.BytesIO(image._repr_png_()))
    assert max(thumb.size) == 256
    assert "<img" in image._repr_html_() and len(repr(image)) < 100
    assert ik.image(image.id)._repr_png_() is not None  # fetched when the create response is not at hand


SQUARE, DOUBLE, WIDER = f"{SIZE}x{SIZE}", f"{2 * SIZE}x{2 * SIZE}", SIZE + SIZE // 4
EDITS = [
    (lambda img: img.enhance("2x"), DOUBLE, "2x"),
    (lambda img: img.outpaint(canvas=(WIDER, SIZE), size=(SIZE, SIZE), at=(SIZE // 8, 0)), f"{WIDER}x{SIZE}", "1x"),
    (lambda img: img.retry(strength="subtle"), SQUARE, "1x"),
    (lambda img: img.retry(), SQUARE, "1x"),
    (lambda img: img.fill(_centre_mask(), "a blue bird", negative="text"), SQUARE, "1x"),
    (lambda img: img.clean_up(PILImage.fromarray(_centre_mask())), SQUARE, "1x"),
    (lambda img: img.remove_bg(), SQUARE, "1x"),
    (lambda img: img.vectorize(), SQUARE, "1x"),
    (lambda img: img.upsize(), DOUBLE, "2x"),
]


def _centre_mask(size: int = SIZE, half: int = SIZE // 8) -> np.ndarray:
    mask = np.zeros((size, size), dtype=bool)
    mask[size // 2 - half:size // 2 + half, size // 2 - half:size // 2 + half] = True
    return mask


@pytest.mark.parametrize(("edit", "resolution", "scale"), EDITS,
                         ids=["enhance", "outpaint", "retry-subtle", "retry", "fill", "clean_up", "remove_bg",
                              "vectorize", "upsize"])
def test_every_edit_returns_a_charged_handle(ik, edit, resolution, scale):
    source = ik.create("a red apple on a wooden table", style=ik.styles()[0], seed=3).images[0]
    before = ik.usage()
    made = edit(source)
    assert made.id != source.id and made.resolution == resolution and made.info.scale_size == scale
    assert len(made.request_id) == 32 and made.credits_charged > 0
    after = ik.usage()
    assert made.credits_remaining == after.current_credit == before.current_credit - made.credits_charged
    assert after.edit_count == before.edit_count + 1
    assert made.pil().size == tuple(int(n) for n in resolution.split("x"))


def test_vectorize_gives_an_svg(ik, tmp_path):
    source = ik.create("a red apple", style=ik.styles()[0], seed=3).images[0]
    vector = source.vectorize()
    assert b"<svg" in vector.read("svg")[:500]
    assert b"<svg" in vector.save(tmp_path / "apple.svg").read_bytes()[:500]
    with pytest.raises(imagekit.SVGNotAvailableError):
        source.read("svg")


def test_cancel_edit_answers(ik):
    source = ik.create("a kite", style=ik.styles()[0]).images[0]
    done = source.upsize(request_id="finished-1")
    assert done.request_id == "finished-1" and ik.cancel_edit("finished-1") == "not_running"
    assert ik.cancel_edit("never-sent-1") == "cancelled"
    with pytest.raises(imagekit.EditCancelledError):
        source.upsize(request_id="never-sent-1")  # the cancel arrived first


def test_prompts(ik):
    style = ik.styles()[0]
    prompt = ik.text_to_prompt("cat on a roof", style=style)
    assert isinstance(prompt, imagekit.TextPrompt) and prompt.initial_prompt == "cat on a roof"
    assert prompt.enhanced_prompt and prompt.ttp_log_id
    assert ik.text_to_prompt("cat").enhanced_prompt
    image = ik.create(prompt.enhanced_prompt, style=style, enhanced_prompt=prompt.enhanced_prompt,
                      initial_prompt=prompt.initial_prompt).images[0]
    for source in (image, image.id, image.pil()):
        caption = ik.image_to_prompt(source)
        assert isinstance(caption, imagekit.ImageCaption) and caption.caption_prompt
    assert ik.image_to_prompt(image, language="ko").caption_t_prompt


def test_the_key_never_shows_against_the_sandbox(user_client, caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    client = user_client()
    key = client.config.api_key
    image = client.create("a kite", style=client.styles()[0]).images[0]
    with pytest.raises(imagekit.ImageNotFoundError) as info:
        client.image(999_999_999).meta()
    for text in (repr(client), repr(client.config), repr(image), image._repr_html_(), repr(info.value),
                 str(info.value), caplog.text):
        assert key not in text and SECRET not in text


def test_the_async_client_survives_new_event_loops(sandbox):
    _, key = make_user(sandbox)
    client = imagekit.AsyncClient(sandbox.url, key)
    first = asyncio.run(client.me())
    second = asyncio.run(client.me())  # pooled connections from the first loop are unusable here
    assert first.user_id == second.user_id
    asyncio.run(client.aclose())


def test_the_sync_client_inside_a_running_loop(sandbox):
    _, key = make_user(sandbox)
    with imagekit.Client(sandbox.url, key) as client:
        async def cell() -> int:
            return client.me().user_id

        assert asyncio.run(cell()) == client.me().user_id


def test_connect_starts_an_embedded_sandbox_in_imagekit_home(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("IMAGEKIT_")} | {"IMAGEKIT_HOME": str(tmp_path)}
    code = ("import os, sys, imagekit; ik = imagekit.connect(); me = ik.me(); "
            "res = ik.create('a kite', style=ik.styles()[0]); print(me.email, len(res)); "
            "os.environ['IMAGEKIT_HOME'] = sys.argv[1]; other = imagekit.connect(); "  # another home, same process
            "print(other.config.base_url != ik.config.base_url, other.ledger.account != ik.ledger.account)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "other")], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    first, second = out.stdout.strip().splitlines()
    assert first.endswith(" 1") and (tmp_path / "sandbox").is_dir()
    assert second == "True True" and (tmp_path / "other" / "sandbox").is_dir()  # that home's own sandbox


def test_connect_uses_the_environment(sandbox, monkeypatch):
    _, key = make_user(sandbox)
    monkeypatch.setenv("IMAGEKIT_BASE_URL", sandbox.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    with imagekit.connect() as client:
        assert client.me().email


def test_sandbox_controls_are_reachable(sandbox):
    assert "rate_503" in control(sandbox, "GET", "faults")
