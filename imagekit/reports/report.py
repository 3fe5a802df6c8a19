"""The usage report: every table and plot for one account, printed and written to a folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ..errors import ConfigError
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
    from ..client import Client
    from ..ledger import Ledger

__all__ = ["Report", "usage_report"]


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

    def __str__(self) -> str:
        sections = [("Spend by operation", self.by_operation), ("Spend by day", self.by_day),
                    ("Spend by style", self.by_style), ("Plan limits", shown_limits(self.limits))]
        text = "\n\n".join(f"{title}\n{table.to_string() if len(table) else '(nothing yet)'}"
                           for title, table in sections)
        head = "\n".join([self.summary(), *self.notes])
        return f"{head}\n\n{text}\n\nRecords against the balance\n{self.agreement()}\n\nForecast\n{self.forecast}"

    def summary(self) -> str:
        """One line: how many operations the ledger holds and what they cost, or that it holds none."""
        calls = int(self.by_operation["calls"].sum()) if len(self.by_operation) else 0
        if not calls:
            return "Nothing recorded yet: no operation of this account is in the ledger, so nothing was spent."
        credits = float(self.by_operation["credits"].sum())
        return (f"{calls} operation{'' if calls == 1 else 's'} recorded, {credits:g} "
                f"credit{'' if credits == 1 else 's'} spent.")

    def agreement(self) -> str:
        """One line: what the ledger says was spent against what the balance readings say."""
        table = self.reconciliation
        if not len(table):
            return "(no two balance readings yet)"
        ledger, billed = table["spent_by_ledger"].sum(), table["spent_by_balance"].sum()
        off = table[table["difference"].abs() > 1e-9]
        verdict = "they agree" if off.empty else (
            f"{len(off)} stretch{'es' if len(off) != 1 else ''} differ by {billed - ledger:+g} credits "
            "(work done elsewhere, a grant, or a charge whose answer was lost)")
        return f"ledger {ledger:g} credits, balance change {billed:g} credits: {verdict}"


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


def usage_report(client: Client, out_dir: str | Path | None = None, *, days: float = 7.0) -> Report:
    """The usage report of ``client``'s account from its ledger, ``/usage`` and the plan; with
    ``out_dir``, also ``usage-*.csv`` tables and ``usage-*.png`` plots there."""
    ledger = client.ledger
    if ledger is None:
        raise ConfigError("a usage report is made from the client's ledger, and this client has none (ledger=False)")
    user, usage, styles = client.me(), client.usage(), client.styles()  # the reads also price and reconcile
    ledger.reconcile()
    entries = ledger.to_pandas()
    now = float(usage.current_credit if usage.current_credit is not None else 0)
    names = {int(style.style_id): style.main_text for style in styles if style.style_id is not None and style.main_text}
    balance = balance_over_time(entries, now)
    report = Report(by_operation=spend_by_operation(entries), by_day=spend_by_day(entries),
                    by_style=spend_by_style(entries, names), balance=balance,
                    limits=limits(user, usage, entries), forecast=forecast(entries, now, days=days),
                    reconciliation=ledger.reconciliation(), notes=unreadable_note(entries) + waiting_note(ledger))
    if out_dir is not None:
        folder = Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        tables = {"ledger": entries, "by-operation": report.by_operation, "by-day": report.by_day,
                  "by-style": report.by_style, "balance": balance, "limits": report.limits,
                  "reconciliation": report.reconciliation}
        for name, table in tables.items():
            path = folder / f"usage-{name}.csv"
            table.to_csv(path, index=name not in ("ledger", "balance", "reconciliation"))
            report.files.append(path)
        plots = {"burn-down": burn_down(balance, report.forecast),
                 "by-operation": spend_by_operation_plot(report.by_operation),
                 "by-style": spend_by_style_plot(report.by_style)}
        for name, figure in plots.items():
            path = folder / f"usage-{name}.png"
            figure.savefig(path, dpi=100)
            report.files.append(path)
    return report
