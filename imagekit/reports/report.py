"""The usage report: every table and plot for one account, printed and written to a folder; made
with the service's answers (``usage_report``) or from the ledger alone (``ledger_report``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from .._csv_cells import inert_frame
from ..errors import ConfigError
from ..ledger.entries import Status
from ..ledger.forecasts import ACCOUNT, balance_now, forecast as forecast_table
from ..ledger.periods import checked_zone, during
from .plots import burn_down, spend_by_operation_plot, spend_by_style_plot
from .tables import (
    Forecast,
    balance_over_time,
    forecast,
    limits,
    shown_limits,
    spend_by_day,
    spend_by_operation,
    spend_by_style,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..client import Client
    from ..ledger import Ledger
    from ..ledger.budgets import Budget

__all__ = ["Report", "usage_report", "ledger_report", "STALE"]

STALE = timedelta(hours=1)
"""A balance the service reported longer ago than this is called stale: grants and work done
elsewhere since are not in it."""


@dataclass
class Report:
    """The tables of a usage report, and the files written for it."""

    by_operation: pd.DataFrame
    by_day: pd.DataFrame
    by_style: pd.DataFrame
    balance: pd.DataFrame
    limits: pd.DataFrame
    forecast: Forecast
    reconciliation: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Per stretch between two balance readings: spent by the ledger against the balance change."""
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What a reader must know before the figures: rows that could not be read, entries that wait."""
    entries: pd.DataFrame = field(default_factory=pd.DataFrame)
    """The account's ledger entries the tables are made from."""
    balance_seen: datetime | None = None
    """When the service reported the balance the figures count from (None: it never did)."""
    from_ledger: bool = False
    """Made from the ledger alone (``ledger_report``): the balance is the last one recorded, less
    what was charged since, and the plan's limits are not known."""
    made: datetime = field(default_factory=lambda: datetime.now(UTC))
    """When the report was made (what the balance's age is counted to)."""
    budgets: list[tuple[Budget, datetime | None]] = field(default_factory=list)
    """The budgets that bind the account (its own, the whole ledger's), as they stand, each with
    when it runs out at the recent rate, counting its reset (None: it does not, or too little
    history to tell)."""

    def __str__(self) -> str:
        shown = shown_limits(self.limits) if len(self.limits) else "(the plan's limits come from the service, not the ledger)"
        sections = [("Spend by operation", self.by_operation), ("Spend by day", self.by_day),
                    ("Spend by style", self.by_style), ("Plan limits", shown)]
        text = "\n\n".join(f"{title}\n{_text(table)}" for title, table in sections)
        head = "\n".join([self.summary(), *self.balance_note(), *self.notes])
        forecast = self.forecast if self.balance_seen is not None else "(no balance recorded yet)"
        bound = "".join(f"\n{budget_text(budget, runs_out)}" for budget, runs_out in self.budgets)
        return (f"{head}\n\n{text}\n\nRecords against the balance\n{self.agreement()}\n\n"
                f"Forecast\n{forecast}{bound}")

    @property
    def stale(self) -> bool:
        """The balance was reported longer than ``STALE`` before the report was made, or never."""
        return self.balance_seen is None or self.made - self.balance_seen > STALE

    def balance_note(self) -> list[str]:
        """For a report from the ledger alone, one line: the balance it counts from, and how old it is."""
        if not self.from_ledger:
            return []
        if self.balance_seen is None:
            return ["Balance: none recorded yet (the ledger holds no answer of the service that showed it)."]
        line = (f"Balance {self.forecast.balance:,.10g} credits: the last the service reported, "
                f"{_age(self.made - self.balance_seen)} ago")
        if not self.stale:
            return [f"{line}, less what the ledger recorded since."]
        return [f"{line} ({self.balance_seen:%Y-%m-%d %H:%M} UTC), less what the ledger recorded since; stale: grants "
                "and work done elsewhere since then are not in it."]

    def write(self, out_dir: str | Path) -> Report:
        """Write ``usage-*.csv`` tables and ``usage-*.png`` plots (drawn here, with matplotlib) into
        ``out_dir``, listing them in ``files``; returns the report."""
        folder = Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        tables = {"ledger": self.entries, "by-operation": self.by_operation, "by-day": self.by_day,
                  "by-style": self.by_style, "balance": self.balance, "limits": self.limits,
                  "reconciliation": self.reconciliation}
        for name, table in tables.items():
            path = folder / f"usage-{name}.csv"
            inert_frame(table).to_csv(path, index=name not in ("ledger", "balance", "reconciliation"))
            self.files.append(path)
        plots = {"burn-down": burn_down(self.balance, self.forecast),
                 "by-operation": spend_by_operation_plot(self.by_operation),
                 "by-style": spend_by_style_plot(self.by_style)}
        for name, figure in plots.items():
            path = folder / f"usage-{name}.png"
            figure.savefig(path, dpi=100)
            self.files.append(path)
        return self

    def summary(self) -> str:
        """One line: how many operations the ledger holds and what they cost, or that it holds none."""
        calls = int(self.by_operation["calls"].sum()) if len(self.by_operation) else 0
        refused = int((self.entries["status"] == Status.FAILED.value).sum()) if "status" in self.entries else 0
        also = f" ({refused} more refused by the service, which charges nothing for them)" if refused else ""
        if not calls:
            return ("Nothing spent yet: no operation of this account was charged" + also + "." if refused else
                    "Nothing recorded yet: no operation of this account is in the ledger, so nothing was spent.")
        credits = float(self.by_operation["credits"].sum())
        return (f"{calls} operation{'' if calls == 1 else 's'} recorded, {credits:g} "
                f"credit{'' if credits == 1 else 's'} spent{also}.")

    def agreement(self) -> str:
        """One line: what the ledger says was spent between the first and the last balance reading
        against the balance change, and how much it recorded outside them (not checked yet)."""
        table = self.reconciliation
        if not len(table):
            return ("(no two reads of the balance yet to check against: a me() or usage() call, or the end of a batch "
                    "or chain, reads it; a single create's answer is not counted, as others may be in flight)")
        ledger, billed = table["spent_by_ledger"].sum(), table["spent_by_balance"].sum()
        off = table[table["difference"].abs() > 1e-9]
        stretches = f"{len(off)} stretch{'es' if len(off) != 1 else ''}"
        if off.empty:
            verdict = "they agree"
        elif abs(billed - ledger) < 1e-9:  # in all they agree: a charge was counted in a stretch next to its own
            verdict = (f"they agree in all; {stretches} differ by up to {off['difference'].abs().max():g} credits, "
                       "which cancel out (a charge recorded after a balance reading that already showed it)")
        else:
            verdict = (f"{stretches} differ by {billed - ledger:+g} credits (work done elsewhere, a grant, or a "
                       "charge whose answer was lost)")
        line = (f"ledger {ledger:g} credits, balance change {billed:g} credits, from the first balance reading "
                f"to the last: {verdict}")
        outside = (float(self.entries["credits"].sum()) if "credits" in self.entries else 0.0) - ledger
        if outside > 1e-9:  # spent before the first reading or since the last: in no stretch yet
            line += f"; {outside:g} more credit{'' if outside == 1 else 's'} recorded outside those readings"
        return line


