"""The statements that write to a ledger: an entry (once per uid), a price (an upsert), a settlement
(an entry's credits, by seq or uid, or a create's by its group id). Each is idempotent, so a write
that waited in the spool may be tried again safely."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .columns import COLUMNS
from .entries import Source, Status
from .store import Store

__all__ = ["insert", "set_credits", "price_create", "upsert_price", "WRITES"]


def insert(store: Store, row: dict[str, Any]) -> int:
    """Insert an entry's row (once per uid) and settle the budget hold it replaces; its ``seq``."""
    with store.transaction():
        store.execute(f"INSERT INTO entries ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
                      " ON CONFLICT (uid) DO NOTHING", [row[name] for name in COLUMNS])
        found = store.fetchone("SELECT seq, credits FROM entries WHERE uid = ?", (row["uid"],))
        assert found is not None
        seq, credits = int(found[0]), found[1]
        if row["hold"] is None:
            pass
        elif credits is None and row["status"] == Status.ANSWERED.value:  # answered, not yet priced:
            store.execute("UPDATE holds SET seq = ? WHERE hold_id = ?", (seq, row["hold"]))  # held till then
        else:
            store.execute("DELETE FROM holds WHERE hold_id = ?", (row["hold"],))
    return seq


def set_credits(store: Store, by: str, key: object, credits: float, source: str) -> None:
    """Give the entry whose ``by`` (seq or uid) is ``key`` its credits; its budget hold goes."""
    with store.transaction():
        store.execute(f"UPDATE entries SET credits = ?, source = ? WHERE {by} = ?", (credits, source, key))
        store.execute(f"DELETE FROM holds WHERE seq IN (SELECT seq FROM entries WHERE {by} = ?)", (key,))


def price_create(store: Store, account: str, group_id: str, credits: float, source: str) -> None:
    """Give the answered create of ``account`` that carried ``group_id`` the credits its images showed,
    unless its answer reported them (a share the reconciliation gave it is corrected); its hold goes."""
    where = ("account = ? AND group_id = ? AND operation = 'create' AND image_ids != '[]'"
             " AND (source IS NULL OR source = ?)")
    found = (account, group_id, Source.RECONCILED.value)
    with store.transaction():
        store.execute(f"DELETE FROM holds WHERE seq IN (SELECT seq FROM entries WHERE {where})", found)
        store.execute(f"UPDATE entries SET credits = ?, source = ? WHERE {where}", (credits, source, *found))


def upsert_price(store: Store, row: dict[str, Any]) -> None:
    store.execute("INSERT INTO prices (account, key, credits, source, time) VALUES (?, ?, ?, ?, ?)"
                  " ON CONFLICT (account, key) DO UPDATE SET credits = excluded.credits,"
                  " source = excluded.source, time = excluded.time",
                  (row["account"], row["key"], row["credits"], row["source"], row["time"]))


WRITES: dict[str, Callable[[Store, dict[str, Any]], object]] = {
    "entry": insert,
    "price": upsert_price,
    "settle": lambda store, p: price_create(store, p["account"], p["group_id"], p["credits"], p["source"])
    if "group_id" in p else set_credits(store, "uid" if "uid" in p else "seq", p.get("uid", p.get("seq")),
                                        p["credits"], p["source"]),
}
"""How each kind of write that waited in the spool is written."""
