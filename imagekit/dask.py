"""Images for a Dask DataFrame of prompts, made on its cluster (the ``dask`` extra):

    import imagekit.dask
    made = imagekit.dask.generate(ddf, ik, style=3, out_dir="s3://bucket/run", journal="run.sqlite")

Its rows are a batch (``Client.batch``) run with ``engine=`` the cluster's client: the journal, the
ledger, the budget and the account's limit stay with the caller (see ``imagekit.engines``), and a
rerun with the same journal makes only what is left. The result is a Dask DataFrame again: one line
per image, the row's columns, then its image id, status, credits and file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .extras import require

if TYPE_CHECKING:
    from .client import Client

__all__ = ["generate"]


def generate(frame: Any, ik: Client, *, client: Any = None, name: str | None = None, budget: float | None = None,
             out_dir: str | None = None, journal: str | None = None, progress: bool = False, **create: Any) -> Any:
    """Each row of ``frame`` (a Dask DataFrame: a ``prompt`` column, and any create option as a
    column, ``create`` filling those it lacks) made by ``ik``'s account, its requests sent by the
    tasks of ``client`` (default: the ``distributed.Client`` of this process). Returns a Dask
    DataFrame of ``Batch.to_pandas()``'s lines, as many partitions as ``frame``."""
    distributed = require("distributed", "dask")
    dataframe = require("dask.dataframe", "dask")
    if not isinstance(frame, dataframe.DataFrame):
        from .errors import ConfigError

        raise ConfigError(f"imagekit.dask.generate takes a Dask DataFrame, not {type(frame).__name__}: "
                          "dask.dataframe.from_pandas(frame) makes one")
    client = client or distributed.get_client()
    rows = client.compute(frame).result()
    batch = ik.batch(rows, name=name, **create)
    batch.run(budget=budget, out_dir=out_dir, journal=journal, progress=progress, engine=client)
    return dataframe.from_pandas(batch.to_pandas(), npartitions=max(1, frame.npartitions))
