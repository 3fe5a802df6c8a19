"""A retry policy per call: the attempts actually sent, for callers that loop over calls themselves."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Iterator

import anyio
import httpx
import PIL.Image
import pytest

import imagekit
from imagekit.workflows.batches.journals.journal import RowRecord
from imagekit.workflows.batches.journals.local import LocalJournal
from imagekit.workflows.batches.options import RunOptions
from imagekit.workflows.batches.probe import find_images
from tests.utils.scripted_http import SECRET, Script, error, reply


def _png() -> bytes:
    """A real PNG (saving splices provenance into its chunks, so it must parse)."""
    picture = PIL.Image.new("RGB", (64, 48), (200, 40, 90))
    out = io.BytesIO()
    picture.save(out, format="PNG")
    return out.getvalue()


def pixels(data: bytes) -> bytes:
    return PIL.Image.open(io.BytesIO(data)).convert("RGB").tobytes()


PNG = _png()
PATIENT = imagekit.RetryPolicy(max_retries=5, backoff_base=0.001, backoff_cap=0.001)
ONCE = imagekit.RetryPolicy(max_retries=0)


class CutShort(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body whose connection drops after its first chunk."""

    def __iter__(self) -> Iterator[bytes]:
        yield PNG[:100]
        raise httpx.ReadError("connection reset mid-body")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield PNG[:100]
        raise httpx.ReadError("connection reset mid-body")


def unavailable() -> httpx.Response:
    return error(503, "service_unavailable")


def test_a_call_policy_replaces_the_clients(mock):
    script = Script(unavailable())
    client = mock(script, retry_policy=PATIENT)
    with pytest.raises(imagekit.ServiceUnavailableError):
        client.images.meta(7, retry=imagekit.RetryPolicy(max_retries=1, backoff_base=0.001))
    assert len(script.requests) == 2
    with pytest.raises(imagekit.ServiceUnavailableError):
        client.images.meta(7)
    assert len(script.requests) == 2 + 6  # the client's own policy: 1 + 5 retries


def test_a_download_cut_short_is_sent_again_and_written_over(mock, tmp_path):
    # an image known by its id alone: its metadata is read first, for the file's provenance
    script = Script(reply(200, {"imageId": 7, "resolution": "1x1"}), reply(200, stream=CutShort()), reply(200, PNG))
    path = mock(script, retry_policy=PATIENT).images.save(7, tmp_path / "seven.png")
    # The second answer's image, whole (the file also carries its provenance, so compare pixels).
    assert pixels(path.read_bytes()) == pixels(PNG) and len(script.requests) == 3
    assert [p.name for p in tmp_path.iterdir()] == ["seven.png"]


def test_a_download_cut_short_counts_against_the_same_attempts(mock, tmp_path):
    # One policy for the whole download: refusals before the body and cuts inside it share it.
    script = Script(unavailable(), reply(200, stream=CutShort()), reply(200, PNG))
    policy = imagekit.RetryPolicy(max_retries=1, backoff_base=0.001)
    with pytest.raises(imagekit.APIConnectionError, match="no response"):
        mock(script).images.save(7, tmp_path / "seven.png", retry=policy)
    assert len(script.requests) == 2 and list(tmp_path.iterdir()) == []  # nothing half-written is left
    with pytest.raises(imagekit.APIConnectionError):
        mock(Script(reply(200, stream=CutShort()))).images.save(7, tmp_path / "once.png", retry=ONCE)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("reads", [1, 3])
def test_a_probe_read_is_one_call_of_probe_reads_attempts(reads):
    # It was a loop of 6 reads, each retried by the client's policy: 18 GETs for one image id.
    script = Script(unavailable())

    async def probe() -> None:
        async with imagekit.AsyncClient("http://service.test", SECRET, transport=script.transport,
                                        retry_policy=PATIENT, ledger=False) as client:
            await find_images(client, LocalJournal(), RowRecord("row", low_id=10), 1, False,
                              RunOptions(settle_delay=0, probe_reads=reads))

    with pytest.raises(imagekit.ServiceUnavailableError):
        anyio.run(probe)
    assert [r.url.path for r in script.requests] == ["/api/images/11"] * reads
