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

A budget may count over a *period* (``day``, ``week`` or ``month`` in a time zone, or a plan's month;
see ``periods``):
then spent is what the entries of the current period cost, and a hard budget's limit is free again
at the period's turn. Without one it counts all time. The budget of an *account* (no tag: key ``""``,
value the account's id, or ``""`` for every account in the ledger) caps all its work, tagged or not.
Its *alerts* (shares of the limit) are sent by ``alerts``, once per share and period for everyone on
the ledger; ``warn_at`` stays a ``BudgetWarning`` in the process about to send (once per process and
period), judged on spent + held + this cost.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from .._error_base import warn_caller
from .._kept import KEPT
from .._urls import shown_url
from ..errors import BudgetExceededError, BudgetWarning, ConfigError
from ..tags import checked_tags
from ..validation import one_slip
from .entries import BALANCE, now
from .periods import bounds, checked_period, checked_zone, during, stamp
from .store import SKEW_SECONDS, Store, shown_location, skew_note

__all__ = ["Budget", "HOLD_SECONDS", "SKEW_SECONDS", "DEFAULT_ALERTS", "KEPT", "NEW", "settled", "one_tag", "define", "remove",
           "status", "hold", "refuses", "warning", "known", "refuse_unchecked", "matching"]

HOLD_SECONDS = 3600.0
"""How long a hold whose operation never got an entry (its process died) keeps counting, by the
database's clock (never a writer's: a machine hours fast would end the others' live holds)."""
DEFAULT_ALERTS = (0.5, 0.8, 1.0)
"""The shares of a budget's limit at which an alert is sent, unless told otherwise."""
NEW = {"warn_at": 0.8, "hard": True, "alerts": DEFAULT_ALERTS, "period": None, "tz": "UTC", "webhook": None}
"""The settings of a new budget, where not given."""
_EPSILON = 1e-9
_COLUMNS = "tag_key, tag_value, credit_limit, warn_at, hard, alerts, period, tz, webhook"
_warned: set[tuple[str, str, str, str, datetime | None]] = set()
_warned_lock = threading.Lock()
_skew_warned: set[str] = set()


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
    alerts: tuple[float, ...] = ()
    """Shares of ``limit`` at which an alert is sent, once per period (see ``alerts``)."""
    period: str | None = None
    """``day``, ``week`` or ``month`` (in ``tz``), or a plan month (``month@<plan start>``), that
    ``spent`` counts over and the limit resets on; None: all time."""
    tz: str = "UTC"
    """The IANA time zone the period's turns are in."""
    webhook: str | None = None
    """Where alerts are POSTed as JSON (by the process whose operation crossed the share)."""
    start: datetime | None = None
    """When the current period began (UTC; None: all time)."""
    end: datetime | None = None
    """When it ends, and the limit is free again (UTC; None: never)."""

    @property
    def name(self) -> str:
        """``key=value``, or the account (``""``: the whole ledger) for a budget without a tag."""
        if self.key:
            return f"{self.key}={self.value}"
        return f"account {self.value}" if self.value else "the whole ledger"

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
        return (f"{self.name}: {self.spent:g} of {self.limit:g} credits spent{during(self.period)}, {self.held:g} held "
                f"({kind} budget)")


def settled(store: Store, key: str, value: str, given: dict[str, Any]) -> dict[str, Any]:
    """The settings ``given`` (``KEPT`` where not), the others as the budget of ``key=value`` has
    them, or as a new budget's (``NEW``)."""
    row = store.fetchone("SELECT warn_at, hard, alerts, period, tz, webhook FROM budgets WHERE tag_key = ? AND "
                         "tag_value = ?", (key, value)) if store.exists() else None  # its settings, not its sums
    before = NEW if row is None else {"warn_at": row[0], "hard": bool(row[1]), "alerts": tuple(json.loads(row[2] or "[]")),
                                      "period": row[3], "tz": row[4] or "UTC", "webhook": row[5]}
    return {name: before[name] if setting is KEPT else setting for name, setting in given.items()}


def _sendable(webhook: object) -> bool:
    """Whether ``webhook`` is a URL an alert can be POSTed to (a line break in it would end the request
    line: refused when the budget is set, not on every alert)."""
    if not isinstance(webhook, str) or not webhook.startswith(("http://", "https://")):
        return False
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in webhook):
        return False
    try:
        return bool(urlsplit(webhook).hostname)
    except ValueError:
        return False


