"""Workflows over the client: batch create (``Client.batch``, ``grid``) and edit chains (``chain``).

The batch engine in layers, each importing only those below it (the batch engine's contract in
pyproject.toml holds it; ``a | b`` are side by side and import neither the other):

- ``sweep_file | reproduce``: a batch written down in TOML; an image made again from its file;
- ``batch``: ``Batch``, what a user holds: rows, estimate, run, results, export;
- ``chain | leases | runner``: edit chains; keeping a run's leases; the runner that sends each row;
- ``export | probe | local_journal | shared_journal``: datasets out; settling a lost answer by
  reading; the journals (SQLite, PostgreSQL), each with its feed of rows;
- ``outputs | feed | sweep_tables | pacing | window | twin``: images into the store; the feed the
  journals share; the PostgreSQL tables; when to poll; the concurrency window; the batch's client;
- ``journal | options | rows | state``: the journal's interface; run settings; rows and grids; what
  a run's runners share.

Light to import: pandas, matplotlib and tqdm load when a table, figure or progress bar is made.
"""

from .batch import Batch
from .chain import Chain, ChainResult, chain
from .rows import grid

__all__ = ["grid", "chain", "Batch", "Chain", "ChainResult"]
