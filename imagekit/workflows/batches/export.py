"""Exports: the finished images of a batch (``Batch.export``) or of a chain (``ChainResult.export``)
as a dataset Hugging Face ``datasets``, pandas and pyarrow read, in a folder or at any fsspec URL.

- ``imagefolder``: the images beside a ``metadata.jsonl`` (one line per image, ``file_name`` first):
  ``datasets.load_dataset("imagefolder", data_dir=dest, split="train")``;
- ``parquet``: ``dest`` is one Parquet file, each image the ``{"bytes", "path"}`` struct that
  ``datasets.Image`` reads, beside the same columns; the schema's ``huggingface`` metadata names the
  features, so ``datasets.load_dataset("parquet", ...)`` decodes the images (needs pyarrow:
  ``imagekit[parquet]``).

Images go one at a time (Parquet: a row group of 2 MB at a time), so memory stays flat however
large the batch. Each comes from the file its run saved where there is one, else from the service,
with its provenance written in. Failed and unfinished rows are left out; the Export says how many
were, and why.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePath
from typing import IO, TYPE_CHECKING, Any

from ...extras import require
from ...ledger.export import refuse_misnamed
from ...models.status import COMPLETED
from ...ownership import OwnedFolder
from ...progress import progress_bar
from ...provenance import Provenance
from ...provenance.embed import embed
from ...provenance.record import file_service
from ...reports.sheets import read_now
from ...storage import Location, Store, split, spool
from .outputs import provenance_of

if TYPE_CHECKING:
    from ...client import AsyncClient, Client
    from ...images import AsyncImage, Image
    from .journals.journal import ImageRecord, RowRecord
    from .rows import Row

__all__ = ["Export", "Item", "batch_items", "chain_items", "decided", "write_dataset", "source_of", "FORMATS",
           "BATCH_COLUMNS", "CHAIN_COLUMNS", "DECISION_COLUMNS"]

log = logging.getLogger("imagekit")
FORMATS = ("imagefolder", "parquet")
_WRITES: dict[str, set[str]] = {"imagefolder": set(), "parquet": {"parquet", "pq"}}
"""The names each format writes: an imagefolder is a folder, Parquet a .parquet (or .pq) file."""
BATCH_COLUMNS = {"prompt": "string", "style": "int", "style_label": "string", "ratio": "string", "count": "int",
                 "row": "int", "image_id": "int", "credits": "float", "latency": "float", "tags": "string",
                 "request_id": "string", "created_at": "timestamp"}
"""A batch export's columns (beside the image), with their types. ``tags`` is a JSON object,
``request_id`` the create's group id, ``created_at`` when the row's images were seen done (UTC)."""
DECISION_COLUMNS = {"rating": "int", "selected": "bool", "score": "float"}
"""Columns an export adds when a review desk decided on its images (``imagekit.review``): the rating
(1-5, empty when unrated), whether it is selected, its Bradley–Terry score from the votes."""
CHAIN_COLUMNS = {"step": "int", "op": "string", "params": "string", "parent_id": "int", "image_id": "int",
                 "request_id": "string", "credits": "float", "latency": "float", "tags": "string"}
"""A chain export's columns: its lineage's, for the steps that made an image."""
ROW_GROUP_BYTES = 2 << 20
"""Image bytes a Parquet row group gathers before it is written: writing one holds several times as
much (the rows, the Arrow table, the encoded pages, the file's buffer, an upload's part)."""
_FEATURES = {"string": "string", "int": "int64", "float": "float64", "bool": "bool", "timestamp": "timestamp[s, tz=UTC]"}


@dataclass
class Export:
    """What an export wrote, and what it left out."""

    location: str
    """The folder (imagefolder) or the file (parquet) written."""
    format: str
    images: int = 0
    """Images written."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Why images were left out -> how many (a row that made no image counts once)."""

    def __str__(self) -> str:
        text = f"{self.images} image{'' if self.images == 1 else 's'} exported to {self.location} ({self.format})"
        if self.left_out:
            reasons = "; ".join(f"{n} {why}" for why, n in sorted(self.left_out.items(), key=lambda kv: -kv[1]))
            text += f"; {sum(self.left_out.values())} left out: {reasons}"
        return text

    def __repr__(self) -> str:
        return f"<Export: {self}>"


@dataclass
class Item:
    """One image to export: its file name, its columns, and how to open it."""

    name: str
    values: dict[str, Any]
    open: Callable[[], AbstractContextManager[IO[bytes]]]
    """The image, its provenance inside."""