def define(store: Store, key: str, value: str, limit: float, warn_at: float | None, hard: bool,
           alerts: Sequence[float] | None = DEFAULT_ALERTS, period: str | None = None, tz: str = "UTC",
           webhook: str | None = None) -> None:
    """Set (or replace) the budget of ``key=value`` (``key`` ``""``: of the account ``value``)."""
    if isinstance(limit, bool) or not isinstance(limit, int | float) or not 0 <= limit < float("inf"):
        raise ConfigError(f"a budget's limit is a number of credits, at least 0 (not {limit!r}; to lift a budget, "
                          "remove it)")
    if not isinstance(hard, bool):
        raise ConfigError(f"hard is True (refuse work past the limit) or False (only warn), not {hard!r}")
    if warn_at is not None and not 0 < warn_at <= 1:
        raise ConfigError(f"warn_at is a share of the limit, above 0 and at most 1 (not {warn_at!r})")
    if isinstance(alerts, str) or not isinstance(alerts, Sequence | set | frozenset | None):
        raise ConfigError(f"alerts are shares of the limit, such as (0.5, 0.8, 1.0) (not {alerts!r})")
    shares = sorted({_share(share) for share in alerts or ()})
    if hard and shares and shares[-1] > 1:
        raise ConfigError(f"an alert at {shares[-1]:.0%} would never be sent: a hard budget refuses work before "
                          "its limit is passed (give shares up to 1, or hard=False to let spending pass it)")
    checked_period(period)
    checked_zone(tz)
    if webhook is not None and not _sendable(webhook):
        shown = shown_url(webhook, path=False) if isinstance(webhook, str) else webhook
        raise ConfigError("a budget's webhook is an http:// or https:// URL with a host and no spaces, tabs or line "
                          f"breaks, not {shown!r}")
    store.execute(f"INSERT INTO budgets ({_COLUMNS}, time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                  " ON CONFLICT (tag_key, tag_value) DO UPDATE SET credit_limit = excluded.credit_limit,"
                  " warn_at = excluded.warn_at, hard = excluded.hard, alerts = excluded.alerts,"
                  " period = excluded.period, tz = excluded.tz, webhook = excluded.webhook, time = excluded.time",
                  (key, value, float(limit), warn_at, int(hard), json.dumps(shares), period, tz, webhook, now()))


def _share(share: object) -> float:
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 10:
        raise ConfigError(f"an alert is a share of the limit above 0, such as 0.8 for 80 % (not {share!r})")
    return float(share)


def remove(store: Store, key: str, value: str) -> None:
    """Drop the budget of ``key=value`` (its spending stays in the ledger); ConfigError, naming the
    budgets there are, when it has none."""
    if store.exists() and store.fetchone("DELETE FROM budgets WHERE tag_key = ? AND tag_value = ? RETURNING tag_key",
                                         (key, value)):
        return
    there = [Budget(tag_key, tag_value, 0).name for tag_key, tag_value in store.fetchall("SELECT tag_key, tag_value FROM budgets ORDER BY "
                                                                   "tag_key, tag_value")] if store.exists() else []
    raise ConfigError(f"there is no budget of {Budget(key, value, 0).name} to remove; "
                      + (f"the budgets: {', '.join(there)}" if there else "no budget is set"))


def status(store: Store, key: str | None = None, value: str | None = None, at: datetime | None = None) -> list[Budget]:
    """Budgets (of ``key``, or of ``key=value``), each with what is spent (this period) and held at
    ``at`` (default: now)."""
    if not store.exists():
        return []
    where, params = ((" WHERE tag_key = ? AND tag_value = ?", [key, value]) if key is not None and value is not None
                     else (" WHERE tag_key = ?", [key]) if key is not None else ("", []))
    rows = store.fetchall(f"SELECT {_COLUMNS} FROM budgets{where} ORDER BY tag_key, tag_value", params)
    return [_with_usage(store, row, at) for row in rows]