def unreadable_note(entries: pd.DataFrame) -> list[str]:
    """A line naming the entries whose rows could not be read in full (shown without what could not)."""
    if "unreadable" not in entries or not entries["unreadable"].notna().any():
        return []
    bad = entries[entries["unreadable"].notna()]
    return [f"{len(bad)} entr{'y' if len(bad) == 1 else 'ies'} could not be read in full and count without "
            f"what could not be read: {bad['unreadable'].iloc[0]}{' ...' if len(bad) > 1 else ''}"]


def waiting_note(ledger: Ledger) -> list[str]:
    """A line saying how many entries wait on this machine for the ledger's database, left out here."""
    if not (waiting := ledger.waiting()):
        return []
    return [f"{waiting} entr{'y' if waiting == 1 else 'ies'} of this machine wait in {ledger.spool} and are not "
            f"counted here: `imagekit ledger flush` writes them once the ledger's database answers"]


def _text(table: pd.DataFrame | str) -> str:
    if isinstance(table, str):
        return table
    return table.to_string() if len(table) else "(nothing yet)"


def _age(span: timedelta) -> str:
    """``span`` as a person says it: ``40 seconds``, ``12 minutes``, ``3 hours``, ``2 days``."""
    seconds = max(span.total_seconds(), 0)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds:.0f} seconds"


