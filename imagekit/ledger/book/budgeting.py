"""Budgets per tag value or account in a book, and the holds work takes against them before it
is sent (see ``budgets`` and ``alerts``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ...errors import BudgetExceededError, ConfigError
from .. import alerts as _alerts, budgets
from ..alerts import Alert
from ..budgets import KEPT, Budget
from .core import Book


class Budgeting(Book):
    """Budgets set, read and removed, and the holds taken against them."""

    def set_budget(self, tag: Mapping[str, object] | None = None, /, *, limit: float, warn_at: float | None = KEPT,
                   hard: bool = KEPT, alerts: Sequence[float] | None = KEPT, period: str | None = KEPT,
                   tz: str = KEPT, on_alert: Callable[[Alert], object] | None = None, webhook: str | None = KEPT,
                   **tag_values: object) -> Budget:
        """Cap the credits one tag value may spend, across every account and machine writing to
        this ledger: ``set_budget(experiment="grid-a", limit=50)``; with no tag, this ledger's account
        (every account's when it has none). ``hard`` refuses new work past the limit
        (BudgetExceededError); ``warn_at`` (a share) warns this process first (BudgetWarning).
        ``period`` (``day``, ``week``, ``month`` in ``tz``, or a plan month: ``ik.budget(period="plan")``
        makes one) counts spending per period, the limit resetting at each turn (None: all time).
        ``alerts`` (shares) are sent once per share and period, ledger-wide: a log line, a notebook banner, ``on_alert(alert)`` in this process, and
        a JSON POST to ``webhook`` (see ``alerts``). Set again, a budget changes what is given and
        keeps what is not (raising a limit keeps the period, alerts, webhook and
        ``on_alert``); a new budget's defaults are ``warn_at=0.8``, hard, alerts at 50, 80 and 100 %,
        all time (no period), UTC and no webhook (``budgets.NEW``)."""
        key, value = self._budget_of(tag, tag_values)
        if on_alert is not None and not callable(on_alert):
            raise ConfigError(f"on_alert is a function called with each Alert (e.g. on_alert=print), not {on_alert!r}")
        chosen = budgets.settled(self._store, key, value, {"warn_at": warn_at, "hard": hard, "alerts": alerts,
                                                             "period": period, "tz": tz, "webhook": webhook})
        budgets.define(self._store, key, value, limit, **chosen)
        if on_alert is not None:
            _alerts.register(self._store.location, key, value, on_alert)
        if self._spool:
            self._spool.remember("budgets", lambda: budgets.known(self._store), now=True)
        self._settled()
        return budgets.status(self._store, key, value, self.clock())[0]

    def _budget_of(self, tag: Mapping[str, object] | None, tag_values: Mapping[str, object]) -> tuple[str, str]:
        """(key, value) of the budget named: a tag value's, or (``""``, account) with none."""
        if not tag and not tag_values:
            return "", self.account
        return budgets.one_tag(tag, tag_values)

    def remove_budget(self, tag: Mapping[str, object] | None = None, /, **tag_values: object) -> None:
        """Drop the budget of one tag value, or of this ledger's account (what it spent stays recorded)."""
        key, value = self._budget_of(tag, tag_values)
        budgets.remove(self._store, key, value)
        _alerts.register(self._store.location, key, value, None)

    def budgets(self, key: str | None = None) -> list[Budget]:
        """Every budget (or those of tag ``key``; ``""``: of accounts), with what is spent (this
        period) and held now."""
        self._settled()
        return budgets.status(self._store, key, at=self.clock())

    def hold(self, tags: dict[str, str], cost: float | Callable[[], float]) -> int | None:
        """Hold ``cost`` credits (or what ``cost()`` estimates, asked only when a budget applies) against
        the budgets of ``tags`` and this ledger's account before sending an operation (None when none
        applies); BudgetExceededError when a hard one would be passed, or could be and the database
        cannot be asked (a budget is never passed on a guess)."""
        if not tags and self._spool and not self._account_bound():
            return None

        def unchecked() -> None:
            known = self._spool.recall("budgets") if self._spool else None
            if tags or known:
                budgets.refuse_unchecked(known, tags, cost() if callable(cost) else cost, self.location, self.account)

        def check() -> int | None:
            at = self.clock()
            self._learn_aliases()  # the account's budget may be the user's, named by another process
            try:
                held = budgets.hold(self._store, self.account, tags, cost, at)
            except BudgetExceededError as exc:
                if isinstance(exc.budget, Budget):  # full for work: its alerts up to 100 % are due
                    _alerts.full(self._store, exc.budget, at, exc.cost)
                raise
            if self._spool:  # what a hard budget says while the database cannot be asked
                self._spool.remember("budgets", lambda: budgets.known(self._store))
            return held

        return self._read(check, unchecked)

    def _account_bound(self) -> bool:
        """Whether a budget of this ledger's account is known here. Untagged work on a shared ledger
        asks its database only then, for it must never wait on it: what is known is kept fresh by
        the writer, off the requests' path (``record``), and by ``set_budget`` at once."""
        assert self._spool is not None
        known = self._spool.recall("budgets") or []
        return any(not key and value in (self.account, self._account, "") for key, value, _, _ in known)
