"""A batch's images in its store (``Batch.run(out_dir=...)``): each named after its row, written with
its provenance inside as soon as its row is done, and never uploaded twice.

An image is downloaded into a spool (memory, or disk past a few MB) and then written to the store
in a worker thread, so an upload to an object store never holds up the event loop the batch polls
from. A file already in the store under its name that says it is the same image (its provenance
names the image id and the create's group id) is taken as it is: a run that died after an upload but before its journal
heard of it does not upload it again. A rerun checks that the store still holds every done row's
images (a bucket that lost files, another ``out_dir``) and stores what is missing, from the service,
without paying again (``store_missing``).

The folder is the batch's (``claim_out_dir``): one that holds files and no manifest of ours (a person's
own folder) is refused before anything is sent, and the manifest lists every name a run may write
there (its images, its journal) before the first request. A file in the store under an image's name
that is not one of its row's images (a person's own file, another batch's image) is never replaced:
a run whose names meet one is refused before anything is sent (``refuse_replacing``), and one that
meets a file put there during the run stops there.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import anyio

from ...engines import GRACE, Engine, EngineLost
from ...engines.task import Outgoing, send
from ...errors import APIError
from ...models import FAILED
from ...ownership import MANIFEST, NotOursError, OwnedFolder
from ...provenance import Provenance
from ...provenance.embed import write
from ...provenance.read import fields_of
from ...provenance.record import file_service
from ...storage import Store, spool

if TYPE_CHECKING:
    from ...client import AsyncClient
    from .journals.journal import ImageRecord, Journal, RowRecord
    from .rows import Row

__all__ = ["WRITER", "ByWorkers", "check_out_dir", "claim_out_dir", "file_name", "provenance_of", "refuse_replacing", "store_fetched", "store_image", "store_missing"]

WRITER = "a batch"
"""Who writes a batch's ``out_dir``, as its manifest and refusals say (a sweep's runs are batches)."""

log = logging.getLogger("imagekit")


def file_name(row: Row, number: int) -> str:
    """``0007-a-lighthouse-at-dusk-0.png``: the row's place, its prompt, the image's place in the row."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(row.options["prompt"]).lower()).strip("-")[:40] or "image"
    return f"{row.index:04d}-{slug}-{number}.png"


def provenance_of(row: Row, entry: RowRecord, image: ImageRecord, service: str) -> Provenance:
    """How a batch image was made: its row's create, its group id, its credits, the service
    (``Config.service``)."""
    options = {**row.options, "count": image["count"]} if "count" in image else row.options  # a remade one's create
    return Provenance.of_create(image["id"], row.options["prompt"], options, request_id=image.get("group", entry.group_id),
                                credits=entry.image_credits(image), service=service)


async def store_image(client: AsyncClient, store: Store, name: str, record: Provenance,
                      workers: ByWorkers | None = None) -> str:
    """Put the image ``record`` names into ``store`` as ``name`` (unless it is there already), by
    the engine's ``workers`` while they can, else downloaded here; return where it is."""
    if await anyio.to_thread.run_sync(_holds, store, name, record):
        return store.url(name)
    if workers is not None and await workers.put(client, name, record):
        return store.url(name)
    with spool() as buffer:
        await client.images.download(record.image_id, buffer)  # retried by the client's policy
        buffer.seek(0)
        return await anyio.to_thread.run_sync(write, buffer, store, name, record.text_fields())


class ByWorkers:
    """A run's images stored into its ``out_dir`` by the engine's workers (``Batch.run(engine=...)``):
    a task downloads each image and writes it there, so the images never travel through the
    scheduler to this process. While the workers can: a folder they do not share (a local path on
    another machine, ``memory://``) holds no manifest of this run where they look, and they write
    nothing; what a worker says it wrote is read back here and checked against the image asked for.
    The first refusal is told once and this process stores the rest, as in a local run."""

    def __init__(self, engine: Engine, store: Store, token: str) -> None:
        self.engine, self.store, self.token = engine, store, token
        self.folder = store.location if store.remote else os.path.abspath(store.location)
        """The folder as a worker opens it (a local one by its full path: a worker's own working folder differs)."""
        self.refused: str | None = None
        self.stored = 0
        """Images the workers stored in this run."""

    async def put(self, client: AsyncClient, name: str, record: Provenance) -> bool:
        """Whether a worker stored the image ``record`` names as ``name`` (False: this process stores it)."""
        if self.refused is not None:
            return False
        outgoing = Outgoing.of(client.images.download_request(record.image_id), b"")
        try:
            refused = await self.engine.call(store_fetched, outgoing, self.folder, name, self.token,
                                             record.text_fields(), wait=client.config.timeout + GRACE)
        except EngineLost:
            return False  # this image only: its task may still write it, the same bytes, whole
        if not refused and not await anyio.to_thread.run_sync(_holds, self.store, name, record):
            refused = f"what a worker wrote as {name} is not there as this process reads {self.store.location}"
        if refused:
            if self.refused is None:
                log.warning("imagekit: the %s workers do not store the images in %s (%s): this process stores "
                            "them; give an out_dir they share (a folder every worker sees, or an fsspec URL such "
                            "as s3://bucket/run)", self.engine.name, self.store.location, refused)
            self.refused = refused
            return False
        self.stored += 1
        return True


