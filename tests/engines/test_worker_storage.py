"""Images an engine's workers store (``outputs.store_fetched`` on a worker, ``ByWorkers`` here): a
worker writes only into the run's own folder as it sees it (its manifest carries the run's token and
lists the name), whole, with the image's provenance inside; what it says it wrote is read back here;
a folder the workers do not share is told once, and this process stores the images instead. The
engines' files run the same on a real Dask cluster and a local Ray (``*_engine.py``)."""

from __future__ import annotations

import logging

import anyio
import pytest

import imagekit
from imagekit.engines.task import Outgoing
from imagekit.provenance import read_provenance
from imagekit.storage import Store
from imagekit.workflows.batches.outputs import (
    ByWorkers,
    claim_out_dir,
    file_name,
    provenance_of,
    store_fetched,
    store_image,
)
from tests.utils.service import public_style
from tests.utils.users import make_user


class InThisProcess:
    """An engine whose tasks run on a thread of this process: the workers' side of ``ByWorkers``
    without a cluster (the cluster's own tests are in ``*_engine.py``)."""

    name = "test"

    def __init__(self) -> None:
        self.calls = 0

    async def call(self, function, *args, wait):
        self.calls += 1
        return await anyio.to_thread.run_sync(function, *args)


@pytest.fixture
def made(box, tmp_path):
    """A batch of two rows run without out_dir (its images on the service), its folder claimed as a
    run would claim it; the user's key."""
    _, key = make_user(box, "pro")
    with imagekit.Client(box.url, key, ledger=False) as ik:
        batch = ik.batch(["a kite", "a boat"], style=public_style(box)).run(progress=False)
    store = Store(tmp_path / "out")
    folder = claim_out_dir(store, batch.rows)
    yield batch, store, folder, key
    folder.settle()


async def store_all(box, key: str, batch, store: Store, workers: ByWorkers) -> list[str]:
    """Each row's first image stored as a run stores it, the workers asked first; where each went."""
    async with imagekit.AsyncClient(box.url, key, ledger=False) as client:
        return [await store_image(client, store, file_name(row, 0), provenance_of(
            row, batch.entries[row.key], batch.entries[row.key].images[0], box.url), workers) for row in batch.rows]


def _outgoing(box, key: str, image_id: int) -> Outgoing:
    client = imagekit.AsyncClient(box.url, key, ledger=False)
    return Outgoing.of(client.images.download_request(image_id), b"")


def test_a_worker_writes_only_into_the_runs_own_folder_and_only_the_names_it_lists(made, box, tmp_path):
    batch, store, folder, key = made
    row = batch.rows[0]
    entry = batch.entries[row.key]
    image = entry.images[0]
    record = provenance_of(row, entry, image, box.url)
    name, fields = file_name(row, 0), record.text_fields()
    outgoing = _outgoing(box, key, image["id"])

    assert store_fetched(outgoing, store.location, name, folder.token, fields) == ""
    assert read_provenance(store.url(name)).image_id == image["id"]
    # another run's token, a name the manifest does not list, a path, a folder with no manifest: nothing written
    assert "another run's manifest" in store_fetched(outgoing, store.location, file_name(row, 1), "x" * 32, fields)
    assert "another run's manifest" in store_fetched(outgoing, store.location, "mine.png", folder.token, fields)
    assert "not a file name" in store_fetched(outgoing, store.location, "../mine.png", folder.token, fields)
    elsewhere = tmp_path / "elsewhere"
    assert "no manifest of the run" in store_fetched(outgoing, str(elsewhere), name, folder.token, fields)
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == sorted([".imagekit-manifest.json", name])
    assert not elsewhere.exists() and not (tmp_path / "mine.png").exists()


def test_a_folder_the_workers_do_not_share_is_told_once_and_stored_here(made, box, caplog):
    batch, store, folder, key = made
    engine = InThisProcess()
    workers = ByWorkers(engine, store, "not-this-runs-token")  # as a worker that sees another folder there

    with caplog.at_level(logging.WARNING, logger="imagekit"):
        stored = anyio.run(store_all, box, key, batch, store, workers)
    told = [record.getMessage() for record in caplog.records if "do not store the images" in record.getMessage()]
    assert len(told) == 1 and store.location in told[0] and "give an out_dir they share" in told[0], told
    assert engine.calls == 1 and workers.stored == 0  # asked once, then this process stored both
    assert [read_provenance(path).image_id for path in stored] == [batch.entries[row.key].images[0]["id"]
                                                                  for row in batch.rows]


def test_what_the_workers_store_is_read_back_and_counted(made, box):
    batch, store, folder, key = made
    engine = InThisProcess()
    workers = ByWorkers(engine, store, folder.token)

    stored = anyio.run(store_all, box, key, batch, store, workers)
    assert engine.calls == workers.stored == 2
    assert [read_provenance(path).image_id for path in stored] == [batch.entries[row.key].images[0]["id"]
                                                                  for row in batch.rows]
