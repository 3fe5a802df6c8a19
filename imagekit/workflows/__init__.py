"""Workflows over the client: batch create (``Client.batch``, ``grid``) and edit chains (``chain``).

Light to import: pandas, matplotlib and tqdm load when a table, figure or progress bar is made.
"""

from .batch import Batch
from .chain import Chain, ChainResult, chain
from .rows import grid

__all__ = ["grid", "chain", "Batch", "Chain", "ChainResult"]
