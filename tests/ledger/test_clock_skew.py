"""Budget holds go by the ledger database's clock, never a writer's: a machine whose clock is two
hours fast neither ends the others' live holds nor misses them, and is told of its clock once.

The fast writer's clock is moved with time-machine (every time Python reads in this process); the
database's is left alone (SQLite reads the system clock in C, PostgreSQL is another process)."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

import imagekit
from imagekit.ledger import Ledger
from imagekit.ledger.store import Store

TAGS = {"experiment": "clocked"}


def _fast() -> time_machine.travel:
    """This process's clock two hours ahead, running."""
    return time_machine.travel(datetime.now(UTC) + timedelta(hours=2), tick=True)


def test_a_writer_two_hours_fast_keeps_the_others_holds_and_is_told_once(either_ledger):
    honest = Ledger(either_ledger, account="honest")
    honest.set_budget(experiment="clocked", limit=10, warn_at=None)
    assert honest.hold(TAGS, 6) is not None  # live work of a machine whose clock is right
    fast = Ledger(either_ledger, account="fast")
    with _fast():
        with pytest.warns(imagekit.BudgetWarning, match=r"^this machine's clock is 2\.0 hours ahead of the clock of "
                                                          r"the ledger's database .*: budget holds go by the database's"):
            with pytest.raises(imagekit.BudgetExceededError, match="6 held.*would cost about 6 more"):
                fast.hold(TAGS, 6)  # 6 + 6 would pass 10: the honest machine's hold still counts
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # told once per process, not per hold
            assert fast.hold(TAGS, 3) is not None
    # Back on the right clock, both holds count; neither was ended early nor lives past its hour.
    [budget] = honest.budgets("experiment")
    assert (budget.spent, budget.held) == (0, 9)
    with pytest.raises(imagekit.BudgetExceededError):
        honest.hold(TAGS, 2)


def test_a_slow_writers_hold_is_dated_by_the_database_so_it_runs_out_with_everyone_elses(either_ledger):
    slow = Ledger(either_ledger, account="slow")
    slow.set_budget(experiment="clocked", limit=10, warn_at=None)
    with time_machine.travel(datetime.now(UTC) - timedelta(hours=2), tick=True), warnings.catch_warnings():
        warnings.simplefilter("ignore", imagekit.BudgetWarning)
        hold = slow.hold(TAGS, 8)
    store = Store.at(either_ledger)
    [(dated,)] = store.fetchall("SELECT time FROM holds WHERE hold_id = ?", (hold,))
    assert abs(store.clock_skew(datetime.fromisoformat(dated))) < 60  # not two hours back: it would count for three
