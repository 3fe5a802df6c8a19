"""A ledger's database, and the spool while it cannot be reached.

Every write of a ``Ledger`` goes through ``Keeper.write`` and every read through ``Keeper.read``.
A SQLite file is written and read at once. A shared database (PostgreSQL) may stop answering: its
writes then wait in this machine's spool (see ``spool``) and reads answer from what this machine
knows, while the writer's thread (see ``writer``) tries the database again off the requests' path.
What waited is written exactly once when it answers, on close (for up to ``CLOSE_SECONDS``), or at
the end of the process; what still waits then is said in one line with where it waits.
"""

from __future__ import annotations

import atexit
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import LedgerUnavailableError
from .spool import Spool, identity
from .store import ENV_LEDGER_URL, Store, is_url, shown_location
from .writer import Writer, writers
from .writes import WRITES

__all__ = ["Keeper", "DRAIN_SECONDS", "CLOSE_SECONDS", "entries_text", "flush_command"]

DRAIN_SECONDS = 10.0
"""How long a read waits for the writer's bookkeeping before it reads what is there."""
CLOSE_SECONDS = 5.0
"""How long closing a ledger (or ending the process) keeps trying to write what waits in its spool."""
T = TypeVar("T")
U = TypeVar("U")
log = logging.getLogger("imagekit")

Written = list[tuple[str, dict[str, Any]]]
"""What waited in the spool and was written: (kind, payload) pairs, oldest first."""


class Keeper:
    """The database of one ledger location, with its spool and writer (None for a SQLite file); the
    ledgers of several accounts on one location share it. ``after_flush`` is told what waited and
    was written (the ledger sends the alerts that waited with it)."""

    def __init__(self, store: Store, spool: Spool | None, writer: Writer | None,
                 after_flush: Callable[[Written], None]) -> None:
        self.store, self.spool, self.writer = store, spool, writer
        self.after_flush = after_flush

    @property
    def location(self) -> str:
        """The database as people may see it (password hidden)."""
        return shown_location(self.store.location)

    def later(self, job: Callable[[], object]) -> None:
        """Do ``job`` (bookkeeping) on the writer's thread for a shared ledger, whose database may stop
        answering (see ``writer``); at once for a SQLite file. Reads wait for it first."""
        if self.writer is None:
            job()
        else:
            self.writer.submit(job)

    def write(self, kind: str, account: str, payload: dict[str, Any], write: Callable[[], T],
              uid: str | None = None) -> T | None:
        """``write`` to the database; while it cannot be reached, keep ``payload`` in the spool."""
        def wait() -> None:
            assert self.spool is not None
            self.spool.put(kind, account, payload, uid)
            _leaving.setdefault(self.spool.path, self)

        return self.read(write, wait)

    def read(self, read: Callable[[], T], meanwhile: Callable[[], U]) -> T | U:
        """``read`` from the database (what waits in the spool written first); while it cannot be
        reached, what ``meanwhile`` does."""
        if self.spool is None:
            return read()
        self.settled()
        if not self.spool.due():
            return meanwhile()
        if self.spool.down_since is not None and self.writer and not self.writer.here():
            self.spool.went_down()  # the next try is the writer's: only it waits on a database that
            self.writer.submit(self._probe)  # may not answer; the requests' thread goes on meanwhile
            return meanwhile()
        try:
            self.flush()
            found = read()
        except LedgerUnavailableError as exc:
            self._outage(exc)
            return meanwhile()
        self._answered()
        return found

    def flush(self) -> None:
        """Write what waits in the spool (exactly once: see ``spool``); LedgerUnavailableError while
        the database cannot be reached."""
        if self.spool is None:
            return
        with self.spool.draining() as waiting:
            for kind, payload in waiting:
                WRITES[kind](self.store, payload)
        if waiting:
            self._answered()
            self.after_flush(waiting)

    def waiting(self) -> int:
        """How many entries wait in the spool (0 for a SQLite file)."""
        self.settled()
        return self.spool.count() if self.spool else 0

    def waiting_entries(self, account: str) -> list[dict[str, Any]]:
        """The entries of ``account`` that wait in the spool, as rows."""
        self.settled()
        return self.spool.waiting("entry", account) if self.spool else []

    def settled(self) -> None:
        """Wait (for a bounded time) for the bookkeeping given to the writer so far."""
        if self.writer is not None:
            self.writer.drain(DRAIN_SECONDS)

    def leave(self) -> None:
        """Write what waits, trying for up to ``CLOSE_SECONDS`` while the database cannot be reached;
        then say in one line how many entries still wait, and where."""
        if self.spool is None or not self.waiting():
            return
        deadline = time.monotonic() + CLOSE_SECONDS
        while time.monotonic() < deadline:
            try:
                return self.flush()
            except LedgerUnavailableError:
                time.sleep(0.5)
        if waiting := self.spool.count():
            log.warning("%s %s in %s for the ledger at %s, which cannot be reached: %s writes them (as does the next "
                        "use of that ledger on this machine)", entries_text(waiting), "waits" if waiting == 1 else "wait",
                        self.spool.path, self.location, flush_command(self.store.location))

    def _probe(self) -> None:
        """Try the database again (on the writer), writing what waits if it answers."""
        try:
            self.flush()
            self._answered()
        except LedgerUnavailableError as exc:
            self._outage(exc)

    def _answered(self) -> None:
        assert self.spool is not None
        if self.spool.came_back():
            log.warning("the ledger at %s answers again: what waited in %s is written", self.location, self.spool.path)

    def _outage(self, exc: LedgerUnavailableError) -> None:
        assert self.spool is not None
        if self.spool.went_down():
            log.warning("%s; the work goes on and its entries wait in %s until it answers", exc, self.spool.path)


def flush_command(location: str) -> str:
    """The command that writes what waits for the ledger at ``location``, as one can run it: the URL
    shown here has no user or password (never printed), and without its user it names another
    spool, so the command names the URL the way the user gave it."""
    given = os.environ.get(ENV_LEDGER_URL)
    if given and is_url(given) and identity(given) == identity(location):
        return f"`imagekit ledger flush` ({ENV_LEDGER_URL} names that ledger)"
    return "`imagekit ledger flush --ledger URL`, with the ledger's URL as you gave it,"


def entries_text(count: int) -> str:
    """``count`` as ledger entries: ``1 ledger entry``, ``3 ledger entries``."""
    return f"{count} ledger entr{'y' if count == 1 else 'ies'}"


_leaving: dict[Path, Keeper] = {}
"""A keeper per spool that writes waited in during this process: what still waits is tried at exit."""


@atexit.register
def _at_exit() -> None:
    for writer in writers():  # what the writers still hold first: it may join what waits
        writer.drain(DRAIN_SECONDS)
    for keeper in list(_leaving.values()):
        keeper.leave()
