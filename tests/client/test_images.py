"""Image handles and create results: bytes, files, waiting, notebook display, reference images."""

from __future__ import annotations

import base64
import io

import httpx
import numpy as np
import pytest
from PIL import Image as PILImage

import imagekit
from tests.utils.scripted_http import Script, error, reply


def png_bytes(size=(600, 400), color=(200, 30, 30)) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", size, color).save(out, format="PNG")
    return out.getvalue()


PNG = png_bytes()


def created(*statuses: str, with_pixels: bool = False) -> dict:
    images = [{"imageId": i + 1, "generationStatus": s, "resolution": "600x400"} for i, s in enumerate(statuses)]
    if with_pixels:
        for image in images:
            image["base64"] = base64.b64encode(PNG).decode()
    return {"images": images, "defaultCredit": 10, "dailyCredit": 0, "monthlyCredit": 0}


def test_read_passes_the_binary_query(mock):
    script = Script(reply(200, PNG, {"content-type": "image/png"}))
    data = mock(script).image(5).read("webp", scale="2x", watermark=False, collection=True)
    request = script.requests[0]
    assert data == PNG and request.url.path == "/api/images/5/binary"
    assert dict(request.url.params) == {"type": "webp", "scaleSize": "2x", "watermark": "false", "isCollection": "true"}


def test_read_defaults_to_png_only(mock):
    script = Script(reply(200, PNG))
    mock(script).image(5).read()
    assert dict(script.requests[0].url.params) == {"type": "png"}


def test_pil(mock):
    assert mock(Script(reply(200, PNG))).image(5).pil().size == (600, 400)


@pytest.mark.parametrize(("name", "type_"), [("a.png", "png"), ("a.JPG", "jpeg"), ("a.webp", "webp"), ("a.svg", "svg"), ("a", "png")])
def test_save_streams_to_disk_with_the_type_of_the_suffix(mock, tmp_path, name, type_):
    script = Script(reply(200, {"imageId": 5, "creditCost": 2, "resolution": "1024x576"}), reply(200, PNG))
    path = mock(script).image(5).save(tmp_path / name)
    assert path == tmp_path / name and script.requests[1].url.params["type"] == type_
    assert script.requests[0].url.path == "/api/images/5"  # what the service shows of an image made elsewhere
    assert list(tmp_path.iterdir()) == [path]
    with PILImage.open(path) as saved, PILImage.open(io.BytesIO(PNG)) as sent:  # the pixels as sent, and
        assert saved.tobytes() == sent.tobytes() and saved.info["image_id"] == "5"  # which image they are
        assert (saved.info["operation"], saved.info["credits"], saved.info["ratio"]) == ("unknown", "2.0", "16:9")


def test_a_failed_save_leaves_no_file(mock, tmp_path):
    with pytest.raises(imagekit.ImageNotReadyError):
        mock(Script(error(409, "image_not_ready"))).image(5).save(tmp_path / "a.png")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("where", "message"), [
    ("missing/a.png", r"missing is not a folder that exists: create it first"),
    (".", r"is a folder: name the file to write, for example .*image.png"),
    ("notes.txt/a.png", r"notes.txt is not a folder that exists"),
])
def test_a_save_to_a_place_that_cannot_hold_a_file_is_refused_in_one_line_before_any_request(mock, tmp_path,
                                                                                              where, message):
    (tmp_path / "notes.txt").write_text("mine")
    script = Script()
    with pytest.raises(imagekit.ConfigError, match=message) as refused:
        mock(script).image(5).save(tmp_path / where)
    assert "\n" not in str(refused.value) and script.requests == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize(("name", "type_", "message"), [
    ("x.gif", None, r"x.gif: a .gif file cannot be written: images are saved as .png, .jpg, .jpeg, .webp, .svg"),
    ("x.BMP", None, r"a .bmp file cannot be written"),
    ("x.png", "jpeg", r"x.png: named .png but type='jpeg': name it for the type, or leave type out"),
])
def test_a_name_that_says_another_format_is_refused_before_any_request(mock, tmp_path, name, type_, message):
    """``save("x.gif")`` wrote PNG bytes under a GIF's name: the file's name says what it holds, or
    nothing is written (and nothing asked of the service)."""
    script = Script()
    with pytest.raises(imagekit.ValidationError, match=message) as refused:
        mock(script).image(5).save(tmp_path / name, type=type_)
    assert "\n" not in str(refused.value) and script.requests == [] and list(tmp_path.iterdir()) == []


def test_wait_polls_until_completed(mock):
    script = Script(reply(200, {"imageId": 1, "generationStatus": "PENDING"}),
                    reply(200, {"imageId": 1, "generationStatus": "COMPLETED", "resolution": "600x400"}))
    image = mock(script).image(1)
    assert image.wait(timeout=10) is not None
    assert (image.status, image.resolution, len(script.requests)) == ("COMPLETED", "600x400", 2)


def test_wait_raises_when_generation_failed(mock):
    script = Script(reply(200, {"imageId": 1, "generationStatus": "FAILED", "generationError": "engine exploded"}))
    with pytest.raises(imagekit.GenerationFailedError, match="engine exploded") as info:
        mock(script).image(1).wait()
    assert info.value.image_id == 1