def hold(store: Store, account: str, tags: dict[str, str], cost: float | Callable[[], float],
         at: datetime | None = None) -> int | None:
    """Hold ``cost`` (or what ``cost()`` says, once a budget applies) against the budgets of ``tags``
    and of ``account``: the hold's id, or None when no budget applies. Raises BudgetExceededError (and
    holds nothing) when a hard budget would be passed."""
    where, params = matching(tags, account)
    if not where or not store.exists():
        return None
    loose, loosely = matching(tags, account, any_case=True)
    # One read: the budgets of these tags in any case, and the tag names that have budgets (NULL value).
    rows = store.fetchall(f"SELECT tag_key, tag_value FROM budgets{loose} UNION ALL SELECT DISTINCT tag_key, NULL "
                          "FROM budgets WHERE tag_key != ''" if tags else f"SELECT tag_key, tag_value FROM budgets{loose}",
                          loosely)
    found = [(key, value) for key, value in rows if value is not None]
    _refuse_misspelt(tags, found, {key for key, value in rows if value is None})
    if not found:
        return None  # the common case costs one read and no write lock
    cost = cost() if callable(cost) else cost
    _report_skew(store, datetime.now(UTC))  # this machine's clock (``at`` may be a simulated one)
    with store.transaction():
        # Lock first, then read the sums in a statement of their own: on PostgreSQL a statement
        # sees what was committed when it began, and the lock may be granted only after a wait.
        rows = store.fetchall(f"SELECT {_COLUMNS} FROM budgets{where} ORDER BY tag_key, tag_value{store.for_update}",
                              params)
        store.execute(f"DELETE FROM holds WHERE seq IS NULL AND time < {store.now(HOLD_SECONDS)}")
        budgets = [_with_usage(store, row, at) for row in rows]
        for budget in budgets:
            if refuses(budget, cost):
                raise BudgetExceededError(f"budget {budget}: this operation would cost about {cost:g} more, "
                                          f"so it was not sent{_until(budget)}", budget=budget, cost=cost)
        row = store.fetchone(f"INSERT INTO holds (account, tags, credits, time) VALUES (?, ?, ?, {store.now()}) "
                             "RETURNING hold_id", (account, json.dumps(tags, sort_keys=True), float(cost)))
    for budget in budgets:
        _warn(store, budget, cost)
    assert row is not None
    return int(row[0])


def _report_skew(store: Store, writer: datetime) -> None:
    """Warn once per process and ledger when this machine's clock is far from the database's."""
    note = skew_note(store.clock_skew(writer), f"the ledger's database ({shown_location(store.location)})",
                     "budget holds")
    if note is None:
        return
    with _warned_lock:
        if store.location in _skew_warned:
            return
        _skew_warned.add(store.location)
    warn_caller(note, BudgetWarning)


def _until(budget: Budget) -> str:
    """When a refused budget's limit is free again, if it resets."""
    if budget.end is None:
        return ""
    return f" (its limit resets at {budget.end.astimezone(checked_zone(budget.tz)):%Y-%m-%d %H:%M} {budget.tz})"


def known(store: Store) -> list[list[Any]]:
    """Every budget as ``[key, value, limit, hard]``: what is kept for when the store cannot be asked."""
    rows = store.fetchall("SELECT tag_key, tag_value, credit_limit, hard FROM budgets ORDER BY tag_key, tag_value")
    return [[key, value, float(limit), bool(hard)] for key, value, limit, hard in rows]


def refuse_unchecked(budgets: list[list[Any]] | None, tags: dict[str, str], cost: float, where: str,
                     account: str = "") -> None:
    """While the store cannot be asked: refuse an operation bound by a hard budget (of its tag values or
    its account), or any tagged one when no budget was ever seen (one might bind it). A budget is
    never passed on a guess."""
    if budgets is None:
        if tags:
            raise BudgetExceededError(f"the budgets of {_shown(tags)} cannot be checked (the ledger at {where} cannot "
                                      "be reached, and has not been read here before): the operation was not sent",
                                      budget=None, cost=cost)
        return
    for key, value, limit, hard in budgets:
        if hard and (tags.get(key) == value if key else value in (account, "")):
            budget = Budget(key, value, limit)
            raise BudgetExceededError(f"budget {budget.name} (hard) cannot be checked: the ledger at {where} cannot "
                                      "be reached, so the operation was not sent", budget=budget, cost=cost)


def _shown(tags: dict[str, str]) -> str:
    return ", ".join(f"{key}={value}" for key, value in sorted(tags.items()))


