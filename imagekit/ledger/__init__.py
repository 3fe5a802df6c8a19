"""The credit ledger: every operation the toolkit performed, what it cost, its tags and budgets.

One home per concern, each layer importing only those above it in this list (held by the ledger's
contract in pyproject.toml), never the workflows, which import the ledger:

- ``entries``: what is stored (``Entry``, its ``Status`` and credit ``Source``), account and service ids;
- ``columns``: what each column means, and values held to it on the way in and out;
- ``store``: where (a SQLite file or a PostgreSQL database a team shares);
- ``periods``: the day, week or month (in a time zone), or the plan's month, a budget counts over;
- ``spool``: where writes wait while a shared database cannot be reached, named by its identity;
- ``writer``: the thread that does a shared ledger's bookkeeping off the requests' thread;
- ``writes``: the idempotent statements that write an entry, a price, a settlement, an account's other name;
- ``outage``: the ledger's database as its book sees it, and the spool while a shared one cannot be reached;
- ``budgets``: caps per tag value (or account), held and settled in the store, per period;
- ``alerts``: told once per share of a budget and period, ledger-wide (log, notebook, callback, webhook);
- ``prices``: the one price model, used by the recorder and by every estimate;
- ``reconcile``: the balances the service reported against the entries;
- ``forecasts``: when budgets and credits run out at the recent rate, counting each period's reset;
- ``export``: one row per charge, as CSV, Parquet or a FinOps FOCUS file;
- ``book``: ``Ledger``, the account's book over a store (a package: its face and the parts its
  methods group into);
- ``recorder``: the HTTP hook a client wires in to feed its ledger.
"""

from .alerts import Alert
from .book import ENV_LEDGER_URL, Ledger, default_path
from .budgets import Budget
from .entries import BALANCE, Entry, Source, Status, account_of, answered, sandbox_account
from .prices import Prices

__all__ = ["Ledger", "Entry", "Status", "Source", "Budget", "Alert", "Prices", "BALANCE", "answered", "account_of",
           "sandbox_account", "default_path", "ENV_LEDGER_URL"]
