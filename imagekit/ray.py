"""Images for a Ray Dataset of prompts, made by Ray tasks (the ``ray`` extra):

    import imagekit.ray
    made = imagekit.ray.generate(dataset, ik, style=3, out_dir="s3://bucket/run", journal="run.sqlite")

Its rows are a batch (``Client.batch``) run with ``engine="ray"``: the journal, the ledger, the budget
and the account's limit stay with the caller (see ``imagekit.engines``), and a rerun with the same
journal makes only what is left. The result is a Ray Dataset again: one row per image, the row's
columns, then its image id, status, credits and file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .extras import require

if TYPE_CHECKING:
    from .client import Client

__all__ = ["generate"]


def generate(dataset: Any, ik: Client, *, address: str | None = None, name: str | None = None,
             budget: float | None = None, out_dir: str | None = None, journal: str | None = None,
             progress: bool = False, **create: Any) -> Any:
    """Each row of ``dataset`` (a Ray Dataset: a ``prompt`` column, and any create option as a column,
    ``create`` filling those it lacks) made by ``ik``'s account, its requests sent by Ray tasks (Ray as
    this process joined it, else ``ray.init(address)``). Returns a Ray Dataset of
    ``Batch.to_pandas()``'s rows."""
    data = require("ray.data", "ray")
    if not isinstance(dataset, data.Dataset):
        from .errors import ConfigError

        raise ConfigError(f"imagekit.ray.generate takes a Ray Dataset, not {type(dataset).__name__}: "
                          "ray.data.from_pandas(frame) or ray.data.from_items(rows) makes one")
    rows = dataset.to_pandas()
    batch = ik.batch(rows, name=name, **create)
    batch.run(budget=budget, out_dir=out_dir, journal=journal, progress=progress, engine="ray", address=address)
    return data.from_pandas(batch.to_pandas())