def matching(tags: dict[str, str], account: str | None = None, *, any_case: bool = False) -> tuple[str, list[str]]:
    """A WHERE clause for the budgets of ``tags`` (``any_case``: and of tags that differ from them
    only in case) and of ``account`` (its own, and the whole ledger's); ``("", [])`` when there is
    nothing to match."""
    pair = "(lower(tag_key) = lower(?) AND lower(tag_value) = lower(?))" if any_case else "(tag_key = ? AND tag_value = ?)"
    pairs = [pair for _ in tags]
    params = [part for pair in tags.items() for part in pair]
    if account is not None:
        pairs.append("(tag_key = '' AND tag_value IN (?, ''))")
        params.append(account)
    return (f" WHERE {' OR '.join(pairs)}", params) if pairs else ("", [])


def _refuse_misspelt(tags: dict[str, str], budgets: Sequence[tuple[str, str]], budgeted: set[str]) -> None:
    """ConfigError when a tag differs only in case from a budget's (``Experiment=Grid-A`` beside
    ``experiment=grid-a``) and has none of its own, or its name is one slip from a name that has
    budgets (``experimnet``, beside budgets of ``experiment``): spelt so, the work would escape them."""
    exact = {(key, value) for key, value in budgets}
    for key, value in tags.items():
        near = [budget for budget in budgets if budget[0] and budget[0].lower() == key.lower()
                and budget[1].lower() == value.lower()]
        if near and (key, value) not in exact:
            named = f"{near[0][0]}={near[0][1]}"
            raise ConfigError(f"tag {key}={value} differs only in case from the budget of {named}, so it would not "
                              f"count against it: tag the work {named} (or set a budget of its own on {key}={value})")
    for key, value in tags.items():
        slip = next((name for name in sorted(budgeted) if key not in budgeted and key.lower() != name.lower()
                     and one_slip(key.lower(), name.lower())), None)
        if slip is not None:
            raise ConfigError(f"tag {key}={value} is one letter from {slip}, which has budgets that would not "
                              f"count this work: tag it {slip}= (or set a budget on {key} too)")


def _with_usage(store: Store, row: tuple[Any, ...], at: datetime | None) -> Budget:
    key, value, limit, warn_at, hard, alerts, period, tz, webhook = row
    start, end = bounds(period, tz or "UTC", at or datetime.now(UTC))
    if key:
        scope, scoped = f"{store.tag_of('tags')} = ?", [key, value]
    else:  # an account's budget ("" : every account's)
        scope, scoped = "(account = ? OR ? = '')", [value, value]
    during, bounded = ("", []) if start is None or end is None else (" AND time >= ? AND time < ?",
                                                                      [stamp(start), stamp(end)])
    # One statement, so one view: an entry and the hold it replaced are never both, or neither, seen.
    spent, held = store.fetchone(
        f"SELECT (SELECT COALESCE(SUM(credits), 0) FROM entries WHERE operation != '{BALANCE}' AND {scope}{during}),"
        f" (SELECT COALESCE(SUM(credits), 0) FROM holds WHERE {scope} AND (seq IS NOT NULL OR time >= "
        f"{store.now(HOLD_SECONDS)}))", (*scoped, *bounded, *scoped)) or (0, 0)
    return Budget(key, value, float(limit), None if warn_at is None else float(warn_at), bool(hard),
                  float(spent), float(held), tuple(json.loads(alerts or "[]")), period, tz or "UTC", webhook,
                  start, end)


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
    seen = (store.location, budget.key, budget.value, level, budget.start)
    with _warned_lock:
        if seen in _warned:
            return
        _warned.add(seen)
    total = budget.spent + budget.held + cost
    what = ("passed its limit" if level == "over" else "reached its limit" if total >= budget.limit - _EPSILON
            else f"reached {budget.warn_at:.0%} of its limit")
    warn_caller(f"budget {budget.name} {what}: {total:g} of {budget.limit:g} credits spent or held", BudgetWarning)


def one_tag(tag: Mapping[str, object] | None, tag_values: Mapping[str, object]) -> tuple[str, str]:
    """The one ``name=value`` a budget is for."""
    given = checked_tags({**(tag or {}), **tag_values})
    if len(given) != 1 or None in given.values():
        raise ConfigError(f"a budget is for one tag value, e.g. experiment='grid-a' (got {given or 'none'})")
    [(key, value)] = given.items()
    assert value is not None
    return key, value
