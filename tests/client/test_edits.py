"""Edits: request shapes, result handles, and cancellation when an edit is abandoned."""

from __future__ import annotations

import asyncio
import io
import logging
import re

import anyio
import httpx
import numpy as np
import pytest
from PIL import Image as PILImage

import imagekit
from imagekit.media import PNG_SIGNATURE, mask_png
from tests.helpers import SIZE
from tests.utils.scripted_http import SECRET, Counting, Script, error, reply

EDITED = {"image": {"imageId": 42, "resolution": "2048x2048", "scaleSize": "2x", "ownerId": 1,
                    "EditInfo": {"originalPrompt": "a cat", "variationId": 3}}}
CHARGED = {"X-Credits-Consumed": "2", "X-Remaining-Credits": "88"}


def png(mode: str = "L", size=(8, 8), color=255) -> bytes:
    out = io.BytesIO()
    PILImage.new(mode, size, color).save(out, format="PNG")
    return out.getvalue()


@pytest.mark.parametrize(
    ("call", "path", "body"),
    [
        (lambda img: img.enhance("4x"), "/api/images/7/enhance", {"scaleSize": "4x"}),
        (lambda img: img.outpaint(canvas=(1024, 768), size=(512, 512), at=(-10, 20)), "/api/images/7/outpaint",
         {"canvasSize": [1024, 768], "originalImageSize": [512, 512], "originalImageLocation": [-10, 20]}),
        (lambda img: img.retry(), "/api/images/7/retry", {}),
        (lambda img: img.retry(strength="subtle"), "/api/images/7/retry", {"strength": "subtle"}),
        (lambda img: img.remove_bg(), "/api/images/7/removeBg", None),
        (lambda img: img.vectorize(), "/api/images/7/vectorize", None),
        (lambda img: img.upsize(), "/api/images/7/upsize", None),
    ],
)
def test_json_edits(mock, call, path, body):
    script = Script(reply(200, EDITED, CHARGED))
    result = call(mock(script).image(7))
    request = script.requests[0]
    assert request.method == "POST" and request.url.path == path
    assert (script.body() if body is not None else request.content) == (body if body is not None else b"")
    assert request.headers["X-Platform"] == "api" and re.fullmatch(r"[0-9a-f]{32}", request.headers["X-Request-Id"])
    assert (result.id, result.resolution, result.status) == (42, "2048x2048", None)
    assert (result.credits_charged, result.credits_remaining) == (2, 88)
    assert result.request_id == request.headers["X-Request-Id"]
    assert result.info.edit_info.variation_id == 3


def _meta_or_edited(request: httpx.Request) -> httpx.Response:
    """The image's metadata (8x8) for a GET, an edit result for anything else."""
    return reply(200, {"imageId": 7, "resolution": "8x8"} if request.method == "GET" else EDITED)


def test_fill_and_clean_up_send_a_png_mask_as_multipart(mock):
    script = Script(_meta_or_edited)
    client = mock(script)
    client.image(7).fill(np.ones((8, 8), dtype=bool), "a red balloon", negative="text")
    client.image(7).clean_up(png())
    assert [request.method for request in script.requests] == ["GET", "POST", "GET", "POST"]
    fill, clean = script.requests[1::2]
    assert fill.url.path == "/api/images/7/fill" and clean.url.path == "/api/images/7/cleanUp"
    for request in (fill, clean):
        assert request.headers["content-type"].startswith("multipart/form-data")
        assert b'name="mask"; filename="mask.png"' in request.content and PNG_SIGNATURE in request.content
        assert b"Content-Type: image/png" in request.content
    assert b'name="prompt"\r\n\r\na red balloon' in fill.content and b'name="negative"\r\n\r\ntext' in fill.content


def test_a_given_request_id_is_used(mock):
    script = Script(reply(200, EDITED))
    mock(script).edits.upsize(7, request_id="my-edit-1")
    assert script.requests[0].headers["X-Request-Id"] == "my-edit-1"