def batch_items(images: Iterable[tuple[Row, RowRecord, ImageRecord]], client: Client | AsyncClient,
                style_names: dict[int, str], tags: dict[str, str]) -> tuple[list[Item], Counter[str]]:
    """A batch's completed images as export items (see ``BATCH_COLUMNS``), and why the rest are left out."""
    from ...reports.tables import style_label

    shown_tags = json.dumps(tags, sort_keys=True)
    items: list[Item] = []
    left_out: Counter[str] = Counter()
    for row, entry, image in images:
        if image.get("id") is None or image.get("status") != COMPLETED:
            status = "failed" if image.get("status") else entry.status
            error = image.get("error") or entry.error
            left_out[f"{status} ({error})" if error else status] += 1
            continue
        record = provenance_of(row, entry, image, file_service(client.config))
        done = entry.sent_at + entry.latency if entry.sent_at is not None and entry.latency is not None else None
        values = {"prompt": row.options["prompt"], "style": row.style,
                  "style_label": None if row.style is None else style_label(row.style, style_names),
                  "ratio": row.options.get("ratio"), "count": row.count, "row": row.index, "image_id": image["id"],
                  "credits": record.credits, "latency": entry.latency, "tags": shown_tags,
                  "request_id": entry.group_id, "created_at": None if done is None else datetime.fromtimestamp(int(done), UTC)}
        name = PurePath(image["file"]).name if image.get("file") else f"{row.index:04d}-{image['id']}.png"
        items.append(Item(name, values, source_of(client, record, image.get("file"))))
    return items, left_out


def chain_items(lineage: Iterable[dict[str, Any]], images: Iterable[Image | AsyncImage],
                tags: dict[str, str]) -> tuple[list[Item], Counter[str]]:
    """The images a chain's steps made as export items with their lineage (see ``CHAIN_COLUMNS``),
    and why the other steps are left out."""
    shown_tags = json.dumps(tags, sort_keys=True)
    made = iter(images)
    items: list[Item] = []
    left_out: Counter[str] = Counter()
    for record in lineage:
        if record["status"] != "done":
            left_out[f"{record['status']} ({record['error']})" if record.get("error") else record["status"]] += 1
            continue
        image = next(made)
        values = {name: record.get(name) for name in CHAIN_COLUMNS} | {"tags": shown_tags}
        items.append(Item(f"{record['step']:02d}-{record['op']}.png", values,
                          source_of(image.client, image.provenance, None)))
    return items, left_out


def source_of(client: Client | AsyncClient, record: Provenance,
            file: str | None) -> Callable[[], AbstractContextManager[IO[bytes]]]:
    """Where an item's image comes from: the file its run saved (provenance inside already), else the service."""
    @contextmanager
    def opened() -> Iterator[IO[bytes]]:
        if file is not None:
            store, name = split(file)
            if store.exists(name):
                with store.reader(name) as stored:
                    yield stored
                return
        with spool() as raw, spool() as ready:
            raw.write(read_now(client, record.image_id))
            raw.seek(0)
            embed(raw, ready, record.text_fields())
            ready.seek(0)
            yield ready

    return opened


def decided(items: list[Item], columns: dict[str, str], client: Client | AsyncClient,
            journal: str | None) -> dict[str, str]:
    """``columns`` with ``DECISION_COLUMNS`` when a review desk decided on some of ``items``' images
    (each item then carries its own), else as they are."""
    from ...decisions.log import standing
    from ...provenance.record import service_of

    found = standing(service_of(file_service(client.config)), [int(item.values["image_id"]) for item in items],
                     journal)
    if found is None:
        return columns
    for item in items:
        item.values |= found[int(item.values["image_id"])]
    return columns | DECISION_COLUMNS


