"""Budgets per tag value, kept in the shared ledger so several machines cannot overspend one together.

A budget caps the credits spent under one tag value (``experiment=grid-a``): a *hard* one refuses
new work that would pass its limit (``BudgetExceededError``, before anything is sent); every budget
warns (``BudgetWarning``) once spending reaches ``warn_at`` of its limit, and a *soft* one
(``hard=False``) warns again past the limit instead of refusing.

Reserve, then settle. Before a tagged operation is sent, its estimated cost is *held* against the
budgets of its tags in one transaction that locks those budget rows (``SELECT ... FOR UPDATE`` on
PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite): spent (the credits of the entries carrying the tag,
refunds included) + held (other work in flight, on any machine) + this cost must stay within the
limit. The answer's entry replaces the hold in one transaction; an entry whose credits are not yet
known keeps its hold until they are (``Ledger.settle``). A hold whose process died unanswered stops
counting after ``HOLD_SECONDS``.
"""

from __future__ import annotations

import json
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from ..errors import BudgetExceededError, BudgetWarning, ConfigError
from ..tags import checked_tags
from .entries import BALANCE, now
from .store import Store

__all__ = ["Budget", "HOLD_SECONDS", "one_tag", "define", "remove", "status", "hold", "refuses", "warning", "known",
           "refuse_unchecked"]

HOLD_SECONDS = 3600.0
"""How long a hold whose operation never got an entry (its process died) keeps counting."""
_EPSILON = 1e-9
_warned: set[tuple[str, str, str, str]] = set()
_warned_lock = threading.Lock()


@dataclass(frozen=True)
class Budget:
    """The credits one tag value may spend, and where it stands."""

    key: str
    value: str
    limit: float
    warn_at: float | None = 0.8
    """Share of ``limit`` at which to warn (None: never)."""
    hard: bool = True
    """Refuse new work past the limit (else only warn)."""
    spent: float = 0.0
    """Credits of the entries carrying the tag, net of refunds."""
    held: float = 0.0
    """Credits held for work in flight."""

    @property
    def left(self) -> float:
        """Credits still free (negative when a soft budget was passed)."""
        return self.limit - self.spent - self.held

    @property
    def share(self) -> float:
        """Spent and held as a share of the limit."""
        return (self.spent + self.held) / self.limit if self.limit else float("inf")

    def __str__(self) -> str:
        kind = "hard" if self.hard else "soft"
        return (f"{self.key}={self.value}: {self.spent:g} of {self.limit:g} credits spent, {self.held:g} held "
                f"({kind} budget)")


def define(store: Store, key: str, value: str, limit: float, warn_at: float | None, hard: bool) -> None:
    """Set (or replace) the budget of ``key=value``."""
    if not limit >= 0:
        raise ConfigError(f"a budget's limit is a number of credits, at least 0 (not {limit!r})")
    if warn_at is not None and not 0 < warn_at <= 1:
        raise ConfigError(f"warn_at is a share of the limit, above 0 and at most 1 (not {warn_at!r})")
    store.execute("INSERT INTO budgets (tag_key, tag_value, credit_limit, warn_at, hard, time)"
                  " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tag_key, tag_value)"
                  " DO UPDATE SET credit_limit = excluded.credit_limit, warn_at = excluded.warn_at, hard = excluded.hard, time = excluded.time",
                  (key, value, float(limit), warn_at, int(hard), now()))


def remove(store: Store, key: str, value: str) -> None:
    """Drop the budget of ``key=value`` (its spending stays in the ledger)."""
    store.execute("DELETE FROM budgets WHERE tag_key = ? AND tag_value = ?", (key, value))


def status(store: Store, key: str | None = None, value: str | None = None) -> list[Budget]:
    """Budgets (of ``key``, or of ``key=value``), each with what is spent and held now."""
    if not store.exists():
        return []
    where, params = _matching({key: value} if key is not None and value is not None else {}, key)
    rows = store.fetchall(f"SELECT tag_key, tag_value, credit_limit, warn_at, hard FROM budgets{where} "
                          "ORDER BY tag_key, tag_value", params)
    return [_with_usage(store, row) for row in rows]


def hold(store: Store, account: str, tags: dict[str, str], cost: float) -> int | None:
    """Hold ``cost`` against the budgets of ``tags``: the hold's id, or None when no budget applies.
    Raises BudgetExceededError (and holds nothing) when a hard budget would be passed."""
    where, params = _matching(tags)
    if not tags or not store.fetchone(f"SELECT 1 FROM budgets{where}", params):
        return None  # the common case costs one read and no write lock
    with store.transaction():
        # Lock first, then read the sums in a statement of their own: on PostgreSQL a statement
        # sees what was committed when it began, and the lock may be granted only after a wait.
        rows = store.fetchall(f"SELECT tag_key, tag_value, credit_limit, warn_at, hard FROM budgets{where} "
                              f"ORDER BY tag_key, tag_value{store.for_update}", params)
        store.execute("DELETE FROM holds WHERE seq IS NULL AND time < ?", (_expiry(),))
        budgets = [_with_usage(store, row) for row in rows]
        for budget in budgets:
            if refuses(budget, cost):
                raise BudgetExceededError(f"budget {budget}: this operation would cost about {cost:g} more, "
                                          "so it was not sent", budget=budget, cost=cost)
        row = store.fetchone("INSERT INTO holds (account, tags, credits, time) VALUES (?, ?, ?, ?) RETURNING hold_id",
                             (account, json.dumps(tags, sort_keys=True), float(cost), now()))
    for budget in budgets:
        _warn(store, budget, cost)
    assert row is not None
    return int(row[0])


