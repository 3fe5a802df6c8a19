"""Reconciliation: the balances the service reported against the entries the ledger holds.

The balance is read on each side of a batch or chain run (``me()``/``usage()``) and shown by every
create answer. Between two readings, what the balance fell by beyond the entries whose credits are
known is shared out among the answered entries whose credits are not (by images made, for creates):
their source becomes ``reconciled``. The reconciliation view lays both side by side per stretch, so
records that disagree with the bill (work from another machine, a grant, a charge whose answer was
lost) show at once. Pure functions of a list of entries: the book applies what they decide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..extras import needs_extra
from .entries import BALANCE, Entry, Source, Status, answered, in_sending_order
from .prices import create_key

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Stretch", "Settlement", "stretches", "settle", "reconciliation", "lost"]


@dataclass(frozen=True)
class Stretch:
    """The entries between two balance readings (the second included)."""

    before: Entry
    after: Entry
    between: list[Entry]

    @property
    def spent_by_balance(self) -> float:
        """What the balance fell by."""
        return _balance(self.before) - _balance(self.after)

    @property
    def unknown(self) -> list[Entry]:
        """Answered operations whose credits are not known."""
        return [entry for entry in self.between if _unknown(entry)]


@dataclass
class Settlement:
    """What reconciling decided: credits for entries (by ``seq``) and prices learned on the way."""

    credits: dict[int, float] = field(default_factory=dict)
    prices: dict[str, float] = field(default_factory=dict)


def stretches(entries: list[Entry], quiet: bool = False) -> list[Stretch]:
    """The stretches between readings. Readings are every balance an answer showed, or with ``quiet``
    only those of reads (``me()``, ``usage()``): a create's answer may already show the charge of
    another create still in flight, while the toolkit reads the balance when nothing of its own is
    (a batch's or chain's ends)."""
    found: list[Stretch] = []
    start: Entry | None = None
    between: list[Entry] = []
    for entry in in_sending_order(entries):  # a charge is in the stretch its request was sent in
        if start is not None:
            between.append(entry)
        if entry.balance is not None and answered(entry) and (entry.operation == BALANCE or not quiet):
            if start is not None:
                found.append(Stretch(start, entry, between))
            start, between = entry, []
    return found


def settle(entries: list[Entry]) -> Settlement:
    """Give each answered operation whose credits are unknown its share of what its stretch spent
    beyond the known entries (by images made, for creates), and learn a style's price when one
    create had the stretch to itself. A stretch whose balance fell by less than the known entries
    (a grant, an unrecorded refund) settles nothing: the reconciliation view shows it.

    An operation whose answer was lost (``lost``: cut by Ctrl+C, a signal, a dropped connection)
    gets what its stretch spent beyond the rest when no answered entry there is unknown: the
    service charged it then, whether or not its images were ever found. That share is a guess,
    dealt again by every reconciliation from what is known by then: once a probe finds its images
    (a ``recovered`` entry of its group carries the charge) it is settled back to 0, and the lost
    answers beside it share only what the recovered ones leave (a create a Ctrl+C cut before it
    left shares a fall until a probe shows it never ran). Only changed credits are returned."""
    settlement = Settlement()
    found = {entry.group_id for entry in entries if entry.status == Status.RECOVERED and entry.group_id}
    for entry in entries:
        if entry.status == Status.NO_RESPONSE and entry.credits and entry.group_id in found:
            settlement.credits[_seq(entry)] = 0.0  # reconciled before its images were found: counted once
    for stretch in stretches(entries):
        unknown = stretch.unknown
        if not unknown:
            continue
        unexplained = stretch.spent_by_balance - sum(entry.credits or 0 for entry in stretch.between
                                                     if not _unknown(entry))
        if unexplained < 0:
            continue
        _share(settlement, unknown, unexplained)
        alone = unknown[0] if len(unknown) == 1 else None
        if alone is not None and alone.operation == "create" and alone.image_ids and alone.style_id is not None:
            settlement.prices[create_key(style=alone.style_id)] = unexplained / len(alone.image_ids)
    # Lost answers, between the balances the toolkit reads when nothing of its own is in flight (a
    # run's ends, a report): an answer's balance may not show a charge still in flight elsewhere.
    # Their shares are dealt again each time, from what is known by then: a probe that later finds
    # one's images (its recovered entry counts in this stretch) leaves less to the others.
    for stretch in stretches(entries, quiet=True):
        open_ = [entry for entry in stretch.between if lost(entry) and entry.group_id not in found]
        if not open_ or any(_unknown(entry) and _seq(entry) not in settlement.credits for entry in stretch.between):
            continue  # an answered operation of unknown price beside it: the fall cannot be told apart (yet)
        opened = {id(entry) for entry in open_}
        known = sum(settlement.credits.get(_seq(entry), entry.credits or 0) for entry in stretch.between
                    if id(entry) not in opened)
        if (unexplained := stretch.spent_by_balance - known) > 0:
            _share(settlement, open_, unexplained)
        else:  # nothing left to explain: a share given before goes back
            settlement.credits.update((_seq(entry), 0.0) for entry in open_ if entry.credits)
    changed = {_seq(entry) for entry in entries if entry.seq in settlement.credits
               and (entry.credits is None or not math.isclose(entry.credits, settlement.credits[entry.seq]))}
    settlement.credits = {seq: credits for seq, credits in settlement.credits.items() if seq in changed}
    return settlement


def _share(settlement: Settlement, entries: list[Entry], credits: float) -> None:
    """Share ``credits`` out among ``entries``, by images made (1 for an entry that shows none)."""
    weights = [max(len(entry.image_ids), 1) for entry in entries]
    for entry, weight in zip(entries, weights):
        settlement.credits[_seq(entry)] = credits * weight / sum(weights)


def reconciliation(entries: list[Entry]) -> pd.DataFrame:
    """One line per stretch between two balance reads: its times and balances, what the balance
    says was spent, what the ledger says, how many entries are still unknown, and the difference."""
    with needs_extra():  # a missing extra: one line naming it
        import pandas as pd

    rows = [{"from": s.before.time, "to": s.after.time, "balance_before": s.before.balance,
             "balance_after": s.after.balance, "spent_by_balance": s.spent_by_balance,
             "spent_by_ledger": sum(entry.credits or 0 for entry in s.between), "unknown": len(s.unknown)}
            for s in stretches(entries, quiet=True)]
    columns = ["from", "to", "balance_before", "balance_after", "spent_by_balance", "spent_by_ledger", "unknown"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["difference"] = frame["spent_by_balance"] - frame["spent_by_ledger"]
    for column in ("from", "to"):
        frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    return frame


_INTERRUPTIONS = ("CancelledError", "Cancelled", "KeyboardInterrupt", "SystemExit")
"""What an operation's entry names as its error when its process stopped waiting for the answer."""


def lost(entry: Entry) -> bool:
    """Whether ``entry`` is an operation whose answer was lost after it may have run (not one that
    never left: those say so), and whose credits are not known: none yet, or only the share of a
    balance's fall a reconciliation gave it, which is dealt again as more is known."""
    error = entry.error or ""
    return (entry.status == Status.NO_RESPONSE and entry.operation != BALANCE
            and (entry.credits is None or entry.source == Source.RECONCILED)
            and ("(may have run)" in error or error in _INTERRUPTIONS))


def _unknown(entry: Entry) -> bool:
    return entry.credits is None and entry.operation != BALANCE and answered(entry)


def _seq(entry: Entry) -> int:
    """An entry's place in the ledger: entries reconciled were read back from it, so they have one."""
    assert entry.seq is not None
    return entry.seq


def _balance(reading: Entry) -> float:
    """The balance of a reading ``stretches`` chose (it chooses only entries that show one)."""
    assert reading.balance is not None
    return reading.balance