def write_dataset(items: list[Item], columns: dict[str, str], dest: Location, format: str, left_out: Counter[str], *,
                  overwrite: bool = False, progress: bool = True,
                  more_columns: Callable[[dict[str, str]], dict[str, str]] | None = None) -> Export:
    """Write ``items`` at ``dest`` in ``format`` (see the module); ``left_out`` is said in the answer.
    ``more_columns`` (``decided``) adds columns once ``dest`` is known to be writable: a refused
    export reads (and so opens) nothing more."""
    if format not in FORMATS:
        raise ValueError(f"format={format!r}: one of {', '.join(FORMATS)}")
    refuse_misnamed(dest, format, _WRITES)  # thesis.txt holding Parquet is a mistake, not a wish
    writer = _Folder(OwnedFolder(dest, "an export"), columns) if format == "imagefolder" else _Parquet(*split(dest), columns)
    writer.prepare(overwrite, [item.name for item in items])
    try:
        if more_columns is not None:
            writer.columns = more_columns(writer.columns)
        with writer.opened(), progress_bar(progress, total=len(items), unit="image", desc="export") as bar:
            for item in items:
                with item.open() as source:
                    writer.add(item, source)
                bar.update(1)
        writer.finish()
    except BaseException:
        writer.undo()
        raise
    export = Export(writer.location, format, len(items), dict(left_out))
    log.info("%s", export)
    return export


class _Folder:
    """An imagefolder: each image a file, and metadata.jsonl written line by line beside them, in a
    folder that is empty or holds an earlier export (its manifest: only that is replaced)."""

    def __init__(self, folder: OwnedFolder, columns: dict[str, str]) -> None:
        self.folder, self.store, self.columns, self.location = folder, folder.store, columns, folder.location

    def prepare(self, overwrite: bool, names: list[str]) -> None:
        self.folder.open(replace=overwrite)
        try:
            self.folder.claim("metadata.jsonl", *names)  # all at once: one manifest write, and a name taken refused first
        except BaseException:
            self.folder.undo()
            raise

    def undo(self) -> None:
        self.folder.undo()

    def finish(self) -> None:
        self.folder.finish()

    @contextmanager
    def opened(self) -> Iterator[None]:
        """metadata.jsonl open while the images are added; it appears once they all are."""
        with self.store.writer("metadata.jsonl") as self.metadata:
            yield

    def add(self, item: Item, source: IO[bytes]) -> None:
        with self.store.writer(item.name) as sink:
            shutil.copyfileobj(source, sink, 1 << 20)
        line = {"file_name": item.name} | {name: _plain(item.values.get(name)) for name in self.columns}
        self.metadata.write((json.dumps(line, ensure_ascii=False) + "\n").encode())


class _Parquet:
    """One Parquet file, written a row group at a time."""

    def __init__(self, store: Store, name: str, columns: dict[str, str]) -> None:
        self.store, self.name, self.columns, self.location = store, name, columns, store.url(name)
        self.pa = require("pyarrow", "parquet")
        self.pq = require("pyarrow.parquet", "parquet")
        self._rows: list[dict[str, Any]] = []
        self._bytes = 0

    def prepare(self, overwrite: bool, names: list[str]) -> None:
        if self.store.exists(self.name) and not overwrite:
            raise FileExistsError(f"{self.location} exists: pass overwrite=True to replace it")
        self.store.make()

    def undo(self) -> None:
        """Nothing: the file appears only once whole (``Store.writer``)."""

    def finish(self) -> None:
        """Nothing: the file replaced the earlier one as it appeared."""

    def schema(self) -> Any:
        pa = self.pa
        types = {"string": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(),
                 "timestamp": pa.timestamp("s", tz="UTC")}
        image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
        features = {"image": {"_type": "Image"}} | {name: {"dtype": _FEATURES[kind], "_type": "Value"}
                                                    for name, kind in self.columns.items()}
        return pa.schema([("image", image), *((name, types[kind]) for name, kind in self.columns.items())],
                         metadata={"huggingface": json.dumps({"info": {"features": features}})})

    @contextmanager
    def opened(self) -> Iterator[None]:
        """The file open while the images are added; it appears once they all are."""
        self._schema = self.schema()
        with self.store.writer(self.name) as sink:
            # The image bytes are PNG already: not compressed again, dictionary-encoded or given statistics.
            self._writer = self.pq.ParquetWriter(sink, self._schema, compression={"image.bytes": "NONE"},
                                                 use_dictionary=list(self.columns), write_statistics=list(self.columns))
            try:
                yield
                self._flush()
            finally:
                self._writer.close()

    def add(self, item: Item, source: IO[bytes]) -> None:
        data = source.read()
        self._rows.append({"image": {"bytes": data, "path": item.name}} | item.values)
        self._bytes += len(data)
        if self._bytes >= ROW_GROUP_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self._rows:
            self._writer.write_table(self.pa.Table.from_pylist(self._rows, schema=self._schema))
            self._rows, self._bytes = [], 0


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value
