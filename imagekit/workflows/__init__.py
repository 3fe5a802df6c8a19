"""Workflows over the client: batch create (``Client.batch``, ``grid``) and edit chains (``chain``).

In layers, each importing only those below it (the workflows' contract in pyproject.toml holds it;
``a | b`` are side by side and import neither the other):

- ``sweep_file | reproduce | chain``: a batch written down in TOML; an image made again from its
  file; edit chains;
- ``batches``: the batch engine (``Batch`` and what runs it), a package with its own order.

Light to import: pandas, matplotlib and tqdm load when a table, figure or progress bar is made.
"""

from .batches.batch import Batch
from .batches.rows import grid
from .chain import Chain, ChainResult, chain

__all__ = ["grid", "chain", "Batch", "Chain", "ChainResult"]