def test_an_edit_timeout_is_the_request_timeout(mock):
    script = Script(reply(200, EDITED))
    mock(script).image(7).enhance(timeout=2.5)
    assert script.requests[0].extensions["timeout"]["read"] == 2.5


@pytest.mark.parametrize(("answer", "status"), [("cancelled", "cancelled"), ("not_running", "not_running")])
def test_a_timed_out_edit_is_cancelled_before_the_error_surfaces(mock, answer, status):
    script = Script(httpx.ReadTimeout("timed out"), on_cancel=answer)
    with pytest.raises(imagekit.APITimeoutError) as info:
        mock(script).image(7).enhance("2x", request_id="rid-1", timeout=0.1)
    assert script.cancels == ["rid-1"] and len(script.requests) == 1
    assert (info.value.request_id, info.value.cancel_status, info.value.may_have_executed) == ("rid-1", status, True)


def test_a_dropped_edit_is_cancelled_too(mock):
    script = Script(httpx.RemoteProtocolError("Server disconnected without sending a response."))
    with pytest.raises(imagekit.APIConnectionError) as info:
        mock(script).image(7).remove_bg(request_id="rid-2")
    assert script.cancels == ["rid-2"] and info.value.cancel_status == "cancelled"


def test_an_edit_that_never_left_is_not_cancelled(mock):
    script = Script(httpx.ConnectError("refused"))
    with pytest.raises(imagekit.APIConnectionError) as info:
        mock(script).image(7).remove_bg()
    assert script.cancels == [] and info.value.cancel_status is None


def test_a_failing_cancel_does_not_hide_the_original_error(mock, caplog):
    script = Script(httpx.ReadTimeout("timed out"), on_cancel=error(400, "invalid_request"))
    with pytest.raises(imagekit.APITimeoutError) as info:
        mock(script).image(7).upsize(request_id="r3")
    assert script.cancels == ["r3"] and info.value.cancel_status is None and "could not cancel edit r3" in caplog.text


def test_an_edit_cancelled_on_the_server_raises_edit_cancelled(mock):
    script = Script(error(409, "edit_cancelled"))
    with pytest.raises(imagekit.EditCancelledError):
        mock(script).image(7).upsize()
    assert script.cancels == []


def test_cancel_edit_returns_the_services_answer(mock):
    script = Script(reply(200, {}), on_cancel="not_running")
    assert mock(script).cancel_edit("abc/def") == "not_running"
    assert script.cancels == ["abc%2Fdef"]


def test_keyboard_interrupt_during_a_sync_edit_cancels_it():
    script = Script(KeyboardInterrupt())
    client = imagekit.Client("http://service.test", SECRET, transport=script.transport)
    with pytest.raises(KeyboardInterrupt):
        client.image(7).enhance("2x", request_id="rid-k")
    assert script.cancels == ["rid-k"]


def test_keyboard_interrupt_during_an_async_edit_cancels_it():
    script = Script(KeyboardInterrupt())

    async def main() -> None:
        async with imagekit.AsyncClient("http://service.test", SECRET, transport=script.transport) as client:
            await client.image(7).enhance("2x", request_id="rid-ak")

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(main())
    assert script.cancels == ["rid-ak"]


@pytest.mark.anyio
async def test_cancelling_the_awaiting_task_cancels_the_edit_on_the_server():
    cancels: list[str] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        if "/cancelEdit/" in request.url.path:
            await anyio.sleep(0.01)  # a cancel that needs the loop: it must survive the caller's cancellation
            cancels.append(request.url.path.rsplit("/", 1)[1])
            return reply(200, "cancelled")
        scope.cancel()  # the edit has reached the service: now its caller gives up on it
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    scope = anyio.CancelScope()
    async with imagekit.AsyncClient("http://service.test", SECRET, transport=httpx.MockTransport(handler)) as client:
        with scope:
            await client.image(7).upsize(request_id="rid-c")
    assert scope.cancelled_caught and cancels == ["rid-c"]


