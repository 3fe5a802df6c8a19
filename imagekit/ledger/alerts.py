"""Budget alerts: told once when spending reaches a share of a budget's limit, per share, budget,
limit and period, across every process that shares the ledger.

After each write that adds spending (an entry, a settlement, what waited in a spool), the writer
compares the budgets of the entry's tags and account with their alert shares, in the period that
holds the entry's time. Each share reached is offered to the ledger's ``alerts`` table, whose key
(tag, share, limit, period start) lets one insert in: only the process whose insert went in sends
that alert, so two processes crossing at once send it once. A hard budget that refuses work sends
the shares its spending and holds (work in flight) reached, and its highest share up to 100 % as
full (``Alert.refused``), though its spending stops short of the limit.

An alert reaches the user as a log line (logger ``imagekit``), a banner when the process is a
notebook's kernel, the budget's ``on_alert`` callback when this process set one, and its
``webhook``: a JSON POST sent by a background thread (one per URL), retried with backoff, never
holding up the work.
"""

from __future__ import annotations

import atexit
import html
import json
import logging
import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from .._retry import backoff
from .._urls import guard_logs, shown_url, without_secrets
from .budgets import Budget, matching, status
from .periods import bounds, checked_zone, during, stamp
from .store import Store

__all__ = ["Alert", "check", "full", "register", "Webhooks", "webhooks", "WEBHOOK_ATTEMPTS"]

log = logging.getLogger("imagekit")
_EPSILON = 1e-9
WEBHOOK_ATTEMPTS = 6
"""How many times a webhook is tried before it is given up (said in a log line)."""
WEBHOOK_BACKOFF = (0.5, 30.0)
"""Backoff base and cap, in seconds, between a webhook's attempts."""
WEBHOOK_SECONDS = 10.0
"""How long one attempt may take."""
EXIT_SECONDS = 5.0
"""How long the end of the process waits for webhooks still to be sent."""

Callback = Callable[["Alert"], object]
_callbacks: dict[tuple[str, str, str], Callback] = {}
_callbacks_lock = threading.Lock()


@dataclass(frozen=True)
class Alert:
    """A budget's spending reached one of its alert shares in a period."""

    tags: dict[str, str]
    """The budget's tag value (``{"experiment": "grid-a"}``); empty for an account's budget."""
    account: str | None
    """The account of an account's budget ("" for the whole ledger's); None for a tag's."""
    threshold: float
    """The share of the limit reached (0.8 for 80 %)."""
    spent: float
    """Credits spent in the period when it was reached."""
    limit: float
    period: str | None
    """``day``, ``week``, ``month``, or None (all time)."""
    period_start: datetime | None
    """When the period began (UTC; None: all time)."""
    period_end: datetime | None
    """When it ends and the limit is free again (UTC; None: never)."""
    time: datetime
    """When it was reached (UTC)."""
    tz: str = "UTC"
    """The time zone of the period's turns."""
    held: float = 0.0
    """Credits held then for work in flight (a hard budget full of them refuses more)."""
    refused: float | None = None
    """The credits of the operation a hard budget refused, when that refusal, not spending, reached
    the share (the budget is full for work: the next operation would pass its limit)."""

    @property
    def budget(self) -> str:
        """The budget's name: ``key=value``, or its account."""
        if self.tags:
            return ", ".join(f"{key}={value}" for key, value in self.tags.items())
        return f"account {self.account}" if self.account else "the whole ledger"

    def __str__(self) -> str:
        when = ""
        if self.period and self.period_start is not None:
            local = self.period_start.astimezone(checked_zone(self.tz))
            when = f"{during(self.period)} (from {local:%Y-%m-%d %H:%M} {self.tz})"
        held = f", {self.held:g} held" if self.held else ""
        if self.refused is not None:
            return (f"budget {self.budget} is full{when}: it refused an operation of about {self.refused:g} credits "
                    f"with {self.spent:g} of {self.limit:g} credits spent{held}")
        return (f"budget {self.budget} reached {self.threshold:.0%} of its limit{when}: "
                f"{self.spent:g} of {self.limit:g} credits spent{held}")

    def to_json(self) -> dict[str, Any]:
        """What a webhook receives: the fields, times in ISO 8601, and ``text``, the one-line message."""
        found = asdict(self)
        for name in ("period_start", "period_end", "time"):
            found[name] = None if found[name] is None else stamp(found[name])
        return {**found, "text": str(self)}


