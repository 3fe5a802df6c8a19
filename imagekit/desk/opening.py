"""What a desk opens on: ``review(images)`` takes a batch, a sweep (its file, or its name in a
journal), a folder imagekit saved, Images or chain results, and makes each an ``Item`` with what is
known of how it was made (nothing is sent)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from ..images import Image
from ..provenance.record import Provenance, file_service, service_of
from .desk import Desk, Item
from .saved import SavedImage

if TYPE_CHECKING:

    from ..client import Client
    from ..workflows.batches.batch import Batch
    from ..workflows.chain import ChainResult

__all__ = ["review"]

_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".svg")
"""Files of a folder a desk looks into for imagekit's provenance."""


def review(images: Any, client: Client | None = None, *, journal: str | os.PathLike[str] | None = None) -> Desk:
    """A review desk on ``images``: a Batch (its completed images; decisions go to its journal too), a
    sweep (its TOML file, or its name with its ``journal``, else IMAGEKIT_JOURNAL_URL: the images its
    journal recorded, nothing sent), a list of Images or a CreateResult, chain results (each one's last
    image), or a folder of files imagekit saved (their provenance names the images: they open from
    the files, on ``client``'s handles when given, and it must be the service that made them).
    ``client`` defaults to ``imagekit.connect()`` where the service is needed."""
    items, client, journal = _items_of(images, client, None if journal is None else os.fspath(journal))
    if not items:
        raise ValidationError("nothing to review: no completed image in what was given", field="images")
    if client is None:  # a folder opened from its files: keyed by the service its files name
        first = items[0].image
        assert isinstance(first, SavedImage)
        return Desk(items, None, journal, service=first.provenance.service, folder=str(images))
    return Desk(items, client, journal, folder=str(images) if isinstance(images, (str, os.PathLike)) else None)


def _items_of(images: Any, client: Client | None, journal: str | None) -> tuple[list[Item], Client | None, str | None]:
    from ..workflows.batches.batch import Batch
    from ..workflows.chain import ChainResult

    if isinstance(images, Batch):
        return _batch_items(images)
    if isinstance(images, (str, os.PathLike)):
        if Path(images).is_dir():
            return _folder_items(Path(images), client)
        if Path(images).is_file() and Path(images).suffix != ".toml":
            raise ValidationError(f"{os.fspath(images)} is not a folder of images imagekit saved, nor a sweep file "
                                  "(a .toml file)", field="images", where=os.fspath(images))
        return _sweep_items(os.fspath(images), client, journal)
    listed = list(images) if isinstance(images, Iterable) else [images]
    items: list[Item] = []
    for each in listed:
        if isinstance(each, ChainResult):
            items.append(_chained(each))
        elif isinstance(each, Image):
            items.append(_handled(each))
        else:
            raise ValidationError(f"a desk reviews Images, chain results, a batch or a folder, not "
                                  f"{type(each).__name__}", field="images", value=type(each).__name__)
    if not items:
        raise ValidationError("nothing to review: the list of images is empty", field="images")
    first = items[0].image
    assert isinstance(first, Image)
    return items, first.client, None


def _handled(image: Image, parent: Item | None = None) -> Item:
    origin = image.provenance
    return Item(image, prompt=origin.prompt if parent is None else parent.prompt,
                style=origin.style if parent is None else parent.style, credits=image.credits,
                parent_id=origin.parent_id)


def _chained(result: ChainResult[Image]) -> Item:
    """A chain's last image; its parent is the image the chain started from."""
    source = _handled(result.source)
    if not result.images:
        return source
    item = _handled(result.image, source)
    item.parent_id = result.source.id
    return item


def _batch_items(batch: Batch, journal: str | None = None) -> tuple[list[Item], Client, str | None]:
    names = batch._style_names()
    items = []
    for row, entry, image in batch.image_records():
        if image.get("status") != "COMPLETED" or image.get("id") is None:
            continue
        style = row.labels.get("style")
        handle: Any = batch.client.image(int(image["id"]))  # a batch of an AsyncClient: reviewed all the same
        items.append(Item(handle, prompt=row.labels.get("prompt"),
                          style=names.get(style, style) if isinstance(style, int) else style,
                          credits=entry.image_credits(image), file=image.get("file")))
    journal = journal or getattr(batch._journal, "location", None)
    client: Any = batch.client
    return items, client, None if journal in (None, ":memory:") else str(journal)