def usage_report(client: Client, out_dir: str | Path | None = None, *, days: float = 7.0) -> Report:
    """The usage report of ``client``'s account from its ledger, ``/usage`` and the plan; with
    ``out_dir``, also ``usage-*.csv`` tables and ``usage-*.png`` plots there."""
    ledger = client.ledger
    if ledger is None:
        raise ConfigError("a usage report is made from the client's ledger, and this client has none (ledger=False)")
    user, usage, styles = client.me(), client.usage(), client.styles()  # the reads also price and reconcile
    now = float(usage.current_credit if usage.current_credit is not None else 0)
    names = {int(style.style_id): style.main_text for style in styles if style.style_id is not None and style.main_text}
    report = _report(ledger, now, datetime.now(UTC), days=days, names=names,
                     plan=lambda entries: limits(user, usage, entries))
    return report.write(out_dir) if out_dir is not None else report


def ledger_report(ledger: Ledger, out_dir: str | Path | None = None, *, days: float = 7.0) -> Report:
    """The usage report of ``ledger``'s account from the ledger alone, asking no service: its balance
    is the last one the service reported (less what was charged since; ``Report.balance_seen`` says
    when), its styles are named by number and the plan's limits are left out. With ``out_dir``, the
    files as ``usage_report`` writes them."""
    readings = ledger.entries(readings=True)
    seen = [entry.time for entry in readings if entry.balance is not None]
    report = _report(ledger, balance_now(readings), datetime.fromisoformat(seen[-1]) if seen else None, days=days)
    report.from_ledger = True
    return report.write(out_dir) if out_dir is not None else report


def _report(ledger: Ledger, balance: float | None, seen: datetime | None, *, days: float,
            names: dict[int, str] | None = None, plan: Callable[[pd.DataFrame], pd.DataFrame] | None = None) -> Report:
    """The tables of ``ledger``'s account counted from ``balance`` (reported at ``seen``); ``plan``
    makes the limits table from the entries."""
    ledger.reconcile()
    entries = ledger.to_pandas()
    bound = [budget for budget in ledger.budgets("") if budget.value in (ledger.account, "")]
    everyone = ledger.to_pandas(account="") if bound else pd.DataFrame()  # the whole ledger's budget counts all
    dated = [(budget, _runs_out(forecast_table(everyone, [budget], account=ledger.account, days=days)))
             for budget in bound]
    now = balance if balance is not None else 0.0
    return Report(by_operation=spend_by_operation(entries), by_day=spend_by_day(entries),
                  by_style=spend_by_style(entries, names), balance=balance_over_time(entries, balance),
                  limits=plan(entries) if plan else pd.DataFrame(), forecast=forecast(entries, now, days=days),
                  reconciliation=ledger.reconciliation(), notes=unreadable_note(entries) + waiting_note(ledger),
                  entries=entries, balance_seen=seen, budgets=dated)


def _runs_out(table: pd.DataFrame) -> datetime | None:
    """The account's row's run-out date in a forecast table (None where it has none)."""
    found = table["runs_out"].dropna()
    return found[ACCOUNT].to_pydatetime() if ACCOUNT in found.index else None


def budget_text(budget: Budget, runs_out: datetime | None = None) -> str:
    """One line on a budget that binds the account: what is left of it, when it is free again, and
    when it runs out at the recent rate, if it does before it resets."""
    zone = checked_zone(budget.tz)
    end = "" if budget.end is None else f" until it resets {budget.end.astimezone(zone):%a %d %b %Y %H:%M} {budget.tz}"
    if budget.left <= 0:
        state = "nothing left" + (end or " (it never resets)") + (": work is refused" if budget.hard else "")
    else:
        state = f"{budget.left:g} of it left{end}"  # (of the budget: the balance is the forecast's line)
        if runs_out is not None:
            state += f"; at the recent rate it runs out around {runs_out.astimezone(zone):%Y-%m-%d %H:%M} {budget.tz}"
    named = "this account" if not budget.key and budget.value else budget.name  # (the report names the account)
    return f"Budget of {named}: {budget.spent:g} of {budget.limit:g} credits spent{during(budget.period)}; {state}"