def register(location: str, key: str, value: str, callback: Callback | None) -> None:
    """Call ``callback`` with this process's alerts of the budget ``key=value`` in the ledger at
    ``location`` (None: no more)."""
    with _callbacks_lock:
        if callback is None:
            _callbacks.pop((location, key, value), None)
        else:
            _callbacks[(location, key, value)] = callback


def check(store: Store, tags: dict[str, str], account: str | None, at: datetime) -> list[Alert]:
    """Send the alerts the spending of ``tags`` and ``account`` reached in the period holding ``at``
    (those another process sent already are not sent again); the alerts this call sent."""
    where, params = matching(tags, account)
    if not where:
        return []
    rows = store.fetchall(f"SELECT tag_key, tag_value, credit_limit, alerts, period, tz FROM budgets WHERE"
                          f" ({where.removeprefix(' WHERE ')}) AND alerts IS NOT NULL AND alerts != '[]'", params)
    sent = []
    for key, value, limit, shares, period, tz in rows:
        start, _ = bounds(period, tz or "UTC", at)
        sent_before = {float(threshold) for (threshold,) in store.fetchall(
            "SELECT threshold FROM alerts WHERE tag_key = ? AND tag_value = ? AND credit_limit = ? AND period_start = ?",
            (key, value, limit, "" if start is None else stamp(start)))}
        if set(json.loads(shares)) <= sent_before:
            continue  # every alert of this period is sent: its spending need not be summed
        for budget in status(store, key, value, at):
            sent += _offer(store, budget, budget.spent / budget.limit if budget.limit else _infinite(budget), at)
    return sent


def full(store: Store, budget: Budget, at: datetime, cost: float) -> list[Alert]:
    """A hard budget refused work of ``cost``: send the alerts its spending (and holds) reached, and
    its highest share up to 100 %, which says it is full, if not sent yet in this period."""
    if not budget.hard or not budget.alerts:
        return []
    reached = (budget.spent + budget.held) / budget.limit if budget.limit else _infinite(budget)
    top = [share for share in budget.alerts if share <= 1 + _EPSILON][-1:]
    return _offer(store, budget, reached, at) + _offer(store, budget, 1.0, at, only=top, refused=cost)


def _infinite(budget: Budget) -> float:
    return float("inf") if budget.spent > _EPSILON else 0.0


def _offer(store: Store, budget: Budget, share: float, at: datetime, *, only: list[float] | None = None,
           refused: float | None = None) -> list[Alert]:
    sent = []
    for threshold in budget.alerts if only is None else only:
        if share < threshold - _EPSILON:
            continue
        row = store.fetchone("INSERT INTO alerts (tag_key, tag_value, threshold, credit_limit, period_start, spent, time)"
                             " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1",
                             (budget.key, budget.value, threshold, budget.limit,
                              "" if budget.start is None else stamp(budget.start), budget.spent, stamp(at)))
        if row is None:
            continue  # another process (or an earlier write) sent it
        alert = Alert(tags={budget.key: budget.value} if budget.key else {},
                      account=None if budget.key else budget.value, threshold=threshold, spent=budget.spent,
                      limit=budget.limit, period=budget.period, period_start=budget.start, period_end=budget.end,
                      time=at.astimezone(UTC), tz=budget.tz, held=budget.held, refused=refused)
        _deliver(store.location, budget, alert)
        sent.append(alert)
    return sent


def _deliver(location: str, budget: Budget, alert: Alert) -> None:
    """The alert as a notebook banner (in a kernel) or a warning in the log (INFO under a banner: one
    notice on the page, not two), the callback and the webhook."""
    log.log(logging.INFO if _banner(alert) else logging.WARNING, "imagekit: %s", alert)
    with _callbacks_lock:
        callback = _callbacks.get((location, budget.key, budget.value))
    if callback is not None:
        try:
            callback(alert)
        except Exception:
            log.exception("imagekit: the on_alert callback of budget %s failed", budget.name)
    if budget.webhook:
        webhooks().send(budget.webhook, alert.to_json())