def store_fetched(outgoing: Outgoing, folder: str, name: str, token: str, fields: dict[str, str]) -> str:
    """On an engine's worker: the image ``outgoing`` downloads, written into ``folder`` as ``name``
    with ``fields`` inside (whole or not at all); "" when written, else why nothing was. Only into the
    run's own folder as this worker sees it: its manifest carries the run's ``token`` and lists
    ``name`` (a same-named folder on a machine that does not share it holds none and is left alone)."""
    if not name or name != os.path.basename(name) or name.startswith("."):
        return f"{name!r} is not a file name"
    store = Store(folder)
    try:
        with store.reader(MANIFEST) as source:
            manifest = json.load(source)
    except (OSError, ValueError):
        return f"no manifest of the run in {folder} as the worker sees it"
    if not isinstance(manifest, dict) or manifest.get("token") != token or name not in manifest.get("names", []):
        return f"{folder} holds another run's manifest as the worker sees it"
    answer = send(outgoing)
    if answer.error is not None or answer.status != 200:
        return f"its download answered {answer.error[1] if answer.error else answer.status}"
    with spool() as buffer:
        buffer.write(answer.content)
        buffer.seek(0)
        write(buffer, store, name, fields)
    return ""


def _holds(store: Store, name: str, record: Provenance) -> bool:
    """Whether ``store`` holds this image as ``name`` already: the file there names its id and request.
    NotOursError when the file there is not an image of this row (see the module)."""
    if not store.exists(name):
        return False
    found = _fields(store, name)
    if (found.get("image_id"), found.get("request_id")) == (str(record.image_id), record.request_id):
        return True
    if _row_of(found.get("request_id")) != _row_of(record.request_id):
        raise NotOursError(_not_ours(store, [name], "was put where this batch saves an image; nothing of it was "
                                                    "replaced (the image is paid for: run again once it is moved)"))
    return False


def claim_out_dir(store: Store, rows: Sequence[Row], also: Sequence[str] = ()) -> OwnedFolder:
    """Make ``store`` this run's folder before anything is sent: refuse one that holds files and no
    manifest of ours, or whose files this run's images would replace (``refuse_replacing``); then
    record every name the run may write there (its rows' images, and ``also``). The folder is held
    (locked) until ``settle`` or ``undo``: another run meeting it is refused."""
    folder = OwnedFolder(store.location, WRITER)
    folder.hold()
    try:
        folder.check()
        refuse_replacing(store, rows)
    except BaseException:
        folder.lock.release()
        raise
    folder.add([*(file_name(row, number) for row in rows for number in range(row.count)), *also])
    return folder


def check_out_dir(store: Store, rows: Sequence[Row]) -> OwnedFolder:
    """``store`` as ``claim_out_dir`` finds it fit (NotOursError in one line if not), writing nothing."""
    folder = OwnedFolder(store.location, WRITER)
    folder.check()
    refuse_replacing(store, rows)
    return folder


def refuse_replacing(store: Store, rows: Sequence[Row]) -> None:
    """Refuse a run, before anything is sent, whose images would replace files in ``store`` that are not
    its rows' own images (a person's files, another batch's): NotOursError, one line naming them."""
    present = set(store.names())
    clashes = [name for row in rows for number in range(row.count) if (name := file_name(row, number)) in present
               and _row_of(_fields(store, name).get("request_id")) != row.key]
    if clashes:
        them = "it" if len(clashes) == 1 else "them"
        raise NotOursError(_not_ours(store, clashes, f"where it saves its images: move {them}, or give another "
                                                     "out_dir; nothing was sent"))


def _fields(store: Store, name: str) -> dict[str, str]:
    """The provenance fields of the file ``name`` (none for a file imagekit did not write)."""
    try:
        with store.reader(name) as stored:
            return fields_of(stored)
    except (OSError, ValueError, SyntaxError):  # not an image, or one no reader parses: a person's file
        return {}


def _row_of(request_id: str | None) -> str | None:
    """The row whose create carried ``request_id`` (a batch's group id: ``<row key>.<attempt>``)."""
    return request_id.rpartition(".")[0] or None if request_id else None


def _not_ours(store: Store, names: Sequence[str], what: str) -> str:
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{store.location} holds {'a file' if len(names) == 1 else 'files'} this batch did not make ({shown}) {what}"


async def store_missing(journal: Journal, rows: Sequence[Row], store: Store,
                        client_of: Callable[[str | None], AsyncClient]) -> int:
    """Store again each image of a done row that ``store`` does not hold under its name (it lost the
    file, or this run writes elsewhere), downloaded by the account that made it (``client_of``);
    the number stored (a file the store holds, that the journal named another way, is only
    refiled). An image the service no longer has is left as it is, with a warning."""
    present = set(await anyio.to_thread.run_sync(store.names))  # one listing, not a look per file
    entries = await anyio.to_thread.run_sync(journal.load)
    stored = 0
    for row in rows:
        entry = entries.get(row.key)
        if entry is None or entry.status != "done":
            continue
        moved = False
        for number, image in enumerate(entry.images):
            name = file_name(row, number)
            missing = name not in present
            if image["status"] == FAILED or (not missing and _same(image.get("file"), store, name)):
                continue
            client = client_of(entry.account)
            try:
                image["file"] = await store_image(client, store, name, provenance_of(row, entry, image,
                                                                                      file_service(client.config)))
            except APIError as exc:
                log.warning("imagekit: image %s of row %s cannot be stored again: %s", image["id"], row.key, exc)
                continue
            moved, stored = True, stored + missing  # a file there already, named another way: refiled only
        if moved:
            await anyio.to_thread.run_sync(journal.refile, entry)
    return stored


def _same(recorded: str | None, store: Store, name: str) -> bool:
    """Whether the journal's ``recorded`` file is ``name`` in ``store`` (a local one by its full path:
    the same folder named from another working folder is the same place)."""
    if recorded is None or store.remote:
        return recorded == store.url(name)
    return os.path.abspath(recorded) == os.path.abspath(store.url(name))
