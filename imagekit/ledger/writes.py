"""The statements that write to a ledger: an entry (once per uid), a price (an upsert), a settlement
(an entry's credits, by seq or uid, or a create's by its group id), an account's other name. Each is
idempotent, so a write that waited in the spool may be tried again safely."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .columns import COLUMNS
from .entries import Source, Status
from .store import Store

__all__ = ["insert", "set_credits", "price_create", "upsert_price", "name_account", "aliases", "WRITES"]


def insert(store: Store, row: dict[str, Any]) -> int:
    """Insert an entry's row (once per uid) and settle the budget hold it replaces; its ``seq``."""
    with store.transaction():
        store.execute(f"INSERT INTO entries ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
                      " ON CONFLICT (uid) DO NOTHING", [row[name] for name in COLUMNS])
        found = store.fetchone("SELECT seq, credits FROM entries WHERE uid = ?", (row["uid"],))
        assert found is not None
        seq, credits = int(found[0]), found[1]
        # written by a process that knows its account only by its key's id: the account's, once named
        store.execute("UPDATE entries SET account = (SELECT account FROM accounts WHERE alias = ?) WHERE seq = ?"
                      " AND EXISTS (SELECT 1 FROM accounts WHERE alias = ?)", (row["account"], seq, row["account"]))
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


def name_account(store: Store, row: dict[str, Any]) -> None:
    """Make ``row["alias"]`` (an account id made from an API key) another name of ``row["account"]``
    (the user's on the service): what the ledger holds under the alias, entries, holds, prices, the
    account's budget and its alerts, becomes the account's (where the account has its own already, its
    own stays), and entries written under the alias later become the account's as they are written."""
    alias, account = row["alias"], row["account"]
    mine = "tag_key = '' AND tag_value = ?"
    with store.transaction():
        store.execute("INSERT INTO accounts (alias, account, time) VALUES (?, ?, ?) ON CONFLICT (alias)"
                      " DO UPDATE SET account = excluded.account, time = excluded.time", (alias, account, row["time"]))
        for table in ("entries", "holds"):
            store.execute(f"UPDATE {table} SET account = ? WHERE account = ?", (account, alias))
        store.execute("DELETE FROM prices WHERE account = ? AND key IN (SELECT key FROM prices WHERE account = ?)",
                      (alias, account))
        store.execute("UPDATE prices SET account = ? WHERE account = ?", (account, alias))
        store.execute(f"DELETE FROM budgets WHERE {mine} AND EXISTS (SELECT 1 FROM budgets WHERE {mine})",
                      (alias, account))
        store.execute(f"UPDATE budgets SET tag_value = ? WHERE {mine}", (account, alias))
        store.execute(f"DELETE FROM alerts WHERE {mine} AND (threshold, credit_limit, period_start) IN"
                      f" (SELECT threshold, credit_limit, period_start FROM alerts WHERE {mine})", (alias, account))
        store.execute(f"UPDATE alerts SET tag_value = ? WHERE {mine}", (account, alias))


def aliases(store: Store) -> dict[str, str]:
    """Every account's other names: alias -> account."""
    return dict(store.fetchall("SELECT alias, account FROM accounts"))


WRITES: dict[str, Callable[[Store, dict[str, Any]], object]] = {
    "entry": insert,
    "alias": name_account,
    "price": upsert_price,
    "settle": lambda store, p: price_create(store, p["account"], p["group_id"], p["credits"], p["source"])
    if "group_id" in p else set_credits(store, "uid" if "uid" in p else "seq", p.get("uid", p.get("seq")),
                                        p["credits"], p["source"]),
}
"""How each kind of write that waited in the spool is written."""
