"""The votes leaving the notebook: a preference dataset in the Pick-a-Pic column layout.

One Parquet row per vote: ``caption`` (the prompt), ``image_0_uid`` and ``image_1_uid`` (the two image
ids, the lower first, so the winner's place says nothing), ``label_0`` and ``label_1`` (1 and 0 for the
better one, 0.5 each for a tie), ``best_image_uid`` (empty for a tie) and ``image_0``/``image_1``, each
image's file (``{"bytes", "path"}`` with its provenance inside) as ``datasets.Image`` reads it. The
schema names its features, so ``datasets.load_dataset("parquet", data_files=dest)`` decodes the images.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from ..extras import require
from ..storage import Location, split

if TYPE_CHECKING:
    from .desk import Desk

__all__ = ["write_preferences", "PREFERENCE_COLUMNS"]

PREFERENCE_COLUMNS = ("caption", "image_0_uid", "image_1_uid", "label_0", "label_1", "best_image_uid",
                      "image_0", "image_1")
"""The columns of a preference export, in order."""


def write_preferences(desk: Desk, dest: Location, *, overwrite: bool = False) -> int:
    """Write ``desk``'s votes at ``dest`` (one Parquet file: a path or an fsspec URL); the number of votes."""
    from ..workflows.batches.export import source_of

    pa = require("pyarrow", "parquet")
    pq = require("pyarrow.parquet", "parquet")
    votes = desk.refresh().votes
    if not votes:
        raise ValidationError("there are no votes to export: vote first (desk.vote(winner, loser))", field="votes")
    store, name = split(dest)
    if store.exists(name) and not overwrite:
        raise FileExistsError(f"{store.url(name)} exists: pass overwrite=True to replace it")
    by_id = {item.id: item for item in desk.items}
    files: dict[int, dict[str, Any]] = {}

    def image(image_id: int) -> dict[str, Any]:
        if image_id not in files:  # an image in several votes is read once
            item = by_id[image_id]
            with source_of(desk.client, item.image.provenance, item.file)() as source:
                files[image_id] = {"bytes": source.read(), "path": f"{image_id}.png"}
        return files[image_id]

    rows = []
    for winner, loser, tie in votes:
        first, second = sorted((winner, loser))
        labels = (0.5, 0.5) if tie else ((1.0, 0.0) if winner == first else (0.0, 1.0))
        caption = by_id[first].prompt or by_id[second].prompt or ""
        rows.append({"caption": caption, "image_0_uid": str(first), "image_1_uid": str(second),
                     "label_0": labels[0], "label_1": labels[1], "best_image_uid": "" if tie else str(winner),
                     "image_0": image(first), "image_1": image(second)})
    picture = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    texts = ("caption", "image_0_uid", "image_1_uid", "best_image_uid")
    features = {name: ({"_type": "Image"} if name.startswith("image_") and not name.endswith("uid") else
                       {"dtype": "string" if name in texts else "float64", "_type": "Value"})
                for name in PREFERENCE_COLUMNS}
    schema = pa.schema([(name, picture if features[name]["_type"] == "Image" else
                         pa.string() if name in texts else pa.float64()) for name in PREFERENCE_COLUMNS],
                       metadata={"huggingface": json.dumps({"info": {"features": features}})})
    store.make()
    with store.writer(name) as sink:  # the file appears once whole
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink, compression={"image_0.bytes": "NONE",
                                                                                     "image_1.bytes": "NONE"})
    return len(rows)