def _banner(alert: Alert) -> bool:
    """A one-line banner in a notebook (when this process is a notebook's kernel); whether it showed."""
    if "IPython" not in sys.modules or "ipykernel" not in sys.modules:
        return False
    from IPython import get_ipython
    from IPython.display import HTML, display

    if get_ipython() is None:
        return False
    display(HTML(f'<div style="padding:6px 10px;border-left:4px solid #d97706;background:#fef3c7;color:#78350f">'
                 f"&#9888; {html.escape(str(alert))}</div>"))
    return True


class Webhooks:
    """Background threads that POST alerts as JSON, one per webhook URL (a receiver that is down
    holds up only its own alerts), each retried with backoff until it is answered 2xx, refused with
    a 4xx other than 408 or 429, or ``WEBHOOK_ATTEMPTS`` are spent."""

    def __init__(self) -> None:
        self._queues: dict[str, queue.Queue[dict[str, Any]]] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def send(self, url: str, payload: dict[str, Any]) -> None:
        """Queue one POST (returns at once)."""
        with self._lock:
            jobs = self._queues.setdefault(url, queue.Queue())
            thread = self._threads.get(url)
            if thread is None or not thread.is_alive():
                thread = threading.Thread(target=self._run, args=(url, jobs), daemon=True,
                                          name="imagekit alert webhooks")
                self._threads[url] = thread
                thread.start()
        jobs.put(payload)

    def drain(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the POSTs queued so far; False if some are still to go."""
        deadline = time.monotonic() + seconds
        with self._lock:
            queues = list(self._queues.values())
        for jobs in queues:
            with jobs.all_tasks_done:
                while jobs.unfinished_tasks:
                    if (left := deadline - time.monotonic()) <= 0:
                        return False
                    jobs.all_tasks_done.wait(left)
        return True

    def undelivered(self) -> int:
        """How many POSTs queued so far are still to be delivered or given up."""
        with self._lock:
            return sum(jobs.unfinished_tasks for jobs in self._queues.values())

    def _run(self, url: str, jobs: queue.Queue[dict[str, Any]]) -> None:
        import httpx

        with httpx.Client(timeout=WEBHOOK_SECONDS) as client:
            while True:
                payload = jobs.get()
                try:
                    _post(client, url, payload)
                finally:
                    jobs.task_done()


def _post(client: Any, url: str, payload: dict[str, Any]) -> None:
    import httpx

    shown = shown_url(url, path=False)
    guard_logs(url, path=False)
    for attempt in range(WEBHOOK_ATTEMPTS):
        try:
            answer = client.post(url, json=payload)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # one set before webhooks were checked: said, not raised
            why = without_secrets(f"{type(exc).__name__}: {exc}", url, path=False)
        else:
            if answer.is_success:
                return
            why = f"HTTP {answer.status_code}"
            if answer.status_code < 500 and answer.status_code not in (408, 429):
                break
        if attempt + 1 < WEBHOOK_ATTEMPTS:
            if attempt == 0:  # said at once: a short script may end before the last attempt
                log.warning("imagekit: the alert webhook %s failed (%s); trying again in the background", shown, why)
            time.sleep(backoff(attempt, *WEBHOOK_BACKOFF))
    log.warning("imagekit: the alert webhook %s was not delivered (%s): %s", shown, why, payload["text"])


_webhooks = Webhooks()


def webhooks() -> Webhooks:
    """The process's webhook sender."""
    return _webhooks


@atexit.register
def _at_exit() -> None:
    if not _webhooks.drain(EXIT_SECONDS):
        count = _webhooks.undelivered()
        log.warning("imagekit: the process ends with %d alert webhook POST%s not delivered (the alerts were logged "
                    "above)", count, "" if count == 1 else "s")

