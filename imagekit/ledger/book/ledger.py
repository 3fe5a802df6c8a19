"""The book: every operation the toolkit performed, what it cost, and its tags, for one account.

Each client feeds its ledger through the recorder (see ``recorder``): every request other than a
read (create, edits, cancellations, prompts) becomes one entry with its time, operation, image ids,
request id, credits charged and where that figure came from, balances after, status, latency and
the tags in effect (``imagekit.tags``); the balances a read shows become ``balance`` entries.
Workflows add what only they can see: refunds of images that failed after an asynchronous create,
and charges of requests whose answer was lost (tagged as the operation was).

A ledger is a SQLite file (default ``$IMAGEKIT_HOME/ledger.sqlite``) or a PostgreSQL database a
team shares (``IMAGEKIT_LEDGER_URL`` or ``ledger="postgresql://..."``; see ``store``). Entries are
keyed by account, so one ledger can serve several users and services: a user on a service (a hash of
the service's identity and the user's id, the same for every key the user has), known from the first
time the service says whose the key is (``me()``); until then by a hash of base URL and API key (never
the key), which then becomes another name of the user's account (``adopt``). Budgets per tag value
(or per account) live in it too, with the alerts they sent
(see ``budgets`` and ``alerts``). A SQLite file opens on the first entry: a client that does nothing
writes nothing.
"""

from __future__ import annotations

from .reading import Reading


class Ledger(Reading):
    """Operations and credits of one account, in a SQLite file or a PostgreSQL database several
    processes and machines share; ``to_pandas()`` reads them back, with their tags.

    While a shared database cannot be reached, writes wait in a local spool (see ``outage`` and
    ``spool``) and go to the database, exactly once, when it answers again: the work is never stopped by its
    bookkeeping. Reading entries back needs the database (LedgerUnavailableError meanwhile)."""
