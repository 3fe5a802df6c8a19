"""Budget arithmetic, pure and on a real SQLite ledger (no sandbox): refusals, warnings, holds."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import imagekit
from imagekit.ledger import Budget, Entry, Ledger, Source, Status
from imagekit.ledger.budgets import refuses, warning
from tests.utils.service import public_style
from tests.utils.users import make_user


@pytest.mark.parametrize(("budget", "cost", "refused"), [
    (Budget("e", "a", limit=10, spent=6, held=2), 2, False),   # exactly to the limit
    (Budget("e", "a", limit=10, spent=6, held=2), 2.5, True),  # past it
    (Budget("e", "a", limit=10, spent=10), 0, True),           # nothing left: even a free guess waits
    (Budget("e", "a", limit=10, spent=12, hard=False), 5, False),  # a soft budget only warns
])
def test_a_hard_budget_refuses_what_would_pass_its_limit(budget, cost, refused):
    assert refuses(budget, cost) is refused


@pytest.mark.parametrize(("budget", "cost", "level"), [
    (Budget("e", "a", limit=10, spent=5), 2, None),
    (Budget("e", "a", limit=10, spent=5), 3, "warn"),              # 80 % reached
    (Budget("e", "a", limit=10, spent=5, warn_at=None), 3, None),  # never warns
    (Budget("e", "a", limit=10, spent=9, hard=False), 2, "over"),
    (Budget("e", "a", limit=0, hard=False), 1, "over"),
])
def test_warnings_come_at_the_share_and_past_a_soft_limit(budget, cost, level):
    assert warning(budget, cost) == level


def test_left_and_share_count_what_is_held_as_spent():
    budget = Budget("e", "a", limit=20, spent=5, held=5)
    assert (budget.left, budget.share) == (10, 0.5)
    assert str(budget) == "e=a: 5 of 20 credits spent, 5 held (hard budget)"


def test_holds_count_until_their_entry_replaces_them(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct")
    ledger.set_budget(experiment="grid", limit=10)
    tags = {"experiment": "grid"}
    first = ledger.hold(tags, 6)
    assert first is not None and ledger.budgets()[0].held == 6
    with pytest.raises(imagekit.BudgetExceededError) as refused:
        ledger.hold(tags, 5)
    assert refused.value.budget.left == 4
    # The answer's entry replaces the hold: spent now, no longer held.
    ledger.record(Entry(operation="create", status=Status.ANSWERED, credits=6, source=Source.PRICED, tags=tags),
                  hold=first)
    [budget] = ledger.budgets()
    assert (budget.spent, budget.held) == (6, 0)
    assert ledger.hold({"other": "x"}, 100) is None  # no budget applies: nothing held


def test_an_answered_entry_without_credits_keeps_its_hold_until_settled(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct")
    ledger.set_budget(experiment="grid", limit=10, warn_at=None)
    tags = {"experiment": "grid"}
    hold = ledger.hold(tags, 4)
    entry = ledger.record(Entry(operation="create", status=Status.ANSWERED, tags=tags), hold=hold)
    assert ledger.budgets()[0].held == 4
    assert entry.seq is not None
    ledger.settle(entry, 3.0, Source.RECONCILED)
    assert (ledger.budgets()[0].spent, ledger.budgets()[0].held) == (3, 0)


def test_a_budget_warns_once_per_process(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct")
    ledger.set_budget(experiment="warned", limit=10, warn_at=0.5)
    with pytest.warns(imagekit.BudgetWarning, match="reached 50%"):
        ledger.hold({"experiment": "warned"}, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ledger.hold({"experiment": "warned"}, 1)


@pytest.mark.parametrize(("limit", "warn_at"), [(-1, 0.8), (10, 0), (10, 1.5), (float("inf"), 0.8)])
def test_a_budget_with_a_bad_limit_or_share_is_refused(tmp_path, limit, warn_at):
    with pytest.raises(imagekit.ConfigError):
        Ledger(tmp_path / "ledger.sqlite").set_budget(experiment="x", limit=limit, warn_at=warn_at)


@pytest.mark.parametrize(("options", "said"), [
    ({"hard": "no"}, r"hard is True \(refuse work past the limit\) or False \(only warn\), not 'no'"),
    ({"alerts": (0.5, 1.5)}, r"an alert at 150% would never be sent: a hard budget refuses work before"),
    ({"on_alert": "print"}, r"on_alert is a function called with each Alert \(e.g. on_alert=print\), not 'print'"),
])
def test_a_budget_option_that_could_never_work_is_one_line_and_sets_nothing(tmp_path, options, said):
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct")
    with pytest.raises(imagekit.ConfigError, match=said):
        ledger.set_budget(experiment="x", limit=10, **options)
    assert ledger.budgets() == []
    assert ledger.set_budget(experiment="x", limit=10, alerts=(1.5,), hard=False).alerts == (1.5,)  # soft: it passes


def test_removing_a_budget_that_is_not_there_says_which_are(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct")
    with pytest.raises(imagekit.ConfigError, match=r"no budget of experiment=grid-a to remove; no budget is set"):
        ledger.remove_budget(experiment="grid-a")
    ledger.set_budget(experiment="grid-b", limit=5)
    with pytest.raises(imagekit.ConfigError, match=r"no budget of experiment=grid-a to remove; the budgets: "
                                                   r"experiment=grid-b$"):
        ledger.remove_budget(experiment="grid-a")
    ledger.remove_budget(experiment="grid-b")
    assert ledger.budgets() == []


def test_a_tag_spelt_with_spaces_another_case_or_a_slip_cannot_escape_a_full_budget(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct")
    ledger.set_budget(experiment="walk-b", limit=4, warn_at=None)
    ledger.record(Entry(operation="create", status=Status.ANSWERED, credits=4, source=Source.PRICED,
                        tags={"experiment": "walk-b"}))
    with imagekit.tags(experiment=" walk-b  ") as spaced:  # what a CSV cell or a copied name brings
        assert spaced == {"experiment": "walk-b"}
        with pytest.raises(imagekit.BudgetExceededError):
            ledger.hold(spaced, 2)
    for tags in ({"experiment": "Walk-B"}, {"Experiment": "walk-b"}):
        [(key, value)] = tags.items()
        with pytest.raises(imagekit.ConfigError, match=rf"tag {key}={value} differs only in case from the budget "
                                                       r"of experiment=walk-b, so it would not count against it"):
            ledger.hold(tags, 2)
    for slip in ("experimnet", "experiments", "xperiment"):  # a tag name one letter from one with budgets
        with pytest.raises(imagekit.ConfigError, match=rf"tag {slip}=walk-b is one letter from experiment, which has "
                                                       "budgets that would not count this work"):
            ledger.hold({slip: "walk-b"}, 2)
    assert ledger.hold({"person": "ana", "experiment": "walk-c"}, 2) is None  # other names and values: no budget
    ledger.set_budget(experiment="Walk-B", limit=10)  # a budget of its own: then it is a tag value of its own
    assert ledger.hold({"experiment": "Walk-B"}, 2) is not None
    assert ledger.hold({"person": "ana"}, 2) is None  # no budget near it: nothing held


def test_a_budget_warning_points_at_the_callers_line_and_says_when_the_limit_is_reached(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct")
    ledger.set_budget(experiment="full", limit=4, warn_at=0.8)
    with pytest.warns(imagekit.BudgetWarning, match=r"budget experiment=full reached its limit: 4 of 4") as got:
        ledger.hold({"experiment": "full"}, 4)
    assert [Path(each.filename).name for each in got] == [Path(__file__).name]


def test_a_budget_set_again_changes_what_is_given_and_keeps_the_rest(tmp_path):
    """Raising a limit turned a soft monthly budget with a webhook into a hard all-time one, and the
    team's webhook stopped without a word."""
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct")
    ledger.set_budget(experiment="w", limit=10, period="month", tz="Europe/Berlin", alerts=(0.25,),
                      webhook="http://127.0.0.1:9/hook", hard=False, warn_at=0.5)
    raised = ledger.set_budget(experiment="w", limit=20)
    assert (raised.limit, raised.period, raised.tz, raised.alerts, raised.webhook, raised.hard, raised.warn_at) == (
        20, "month", "Europe/Berlin", (0.25,), "http://127.0.0.1:9/hook", False, 0.5)
    cleared = ledger.set_budget(experiment="w", limit=20, period=None, webhook=None)  # said: then it changes
    assert (cleared.period, cleared.webhook, cleared.tz, cleared.hard) == (None, None, "Europe/Berlin", False)
    fresh = ledger.set_budget(experiment="new", limit=5)
    assert (fresh.period, fresh.tz, fresh.alerts, fresh.webhook, fresh.hard, fresh.warn_at) == (
        None, "UTC", (0.5, 0.8, 1.0), None, True, 0.8)


def test_a_budget_warning_during_a_batch_run_points_at_the_line_that_ran_it(sandbox):
    """The run's requests go out on an event loop in a thread of its own: its warning named a line of
    anyio's or threading's, not the user's."""
    _, key = make_user(sandbox, "pro")
    with imagekit.Client(sandbox.url, key) as ik:
        ik.budget(experiment="warned", limit=100, warn_at=0.01)
        batch = ik.batch(["a kite", "a boat"], style=public_style(sandbox), tags={"experiment": "warned"})
        with pytest.warns(imagekit.BudgetWarning, match="budget experiment=warned reached") as got:
            batch.run(progress=False)
    assert {(Path(each.filename).name, each.lineno) for each in got} == {(Path(__file__).name, batch_line())}


def batch_line() -> int:
    """The line of this file that ran the batch (the one ``batch.run(`` is on)."""
    lines = Path(__file__).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.strip() == "batch.run(progress=False)")