def test_wait_gives_up_after_its_timeout(mock):
    with pytest.raises(imagekit.WaitTimeoutError):
        mock(Script(reply(200, {"imageId": 1, "generationStatus": "PENDING"}))).image(1).wait(timeout=0.1)


def test_result_wait_can_keep_failed_images(mock):
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/images/create":
            return reply(200, created("PENDING", "PENDING"))
        image_id = int(request.url.path.rsplit("/", 1)[1])
        return reply(200, {"imageId": image_id, "generationStatus": "FAILED" if image_id == 2 else "COMPLETED",
                           "generationError": "boom"})

    client = mock(Script(answer))
    res = client.create("a cat", style=1, is_async=True)
    assert [image.status for image in res] == ["PENDING", "PENDING"]
    with pytest.raises(imagekit.GenerationFailedError):
        res.wait()
    res = client.create("a cat", style=1, is_async=True).wait(raise_on_failure=False)
    assert [image.status for image in res] == ["COMPLETED", "FAILED"]


def test_thumbnails_come_from_the_create_response_without_a_request(mock):
    script = Script(reply(200, created("COMPLETED", with_pixels=True)))
    image = mock(script).create("a cat", style=1).images[0]
    thumb = image._repr_png_()
    assert PILImage.open(io.BytesIO(thumb)).size == (256, 171) and len(script.requests) == 1
    assert '<img src="data:image/png;base64,' in image._repr_html_() and "#1 · COMPLETED · 600x400" in image._repr_html_()


def test_thumbnails_are_fetched_when_needed(mock):
    script = Script(reply(200, PNG))
    image = mock(script).image(3)
    assert image._repr_png_().startswith(b"\x89PNG") and image._repr_png_() is image._repr_png_()
    assert len(script.requests) == 1  # cached


def test_display_never_raises_and_never_dumps_base64(mock):
    client = mock(Script(error(404, "image_not_found")))
    image = client.image(3)
    assert image._repr_png_() is None and "<img" not in image._repr_html_()
    pending = mock(Script(reply(200, created("PENDING", with_pixels=True)))).create("x", style=1).images[0]
    assert pending._repr_png_() is None
    assert repr(pending) in ("Image(id=1, status='PENDING', resolution='600x400')",
                             "AsyncImage(id=1, status='PENDING', resolution='600x400')")
    assert len(repr(mock(Script(reply(200, created("COMPLETED", with_pixels=True)))).create("x", style=1))) < 300


def test_a_result_shows_its_images_and_cost(mock):
    res = mock(Script(reply(200, created("COMPLETED", "COMPLETED", with_pixels=True), {"X-Credits-Consumed": "2"})))
    res = res.create("a cat", style=1, count=2)
    page = res._repr_html_()
    assert page.count("<img") == 2 and "2 credits" in page


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        (7, "/api/images/7/binary"),
        ("/api/images/9/binary", "/api/images/9/binary"),
        ("data:image/png;base64,AAAA", "data:image/png;base64,AAAA"),
        ("https://example.com/cat.png", "https://example.com/cat.png"),
    ],
)
def test_reference_images_pass_through(mock, image, expected):
    script = Script(reply(200, created("COMPLETED")))
    mock(script).create("a cat", image=image)
    assert script.body()["image"] == expected


def test_reference_images_from_handles_and_pixels(mock, tmp_path):
    script = Script(reply(200, created("COMPLETED")))
    client = mock(script)
    client.create("a cat", image=client.image(4))
    assert script.body()["image"] == "/api/images/4/binary"
    (tmp_path / "ref.png").write_bytes(PNG)
    for source in (tmp_path / "ref.png", str(tmp_path / "ref.png"), PNG):
        client.create("a cat", image=source)
        assert script.body()["image"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    client.create("a cat", image=PILImage.new("RGB", (2, 2)))
    client.create("a cat", image=np.zeros((2, 2, 3), dtype=np.uint8))
    assert script.body()["image"].startswith("data:image/png;base64,")


def test_prompts(mock):
    script = Script(reply(200, {"initialPrompt": "cat", "enhancedPrompt": "a cat, golden hour", "ttpLogId": 3},
                          {"X-Credits-Consumed": "1", "X-Remaining-Credits": "9"}))
    client = mock(script)
    prompt = client.text_to_prompt("cat", style=2)
    assert script.body() == {"text": "cat", "styleId": 2} and script.requests[0].headers["X-Platform"] == "api"
    assert (prompt.enhanced_prompt, prompt.ttp_log_id, prompt.credits_charged, prompt.credits_remaining) == (
        "a cat, golden hour", 3, 1, 9)
    script = Script(reply(200, {"captionPrompt": "a cat", "captionTPrompt": "고양이"}))
    caption = mock(script).image_to_prompt(5, language="ko")
    assert script.body() == {"image": "/api/images/5/binary"} and script.requests[0].headers["Accept-Language"] == "ko"
    assert caption.caption_t_prompt == "고양이" and caption.credits_charged is None