def _sweep_items(named: str, client: Client | None, journal: str | None) -> tuple[list[Item], Client, str | None]:
    """A sweep's images as its journal recorded them (nothing is sent): by its file (its rows, its
    journal), else by its name in ``journal`` (else IMAGEKIT_JOURNAL_URL); one line when neither is."""
    from ..embedded import connect
    from ..errors import ConfigError
    from ..workflows.batches.journals.either import ENV_JOURNAL_URL, journal_location
    from ..workflows.sweep_file import load_sweep

    if named.endswith(".toml"):
        sweep = load_sweep(named)
        client = client or connect()
        batch = sweep.batch(client)
        where = journal_location(journal or sweep.settings.get("journal"), sweep.settings.get("out_dir"))
        batch.entries = batch.recorded(journal or sweep.settings.get("journal"), sweep.settings.get("out_dir"))
        if not batch.entries:
            raise ValidationError(f"{named}: the sweep has not run yet (no journal records its images): "
                                  "run it first (imagekit sweep run)", field="images", where=named)
        return _batch_items(batch, None if where is None else str(where))
    if "/" in named or os.sep in named:  # a path, not a sweep's name
        raise ValidationError(f"{named}: no such folder or sweep file", field="images", value=named)
    where = journal or os.environ.get(ENV_JOURNAL_URL)
    if not where:
        beside = f" (or did you mean {named}.toml?)" if Path(f"{named}.toml").is_file() else ""
        raise ValidationError(f"{named} is not a folder or a sweep file; a sweep named {named!r} is read from its journal: "
                              f"give it (imagekit.review({named!r}, journal=...)) or set {ENV_JOURNAL_URL}{beside}",
                              field="images", value=named)
    from ..ledger.store import is_url
    from ..provenance.read import read_provenance
    from ..workflows.batches.journals.either import open_journal
    from ..workflows.batches.journals.local import LocalJournal

    if not is_url(where) and not Path(where).is_file():
        raise ConfigError(f"no journal at {where}: give the journal file the sweep runs with")
    kept = open_journal(where, named)
    try:
        recorded = kept.recorded_name() if isinstance(kept, LocalJournal) else named
        entries = kept.load()
    finally:
        kept.close()
    if not entries or (recorded is not None and recorded != named):
        raise ValidationError(f"no sweep named {named!r} in {where}" + (f" (it holds {recorded!r})" if recorded else ""),
                              field="images", value=named)
    client = client or connect()
    items = []
    for entry in entries.values():
        for image in entry.images:
            if image.get("status") == "COMPLETED" and image.get("id") is not None:
                file = image.get("file")
                record = read_provenance(file) if file and Path(file).is_file() else None
                items.append(Item(client.image(int(image["id"])), getattr(record, "prompt", None),
                                  getattr(record, "style", None), entry.image_credits(image), file=file))
    return items, client, where


def _folder_items(folder: Path, client: Client | None) -> tuple[list[Item], Client | None, str | None]:
    """A folder's images, each opened from its file (its provenance says which image it is): on
    ``client``'s handles when given (they must be its service's), else as ``SavedImage``s, which need
    no service (the one that made them may be long gone: a demo's throwaway sandbox)."""
    from ..provenance.read import read_provenance
    from .saved import SavedImage

    if not folder.is_dir():
        raise ValidationError(f"{folder} is not a folder of images imagekit saved", field="images", where=str(folder))
    here = None if client is None else service_of(file_service(client.config))
    found: list[tuple[Path, Provenance]] = []
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() not in _SUFFIXES or not path.is_file():
            continue
        try:
            record = read_provenance(path)
        except (ValueError, OSError):
            continue  # a file imagekit did not write is the user's, not an image of the service
        service = here or next((seen.service for _, seen in found if seen.service), None)
        if None not in (record.service, service) and record.service != service:
            raise ValidationError(f"{path}: image {record.image_id} is an image of {record.service}, not of {service}: "
                                  + ("give a client of that service" if client is not None else
                                     "review the images of one service at a time"),
                                  field="service", value=record.service, where=str(path))
        found.append((path, record))
    if not found:
        raise ValidationError(f"{folder} holds no image imagekit saved (no file with its provenance)",
                              field="images", where=str(folder))
    if client is None and not any(record.service for _, record in found):  # old files: the configured service's
        from ..embedded import connect

        client = connect()
    items = [Item(client.image(record.image_id) if client is not None else SavedImage(record, path), record.prompt,
                  record.style, record.credits, record.parent_id, str(path)) for path, record in found]
    return items, client, None
