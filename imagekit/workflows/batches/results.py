"""What a run made, read from its journal: each image of each row as the journal knows it, the
results table (one line per image), and how to read an image's bytes (the file its run saved while
it is there, else the service)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from ...extras import needs_extra
from ...storage import split
from .journals.journal import ImageRecord, RowRecord
from .rows import Row

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["completed", "image_records", "results_table", "saved_or"]


def image_records(rows: Sequence[Row], entries: Mapping[str, RowRecord]) -> Iterator[tuple[Row, RowRecord, ImageRecord]]:
    """Each image of each row as the journal knows it (a row without images: one empty record)."""
    for row in rows:
        entry = entries.get(row.key, RowRecord(row.key))
        for image in entry.images or [{}]:
            yield row, entry, image


def completed(rows: Sequence[Row], entries: Mapping[str, RowRecord]) -> Iterator[ImageRecord]:
    """The records of the completed images, in ``results_table``'s order."""
    from ...models.status import COMPLETED

    return (image for _, _, image in image_records(rows, entries) if image.get("id") is not None
            and image.get("status") == COMPLETED)


def results_table(rows: Sequence[Row], entries: Mapping[str, RowRecord], style_names: dict[int, str]) -> pd.DataFrame:
    """One line per image (one per row without images), as ``Batch.to_pandas`` describes it; styles
    named as every report names them."""
    with needs_extra():  # a missing extra: one line naming it
        import pandas as pd

    lines = [{**row.labels, "row": row.index, "key": row.key, "image_id": image.get("id"),
              "status": image.get("status"), "row_status": entry.status,
              "error": image.get("error") or entry.error, "credits": entry.image_credits(image),
              "latency": entry.latency, "file": image.get("file"), "attempts": entry.attempts}
             for row, entry, image in image_records(rows, entries)]
    frame = pd.DataFrame(lines)
    if not len(frame):
        return frame
    if "style" in frame.columns:
        from ...reports.tables import style_label

        frame.insert(list(frame.columns).index("style") + 1, "style_name",
                     [style_label(value, style_names) for value in frame["style"]])
    return frame.astype({"image_id": "Int64"})


def saved_or(file: str | None, read: Callable[[], bytes]) -> Callable[[], bytes]:
    """How to read an image: from the file its run saved while it is there, else with ``read``."""
    def saved() -> bytes:
        if file is not None:
            store, name = split(file)
            if store.exists(name):
                with store.reader(name) as stored:
                    return stored.read()
        return read()
    return saved
