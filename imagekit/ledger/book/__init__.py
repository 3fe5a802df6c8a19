"""``Ledger``, the account's book over a store, in parts, each importing only those below it (the
book's contract in pyproject.toml holds it; ``a | b`` are side by side):

- ``ledger``: ``Ledger``, the face: every part's methods on one object;
- ``reading``: entries read back, totals, exports, the reconciliation and forecasts;
- ``budgeting | records``: budgets and the holds against them; entries, settlements and prices written;
- ``core``: the store, the account and its other names, writes and reads through an outage.
"""

from ..store import ENV_LEDGER_URL
from .core import default_path
from .ledger import Ledger

__all__ = ["Ledger", "default_path", "ENV_LEDGER_URL"]
