"""What the recorder and the workflows write into a book: entries, their credits once known,
prices and balance readings, and the lookups a lost answer is settled with."""

from __future__ import annotations

import json
import logging

from .. import budgets
from ..columns import checked, row_of
from ..entries import BALANCE, Entry, Source, Status, now
from ..writes import WRITES, insert, set_credits, upsert_price
from .core import Book

log = logging.getLogger("imagekit")


class Records(Book):
    """Entries, settlements and prices written into the book, and looked up again."""

    def record(self, entry: Entry, *, hold: int | None = None) -> Entry:
        """Append one entry (for this ledger's account unless the entry names one); ``hold`` is the
        budget hold it replaces (see ``budgets``). An entry that waits in the spool has no ``seq``."""
        entry.account = entry.account or self.account
        for note in checked(entry):  # held to what its columns mean: a bad value never poisons the ledger
            log.debug("ledger entry of %s: %s; kept as null", entry.operation, note)
        row = {**row_of(entry), "hold": hold}
        seq = self._write("entry", row, lambda: insert(self._store, row), uid=entry.uid)
        entry.seq = seq if isinstance(seq, int) else None
        if entry.seq is not None and entry.credits:
            self._alert([(entry.tags, entry.account, entry.time)])
        if entry.seq is not None and self._spool:  # what binds untagged work, learned off its path (see ``hold``)
            self._spool.remember("budgets", lambda: budgets.known(self._store))
            self._spool.remember("aliases", self._learn_aliases)  # names other processes gave accounts
        return entry

    def settle(self, entry: Entry, credits: float, source: Source) -> None:
        """Give ``entry`` its credits, once they are known (its budget hold, if any, goes)."""
        if entry.seq is not None:
            self._write("settle", {"seq": entry.seq, "credits": credits, "source": source.value},
                        lambda: set_credits(self._store, "seq", entry.seq, credits, source.value))
        elif entry.uid is not None and not (self._spool and self._spool.settle(entry.uid, credits, source.value)):
            self._write("settle", {"uid": entry.uid, "credits": credits, "source": source.value},
                        lambda: set_credits(self._store, "uid", entry.uid, credits, source.value))
        if credits:
            self._alert([(entry.tags, entry.account or self.account, entry.time)])

    def price_create(self, group_id: str, credits: float) -> None:
        """Give the create that carried ``group_id`` what its images' metadata showed it cost (``priced``),
        unless its answer reported it: a share the reconciliation gave it is corrected."""
        payload = {"account": self.account, "group_id": group_id, "credits": float(credits),
                   "source": Source.PRICED.value}
        self._write("settle", payload, lambda: WRITES["settle"](self._store, payload))

    def reading(self, balance: float) -> None:
        """Record a balance the service showed, unless the last entry is the same reading."""
        last = self._read(lambda: self._store.fetchone("SELECT operation, balance FROM entries WHERE account = ? "
                                                       "ORDER BY seq DESC LIMIT 1", (self.account,)), lambda: None)
        if last != (BALANCE, balance):
            self.record(Entry(operation=BALANCE, status=Status.ANSWERED, balance=balance, tags={}))  # untagged

    def prices(self) -> dict[str, float]:
        """Known prices of this account: ``cost:<CreditCostInfo type>``, ``style:<id>``,
        ``collection:<id>`` -> credits per operation or image (the last known while the database
        cannot be reached)."""
        def read() -> dict[str, float]:
            self._learn_aliases()
            known = dict(self._store.fetchall("SELECT key, credits FROM prices WHERE account = ?", (self.account,)))
            if self._spool:  # what estimates use while the database cannot be asked
                self._spool.remember(f"prices:{self.account}", lambda: known)
            return known

        def meanwhile() -> dict[str, float]:  # as last read, with those learned since
            assert self._spool is not None
            known = self._spool.recall(f"prices:{self.account}") or {}
            return {**known, **{row["key"]: row["credits"] for row in self._spool.waiting("price", self.account)}}

        return self._read(read, meanwhile)

    def learn_price(self, key: str, credits: float, source: Source) -> None:
        """Remember a price (``prices``' keys; the newest sighting wins)."""
        row = {"account": self.account, "key": key, "credits": float(credits), "source": source.value, "time": now()}
        self._write("price", row, lambda: upsert_price(self._store, row))

    def created_in_group(self, group_id: str) -> tuple[list[int], float | None]:
        """Images and credits of the answered create that carried ``group_id`` (empty if none)."""
        def waiting() -> tuple[list[int], float | None]:
            found = [e for e in self._waiting() if e["group_id"] == group_id and e["operation"] == "create"
                     and e["image_ids"] != "[]"]
            return (json.loads(found[-1]["image_ids"]), found[-1]["credits"]) if found else ([], None)

        def read() -> tuple[list[int], float | None]:
            row = self._store.fetchone(
                "SELECT image_ids, credits FROM entries WHERE account = ? AND group_id = ? AND operation = 'create'"
                " AND image_ids != '[]' ORDER BY seq DESC LIMIT 1", (self.account, group_id))
            return (json.loads(row[0]), row[1]) if row else ([], None)

        return self._read(read, waiting)

    def credits_of(self, request_id: str) -> float | None:
        """Credits of this account's operation sent with ``request_id`` (an edit's), when known
        (not of a cancelEdit, whose entry names the request it cancelled)."""
        def waiting() -> float | None:
            found = [e for e in self._waiting() if e["request_id"] == request_id and e["operation"] != "cancelEdit"]
            return found[-1]["credits"] if found else None

        def read() -> float | None:
            row = self._store.fetchone("SELECT credits FROM entries WHERE account = ? AND request_id = ? "
                                       "AND operation != 'cancelEdit' ORDER BY seq DESC LIMIT 1",
                                       (self.account, request_id))
            return row[0] if row else None

        return self._read(read, waiting)