def known(store: Store) -> list[list[Any]]:
    """Every budget as ``[key, value, limit, hard]``: what is kept for when the store cannot be asked."""
    rows = store.fetchall("SELECT tag_key, tag_value, credit_limit, hard FROM budgets ORDER BY tag_key, tag_value")
    return [[key, value, float(limit), bool(hard)] for key, value, limit, hard in rows]


def refuse_unchecked(budgets: list[list[Any]] | None, tags: dict[str, str], cost: float, where: str) -> None:
    """While the store cannot be asked: refuse an operation tagged with a hard budget's tag value, or
    any tagged one when no budget was ever seen (one might bind it). A budget is never passed on a guess."""
    if not tags:
        return
    if budgets is None:
        raise BudgetExceededError(f"the budgets of {_shown(tags)} cannot be checked (the ledger at {where} cannot be "
                                  "reached, and has not been read here before): the operation was not sent",
                                  budget=None, cost=cost)
    for key, value, limit, hard in budgets:
        if hard and tags.get(key) == value:
            budget = Budget(key, value, limit)
            raise BudgetExceededError(f"budget {key}={value} (hard) cannot be checked: the ledger at {where} cannot "
                                      "be reached, so the operation was not sent", budget=budget, cost=cost)


def _shown(tags: dict[str, str]) -> str:
    return ", ".join(f"{key}={value}" for key, value in sorted(tags.items()))


def _matching(tags: dict[str, str], key: str | None = None) -> tuple[str, list[str]]:
    """A WHERE clause for the budgets of ``tags`` (or of every value of ``key``, or all)."""
    if tags:
        pairs = " OR ".join("(tag_key = ? AND tag_value = ?)" for _ in tags)
        return f" WHERE {pairs}", [part for pair in tags.items() for part in pair]
    return (" WHERE tag_key = ?", [key]) if key is not None else ("", [])


def _with_usage(store: Store, row: tuple[Any, ...]) -> Budget:
    key, value, limit, warn_at, hard = row
    tag = store.tag_of("tags")
    # One statement, so one view: an entry and the hold it replaced are never both, or neither, seen.
    spent, held = store.fetchone(
        f"SELECT (SELECT COALESCE(SUM(credits), 0) FROM entries WHERE operation != '{BALANCE}' AND {tag} = ?),"
        f" (SELECT COALESCE(SUM(credits), 0) FROM holds WHERE {tag} = ? AND (seq IS NOT NULL OR time >= ?))",
        (key, value, key, value, _expiry())) or (0, 0)
    return Budget(key, value, float(limit), None if warn_at is None else float(warn_at), bool(hard),
                  float(spent), float(held))


def _expiry() -> str:
    return (datetime.now(UTC) - timedelta(seconds=HOLD_SECONDS)).isoformat(timespec="milliseconds")


def refuses(budget: Budget, cost: float) -> bool:
    """Whether ``budget`` refuses an operation of ``cost`` now: a hard one refuses what would pass its
    limit, and everything once nothing is left."""
    return budget.hard and (budget.left < cost - _EPSILON or budget.left <= _EPSILON)


def warning(budget: Budget, cost: float) -> Literal["warn", "over"] | None:
    """The warning an operation of ``cost`` brings: ``over`` when it passes a soft budget's limit,
    ``warn`` when spending reaches the budget's warning share, else None."""
    share = (budget.spent + budget.held + cost) / budget.limit if budget.limit else float("inf")
    if not budget.hard and share > 1 + _EPSILON:
        return "over"
    return "warn" if budget.warn_at is not None and share >= budget.warn_at - _EPSILON else None


def _warn(store: Store, budget: Budget, cost: float) -> None:
    """Warn once per process when spending reaches the warning share, and (soft) passes the limit."""
    level = warning(budget, cost)
    if level is None:
        return
    seen = (store.location, budget.key, budget.value, level)
    with _warned_lock:
        if seen in _warned:
            return
        _warned.add(seen)
    what = "passed its limit" if level == "over" else f"reached {budget.warn_at:.0%} of its limit"
    warnings.warn(f"budget {budget.key}={budget.value} {what}: {budget.spent + budget.held + cost:g} of "
                  f"{budget.limit:g} credits spent or held", BudgetWarning, stacklevel=2)


def one_tag(tag: Mapping[str, object] | None, tag_values: Mapping[str, object]) -> tuple[str, str]:
    """The one ``name=value`` a budget is for."""
    given = checked_tags({**(tag or {}), **tag_values})
    if len(given) != 1 or None in given.values():
        raise ConfigError(f"a budget is for one tag value, e.g. experiment='grid-a' (got {given or 'none'})")
    [(key, value)] = given.items()
    assert value is not None
    return key, value