@pytest.mark.parametrize(
    "mask",
    [
        PILImage.new("L", (4, 3), 255),
        np.zeros((3, 4), dtype=bool),
        np.full((3, 4), 255, dtype=np.uint8),
        np.zeros((3, 4, 4), dtype=np.uint8),
    ],
    ids=["pil", "bool-array", "uint8-array", "rgba-array"],
)
def test_masks_become_png(mask):
    data = mask_png(mask)
    assert data.startswith(PNG_SIGNATURE) and PILImage.open(io.BytesIO(data)).size == (4, 3)


def test_bool_masks_are_0_or_255():
    mask = np.zeros((2, 2), dtype=bool)
    mask[0, 0] = True
    assert np.asarray(PILImage.open(io.BytesIO(mask_png(mask)))).tolist() == [[255, 0], [0, 0]]


def test_mask_from_path_bytes_and_other_formats(tmp_path):
    raw = png()
    (tmp_path / "m.png").write_bytes(raw)
    assert mask_png(tmp_path / "m.png") == raw and mask_png(str(tmp_path / "m.png")) == raw and mask_png(raw) == raw
    jpeg = io.BytesIO()
    PILImage.new("L", (5, 5), 255).save(jpeg, format="JPEG")
    assert mask_png(jpeg.getvalue()).startswith(PNG_SIGNATURE)


def test_masks_of_other_dtypes_are_refused():
    with pytest.raises(TypeError, match="float64"):
        mask_png(np.zeros((2, 2)))


def test_edit_logs_never_show_the_key(mock, caplog):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(imagekit.APITimeoutError):
        mock(Script(httpx.ReadTimeout("timed out"))).image(7).upsize()
    assert SECRET not in caplog.text


# --- mask size ----------------------------------------------------------------------------------


def test_a_mask_of_another_size_is_refused_before_anything_is_sent(clients, sandbox):
    """A 9:16 mask on a 16:9 image: a ValueError naming both sizes, no edit request, no charge."""
    from tests.utils.users import make_user

    transport = Counting()
    ik = clients(sandbox.url, make_user(sandbox)[1], transport=transport)
    image = ik.create("a red robot", style=ik.styles()[0], ratio="16:9").images[0]
    short = SIZE * 9 // 16
    assert image.resolution == f"{SIZE}x{short}"
    before = ik.usage()
    tall = np.zeros((SIZE, short), dtype=bool)
    tall[50:100, 50:100] = True
    for edit in (lambda: image.fill(tall, "a kite"), lambda: image.clean_up(tall),
                 lambda: ik.edits.clean_up(image.id, tall)):
        with pytest.raises(ValueError, match=rf"{short}x{SIZE}.*{SIZE}x{short}.*resize=True"):
            edit()
    assert not [request for request in transport.requests if request.method == "POST"][1:]  # only the create
    assert ik.usage() == before


def test_resize_true_scales_the_mask_to_the_image(clients, sandbox):
    from tests.utils.users import make_user

    ik = clients(sandbox.url, make_user(sandbox)[1])
    image = ik.create("a red robot", style=ik.styles()[0], ratio="16:9", seed=5).images[0]
    width, height = SIZE, SIZE * 9 // 16
    half = np.zeros((height // 2, width // 2), dtype=bool)  # half the size: the centre quarter marked
    half[height // 8:height * 3 // 8, width // 8:width * 3 // 8] = True  # the centre of the half-size mask
    cleaned = ik.edits.clean_up(image.id, half, resize=True)  # by id: the size comes from the metadata
    before, after = np.asarray(image.pil())[..., :3], np.asarray(cleaned.pil())[..., :3]
    assert cleaned.resolution == f"{width}x{height}"
    rows, columns = slice(height * 3 // 8, height * 5 // 8), slice(width * 3 // 8, width * 5 // 8)
    assert np.array_equal(before[:height // 8], after[:height // 8]) and not np.array_equal(before[rows, columns],
                                                                                           after[rows, columns])
