"""Budget alerts and periods on a real ledger: once per share and period, the hard limit free again at
the period's turn, a hard budget full when it refuses, an account's budget, a real webhook receiver
on loopback, and several processes sharing one PostgreSQL ledger sending each alert once."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import psycopg
import pytest

import imagekit
from imagekit.ledger import Alert, Budget, Entry, Ledger, Source, Status, alerts as alerts_module
from imagekit.ledger.periods import plan_period, stamp
from tests.helpers import wait_until
from tests.ledger.webhooks import Receiver
from tests.postgres import PostgresServer

ROOT = Path(__file__).resolve().parents[2]
GRID = {"experiment": "grid-a"}


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


class Clock:
    """A clock a test moves by hand."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


def spend(ledger: Ledger, credits: float, at: datetime, tags: dict[str, str] | None = None) -> Entry:
    return ledger.record(Entry(operation="create", status=Status.ANSWERED, credits=credits, source=Source.PRICED,
                               tags=GRID if tags is None else tags, time=stamp(at)))


@pytest.fixture
def clock() -> Clock:
    return Clock(utc(2026, 11, 20, 10))


@pytest.fixture
def ledger(tmp_path, clock) -> Ledger:
    return Ledger(tmp_path / "ledger.sqlite", account="acct", clock=clock)


def test_each_share_alerts_once_per_period_and_again_after_the_month_turns(ledger):
    got: list[Alert] = []
    ledger.set_budget(experiment="grid-a", limit=10, hard=False, warn_at=None, period="month", tz="Europe/Berlin",
                      on_alert=got.append)
    steps = [(4, []), (1, [0.5]), (3, [0.8]), (1, []), (3, [1.0]), (1, [])]
    for credits, expected in steps:
        before = len(got)
        spend(ledger, credits, utc(2026, 11, 20, 10))
        assert [alert.threshold for alert in got[before:]] == expected
    first = got[0]
    assert (first.tags, first.account, first.spent, first.limit, first.period) == (GRID, None, 5, 10, "month")
    assert (first.period_start, first.period_end) == (utc(2026, 10, 31, 23), utc(2026, 11, 30, 23))  # Berlin's November
    assert first.time == utc(2026, 11, 20, 10)
    assert str(first) == ("budget experiment=grid-a reached 50% of its limit this month (from 2026-11-01 00:00 "
                          "Europe/Berlin): 5 of 10 credits spent")
    spend(ledger, 9, utc(2026, 11, 30, 22, 59, 59))  # still November in Berlin: nothing new
    assert len(got) == 3
    spend(ledger, 6, utc(2026, 11, 30, 23))  # December in Berlin: spent starts again, so do the alerts
    assert [(alert.threshold, alert.spent, alert.period_start) for alert in got[3:]] == [(0.5, 6, utc(2026, 11, 30, 23))]


def test_a_hard_limit_is_free_again_at_the_days_turn_across_the_spring_clock_change(ledger, clock):
    ledger.set_budget(experiment="grid-a", limit=5, period="day", tz="Europe/Berlin", warn_at=None)
    clock.at = utc(2026, 3, 29, 21, 30)  # 23:30 in Berlin, on the 23-hour day clocks go forward
    spend(ledger, 5, clock.at)
    with pytest.raises(imagekit.BudgetExceededError, match="resets at 2026-03-30 00:00 Europe/Berlin"):
        ledger.hold(GRID, 1)
    [budget] = ledger.budgets()
    assert (budget.spent, budget.start, budget.end) == (5, utc(2026, 3, 28, 23), utc(2026, 3, 29, 22))
    assert str(budget) == "experiment=grid-a: 5 of 5 credits spent today, 0 held (hard budget)"
    clock.at = utc(2026, 3, 29, 22)  # midnight in Berlin: 23 hours after the last
    assert ledger.hold(GRID, 5) is not None
    assert ledger.budgets()[0].spent == 0 and ledger.budgets()[0].held == 5


def test_the_week_turns_on_monday_in_the_budgets_zone(ledger, clock):
    ledger.set_budget(experiment="grid-a", limit=4, period="week", tz="America/New_York", warn_at=None)
    clock.at = utc(2026, 11, 2, 4, 59)  # Sunday 23:59 in New York (clocks went back that morning)
    spend(ledger, 4, clock.at)
    with pytest.raises(imagekit.BudgetExceededError):
        ledger.hold(GRID, 1)
    clock.at = utc(2026, 11, 2, 5)  # Monday 00:00
    assert ledger.hold(GRID, 4) is not None


def test_a_hard_budget_that_refuses_work_is_full_and_says_so_once(ledger, clock):
    got: list[Alert] = []
    ledger.set_budget(experiment="grid-a", limit=9, warn_at=None, on_alert=got.append)
    spend(ledger, 8, clock.at)
    assert [alert.threshold for alert in got] == [0.5, 0.8]
    for _ in range(2):
        with pytest.raises(imagekit.BudgetExceededError):
            ledger.hold(GRID, 2)
    assert [(alert.threshold, alert.spent, alert.refused) for alert in got] == [(0.5, 8, None), (0.8, 8, None),
                                                                                (1.0, 8, 2)]
    assert str(got[-1]) == "budget experiment=grid-a is full: it refused an operation of about 2 credits with 8 of 9 " \
                           "credits spent"


def test_an_operation_too_dear_for_an_unspent_budget_says_it_is_full_not_that_half_was_spent(ledger, clock):
    got: list[Alert] = []
    ledger.set_budget(experiment="grid-a", limit=1, warn_at=None, on_alert=got.append)
    with pytest.raises(imagekit.BudgetExceededError):
        ledger.hold(GRID, 2)
    assert [(alert.threshold, alert.spent, alert.refused) for alert in got] == [(1.0, 0, 2)]
    assert "reached" not in str(got[0]) and got[0].to_json()["refused"] == 2


def test_an_accounts_budget_caps_all_its_work_tagged_or_not(ledger, clock):
    got: list[Alert] = []
    budget = ledger.set_budget(limit=6, alerts=(0.5,), on_alert=got.append, warn_at=None)
    assert (budget.key, budget.value, budget.name) == ("", "acct", "account acct")
    spend(ledger, 2, clock.at, tags={})
    ledger.for_account("other").record(Entry(operation="create", status=Status.ANSWERED, credits=50, tags={}))
    spend(ledger, 2, clock.at)
    assert [(alert.account, alert.tags, alert.spent) for alert in got] == [("acct", {}, 4)]
    with pytest.raises(imagekit.BudgetExceededError, match="account acct: 4 of 6"):
        ledger.hold({}, 3)
    assert ledger.hold({}, 2) is not None
    ledger.remove_budget()
    assert ledger.budgets() == []


def test_alerts_are_logged_and_a_budget_without_alerts_sends_none(ledger, clock, caplog):
    ledger.set_budget(experiment="quiet", limit=2, alerts=(), warn_at=None)
    ledger.set_budget(experiment="grid-a", limit=2, alerts=(1.0,), warn_at=None)
    with caplog.at_level(logging.WARNING, logger="imagekit"):
        spend(ledger, 2, clock.at, tags={"experiment": "quiet"})
        spend(ledger, 2, clock.at)
    said = [record.getMessage() for record in caplog.records if "reached" in record.getMessage()]
    assert said == ["imagekit: budget experiment=grid-a reached 100% of its limit: 2 of 2 credits spent"]


def test_a_webhook_is_posted_off_the_work_and_retried_until_the_receiver_takes_it(ledger, clock, monkeypatch):
    monkeypatch.setattr(alerts_module, "WEBHOOK_BACKOFF", (0.02, 0.1))
    with Receiver(fail_first=2, hold=True) as hook:
        ledger.set_budget(experiment="grid-a", limit=10, alerts=(0.5,), period="month", tz="Europe/Berlin",
                          webhook=hook.url, warn_at=None)
        spend(ledger, 5, clock.at)
        # The work went on while the receiver still held the first attempt.
        assert hook.arrived.wait(30) and hook.attempts == 0 and hook.received == []
        hook.released.set()
        wait_until(lambda: hook.received, timeout=60, what="the alert delivered")
        assert hook.attempts == 3  # two answered 503, then taken
    [body] = hook.received
    assert {key: body[key] for key in ("tags", "account", "threshold", "spent", "limit", "period", "tz")} == {
        "tags": GRID, "account": None, "threshold": 0.5, "spent": 5, "limit": 10, "period": "month",
        "tz": "Europe/Berlin"}
    assert (body["period_start"], body["period_end"]) == ("2026-10-31T23:00:00.000+00:00", "2026-11-30T23:00:00.000+00:00")
    assert body["text"].startswith("budget experiment=grid-a reached 50% of its limit this month")


def test_a_webhook_that_never_answers_is_given_up_in_one_line(ledger, clock, monkeypatch, caplog):
    monkeypatch.setattr(alerts_module, "WEBHOOK_BACKOFF", (0.01, 0.02))
    monkeypatch.setattr(alerts_module, "WEBHOOK_ATTEMPTS", 3)
    with Receiver(fail_first=100) as hook:
        ledger.set_budget(experiment="grid-a", limit=1, alerts=(1.0,), webhook=hook.url, warn_at=None)
        with caplog.at_level(logging.WARNING, logger="imagekit"):
            spend(ledger, 1, clock.at)
            assert alerts_module.webhooks().drain(60)
    assert hook.attempts == 3
    [first] = [r.getMessage() for r in caplog.records if "trying again in the background" in r.getMessage()]
    [line] = [r.getMessage() for r in caplog.records if "not delivered" in r.getMessage()]
    assert "HTTP 503" in first and "HTTP 503" in line and "token" not in line + first  # a URL's query is often a secret


def test_a_receiver_that_is_down_holds_up_only_its_own_alerts(ledger, clock, monkeypatch, caplog):
    monkeypatch.setattr(alerts_module, "WEBHOOK_BACKOFF", (8.0, 8.0))  # the dead one waits 4 to 8 s between tries
    monkeypatch.setattr(alerts_module, "WEBHOOK_ATTEMPTS", 2)
    with Receiver() as hook:
        ledger.set_budget(experiment="dead", limit=1, alerts=(1.0,), warn_at=None, webhook="http://127.0.0.1:9/x")
        ledger.set_budget(experiment="grid-a", limit=1, alerts=(1.0,), warn_at=None, webhook=hook.url)
        spend(ledger, 1, clock.at, tags={"experiment": "dead"})
        started = time.monotonic()
        spend(ledger, 1, clock.at)
        wait_until(lambda: hook.received, timeout=15, what="the live receiver's alert")
        waited = time.monotonic() - started
    assert [body["tags"] for body in hook.received] == [GRID] and waited < 4, waited  # not queued behind the dead one
    # The dead one given up before the test ends: its warning, seconds later, once fell into a later test's log.
    assert alerts_module.webhooks().drain(60)
    assert any("http://127.0.0.1:9 was not delivered" in r.getMessage() for r in caplog.records)


def test_an_unreachable_webhook_is_said_at_once_and_again_when_the_process_ends_before_it_is_given_up(tmp_path):
    """A short script: the first failure is logged at once, and the end of the process says what was
    not delivered, rather than ending quiet while the retries would have gone on for half a minute."""
    script = (f"import logging, imagekit\nfrom imagekit.ledger import Entry, Ledger, Source, Status\n"
              f"ledger = Ledger({str(tmp_path / 'ledger.sqlite')!r}, account='acct')\n"
              "ledger.set_budget(experiment='a', limit=1, alerts=(1.0,), warn_at=None, webhook='http://127.0.0.1:9/x')\n"
              "ledger.record(Entry(operation='create', status=Status.ANSWERED, credits=1, source=Source.PRICED, "
              "tags={'experiment': 'a'}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "the alert webhook http://127.0.0.1:9 failed (ConnectError" in done.stderr, done.stderr
    assert "the process ends with 1 alert webhook POST not delivered" in done.stderr, done.stderr


def test_a_ledger_from_before_alerts_opens_and_its_budgets_count_all_time(tmp_path, clock):
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.executescript("""
        CREATE TABLE budgets (tag_key TEXT NOT NULL, tag_value TEXT NOT NULL, credit_limit REAL NOT NULL,
            warn_at REAL, hard INTEGER NOT NULL, time TEXT NOT NULL, PRIMARY KEY (tag_key, tag_value));
        INSERT INTO budgets VALUES ('experiment', 'grid-a', 10, NULL, 1, '2025-01-01T00:00:00.000+00:00');
    """)
    old.close()
    ledger = Ledger(path, account="acct", clock=clock)
    spend(ledger, 3, utc(2020, 1, 1))
    [budget] = ledger.budgets()
    assert (budget.spent, budget.alerts, budget.period, budget.start) == (3, (), None, None)
    ledger.set_budget(experiment="grid-a", limit=10, period="day")
    assert ledger.budgets()[0].spent == 0


@pytest.mark.postgres
@pytest.mark.slow(8)
def test_an_alert_waits_with_its_entries_while_the_database_is_away_and_fires_once(tmp_path):
    with PostgresServer() as cluster:  # its own: stopped here for real
        ledger = Ledger(cluster.new_database(), account="acct")
        got: list[Alert] = []
        ledger.set_budget(experiment="grid-a", limit=4, alerts=(0.5, 1.0), hard=False, warn_at=None,
                          on_alert=got.append)
        spend(ledger, 1, datetime.now(UTC))
        unpriced = ledger.record(Entry(operation="create", status=Status.ANSWERED, tags=GRID))  # credits unknown yet
        cluster.halt()
        spend(ledger, 1, datetime.now(UTC))
        spend(ledger, 2, datetime.now(UTC))
        assert ledger.waiting() == 2 and got == []  # in the spool, and so are their alerts
        cluster.resume()
        wait_until(lambda: ledger.flush() == 0 and len(got) == 2, timeout=60, what="the spool written")
        ledger.flush()
        assert [(alert.threshold, alert.spent) for alert in got] == [(0.5, 4), (1.0, 4)]

        ledger.set_budget(experiment="grid-a", limit=8, alerts=(0.75,), hard=False, warn_at=None, on_alert=got.append)
        cluster.halt()
        ledger.settle(unpriced, 2.0, Source.PRICED)  # waits in the spool: so does its alert
        assert got[2:] == []
        cluster.resume()
        wait_until(lambda: ledger.flush() == 0 and len(got) == 3, timeout=60, what="the settlement written")
        assert (got[2].threshold, got[2].spent, got[2].limit) == (0.75, 6, 8)
        ledger.close()


WORKER = """
import json, logging, sys, time
from pathlib import Path
import imagekit
from imagekit.ledger import Entry, Ledger, Source, Status
url, name, barrier = sys.argv[1:4]
logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s")
ledger = Ledger(url, account=name)
ledger.set_budget(experiment="race", limit=30, hard=False, warn_at=None, period="month", tz="Europe/Berlin",
                  on_alert=lambda alert: print(json.dumps([alert.threshold, alert.spent]), flush=True))
(Path(barrier) / f"ready-{name}").touch()
while not (Path(barrier) / "go").exists():
    time.sleep(0.005)
for _ in range(12):
    ledger.record(Entry(operation="create", status=Status.ANSWERED, credits=1.0, source=Source.PRICED,
                        tags={"experiment": "race"}))
ledger.close()
"""


@pytest.mark.slow(8)
def test_processes_sharing_a_postgresql_ledger_send_each_alert_once(postgres, tmp_path):
    url = postgres.new_database()
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, url, f"p{n}", str(tmp_path)], cwd=ROOT, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={"PYTHONPATH": str(ROOT), "IMAGEKIT_HOME": str(tmp_path / f"home-{n}"),
                                     "PATH": "/usr/bin:/bin"})
               for n in range(3)]
    try:
        wait_until(lambda: len(list(tmp_path.glob("ready-*"))) == 3 or any(w.poll() is not None for w in workers),
                   timeout=120, what="the workers ready")
        (tmp_path / "go").touch()
        outs = [worker.communicate(timeout=120) for worker in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    assert all(worker.returncode == 0 for worker in workers), [err for _, err in outs]
    sent = sorted(json.loads(line)[0] for out, _ in outs for line in out.splitlines())
    logged = sum(err.count("reached") for _, err in outs)
    assert sent == [0.5, 0.8, 1.0] and logged == 3  # 36 credits against 30, by three processes: each share once
    with psycopg.connect(url) as db:
        rows = db.execute("SELECT threshold, spent FROM alerts ORDER BY threshold").fetchall()
    assert [threshold for threshold, _ in rows] == [0.5, 0.8, 1.0]
    assert all(spent >= threshold * 30 for threshold, spent in rows)
    assert Ledger(url).budgets()[0].spent == 36


@pytest.fixture
def ledger_location(either_ledger) -> str:
    """The end-to-end tests here run on a SQLite ledger and on a PostgreSQL one."""
    return either_ledger


def test_a_batch_crossing_its_budget_alerts_once_per_share_by_callback_and_webhook(connect):
    ik = connect()
    got: list[Alert] = []
    with Receiver() as hook:
        ik.budget(experiment="grid-a", limit=20, period="month", tz="Europe/Berlin", on_alert=got.append,
                  webhook=hook.url, warn_at=None)
        batch = ik.batch([f"p {i}" for i in range(12)], style=ik.styles()[0], tags=GRID)  # 2 credits a row
        batch.run(progress=False)
        wait_until(lambda: len(hook.received) == 3, timeout=60, what="three alerts delivered")
    assert "budget experiment=grid-a" in batch.stopped
    assert [(alert.threshold, alert.tags) for alert in got] == [(0.5, GRID), (0.8, GRID), (1.0, GRID)]
    assert [body["threshold"] for body in hook.received] == [0.5, 0.8, 1.0]
    assert got[0].spent >= 10 and 20 - 2 < got[-1].spent + got[-1].held <= 20  # full: the next row would pass it
    assert ik.ledger.budgets()[0].spent <= 20


def test_an_accounts_budget_refuses_untagged_work_and_alerts_when_full(connect):
    ik = connect()
    got: list[Alert] = []
    style = ik.styles()[0]
    ik.budget(limit=3, alerts=(1.0,), on_alert=got.append, warn_at=None)
    ik.create("one", style=style)
    with pytest.raises(imagekit.BudgetExceededError, match=r"account \w+: 2 of 3 credits spent"):
        ik.create("two", style=style)
    assert [(alert.threshold, alert.account, alert.spent) for alert in got] == [(1.0, ik.ledger.account, 2)]


def test_a_budget_on_the_plans_own_period_counts_the_month_the_service_grants_credit_in(connect):
    ik = connect()
    started = ik.me().plan_started_at
    end = started.replace(month=started.month % 12 + 1, year=started.year + started.month // 12)  # fresh: not the 31st
    budget = ik.budget(experiment="grid-a", limit=4, period="plan", tz="Europe/Berlin", warn_at=None)
    assert (budget.period, budget.start, budget.end) == (plan_period("month", started), started, end)
    style = ik.styles()[0]
    with ik.tags(**GRID):
        ik.create("one", style=style)
        ik.create("two", style=style)
        with pytest.raises(imagekit.BudgetExceededError,
                           match=f"spent this plan month.*resets at {end.astimezone(ZoneInfo('Europe/Berlin')):%Y-%m-%d %H:%M}"):
            ik.create("three", style=style)
    assert ik.ledger.forecast(by="experiment").loc["grid-a", "resets"] == end

    async def on_the_async_twin() -> Budget:
        async with ik.to_async() as aik:
            return await aik.budget(experiment="grid-b", limit=9, period="plan")

    assert asyncio.run(on_the_async_twin()).period == budget.period


NOTEBOOK_CELL = """
from imagekit.ledger import Entry, Ledger, Source, Status
ledger = Ledger({path!r}, account="acct")
ledger.set_budget(experiment="nb", limit=2, alerts=(1.0,), warn_at=None)
ledger.record(Entry(operation="create", status=Status.ANSWERED, credits=2.0, source=Source.PRICED,
                    tags={{"experiment": "nb"}}))
"""


@pytest.mark.slow(6)
def test_in_a_notebook_an_alert_shows_as_a_banner(tmp_path):
    from jupyter_client.manager import start_new_kernel

    manager, kernel = start_new_kernel(env={**os.environ, "PYTHONPATH": str(ROOT),
                                            "IMAGEKIT_HOME": str(tmp_path / "home")}, cwd=str(ROOT))
    shown: list[dict] = []
    try:
        reply = kernel.execute_interactive(NOTEBOOK_CELL.format(path=str(tmp_path / "ledger.sqlite")), timeout=120,
                                           output_hook=lambda message: shown.append(message))
    finally:
        kernel.stop_channels()
        manager.shutdown_kernel(now=True)
    assert reply["content"]["status"] == "ok", reply["content"]
    banners = [message["content"]["data"]["text/html"] for message in shown
               if message["msg_type"] == "display_data" and "text/html" in message["content"]["data"]]
    [banner] = banners
    assert "budget experiment=nb reached 100% of its limit: 2 of 2 credits spent" in banner
    streamed = "".join(message["content"].get("text", "") for message in shown if message["msg_type"] == "stream")
    assert "reached 100%" not in streamed  # one notice on the page: no warning line under the banner


def test_new_shares_of_a_budget_set_again_alert_though_others_were_sent(tmp_path, clock):
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct", clock=clock)
    got: list[Alert] = []
    ledger.set_budget(experiment="grid-a", limit=10, alerts=(0.5,), hard=False, warn_at=None, on_alert=got.append)
    spend(ledger, 5, clock.at)
    ledger.set_budget(experiment="grid-a", limit=10, alerts=(0.5, 0.9), hard=False, warn_at=None, on_alert=got.append)
    spend(ledger, 4, clock.at)
    ledger.set_budget(experiment="grid-a", limit=20, alerts=(0.5, 0.9), hard=False, warn_at=None)  # the callback stays
    spend(ledger, 1, clock.at)  # a new limit: its shares are new alerts
    assert [(alert.threshold, alert.limit, alert.spent) for alert in got] == [(0.5, 10, 5), (0.9, 10, 9), (0.5, 20, 10)]
    ledger.remove_budget(experiment="grid-a")  # removing a budget removes its callback
    ledger.set_budget(experiment="grid-a", limit=30, alerts=(0.2,), hard=False, warn_at=None)
    spend(ledger, 1, clock.at)
    assert len(got) == 3


SECRETS = ("hookpa55", "hookuser", "secret-path-xyz", "tok-abc", "s3cretPW", "dbalice", "qpass", "hunter22", "tok123")
"""What the URLs below hold that no output or log line may show."""


def test_no_url_is_shown_with_its_user_password_query_or_a_webhooks_path(ledger, clock, monkeypatch, caplog, capsys,
                                                                          tmp_path):
    """A failing webhook with user:password@host/secret-path?token=..., a sweep status, a ledger and a
    service whose URLs hold passwords and tokens: every line printed and logged names the host, and
    none holds a secret."""
    from imagekit.cli import main
    from tests.helpers import run_console

    monkeypatch.setattr(alerts_module, "WEBHOOK_BACKOFF", (0.01, 0.02))
    monkeypatch.setattr(alerts_module, "WEBHOOK_ATTEMPTS", 2)
    with Receiver(fail_first=100) as hook, caplog.at_level(logging.DEBUG):
        port = hook.url.split(":")[2].split("/")[0]
        ledger.set_budget(experiment="grid-a", limit=1, alerts=(1.0,), warn_at=None,
                          webhook=f"http://hookuser:hookpa55@127.0.0.1:{port}/secret-path-xyz?token=tok-abc")
        ledger.set_budget(experiment="dead", limit=1, alerts=(1.0,), warn_at=None,
                          webhook="http://hookuser:hookpa55@127.0.0.1:9/secret-path-xyz?token=tok-abc")
        spend(ledger, 1, clock.at)
        spend(ledger, 1, clock.at, tags={"experiment": "dead"})
        assert alerts_module.webhooks().drain(60)
        assert hook.attempts == 2
        database = "postgresql://dbalice:s3cretPW@127.0.0.1:9/spend?password=qpass"
        assert main(["sweep", "status", "--journal", database, "grid"]) == 1
        assert main(["usage", "--ledger", database]) == 1
    env = {"IMAGEKIT_HOME": str(tmp_path / "home"), "IMAGEKIT_BASE_URL": "http://bob:hunter22@127.0.0.1:9/?token=tok123",
           "IMAGEKIT_API_KEY": "k"}
    served = run_console("usage", cwd=tmp_path, env=env)
    printed = capsys.readouterr()
    said = [printed.out, printed.err, served.stdout, served.stderr, *(record.getMessage() for record in caplog.records)]
    shown = "\n".join(said)
    assert "not delivered" in shown and "http://127.0.0.1:9 was not delivered" in shown
    assert f"the alert webhook http://127.0.0.1:{port} failed (HTTP 503)" in shown, port
    assert "cannot open the journal at postgresql://127.0.0.1:9/spend:" in shown
    assert "the ledger at postgresql://127.0.0.1:9/spend cannot be reached" in shown
    assert "Could not reach http://127.0.0.1:9/ " in served.stderr
    assert not [secret for secret in SECRETS if secret in shown], shown


@pytest.mark.parametrize("webhook", ["http://127.0.0.1:9/hook\r\nX-Injected: 1", "http://127.0.0.1:9/a b",
                                     "http:///no-host", "ftp://127.0.0.1/hook"])
def test_a_webhook_that_cannot_be_sent_is_refused_when_set_in_one_line(ledger, webhook):
    with pytest.raises(imagekit.ConfigError) as refused:
        ledger.set_budget(experiment="grid-a", limit=5, webhook=webhook)
    assert "\n" not in str(refused.value) and "a budget's webhook is an http:// or https:// URL" in str(refused.value)
    assert ledger.budgets() == []


def test_a_webhook_with_a_line_break_set_before_it_was_checked_is_said_not_raised(ledger, clock, monkeypatch, caplog):
    """A ledger from an imagekit that took any webhook: its alert is logged as not delivered, once,
    with no traceback."""
    monkeypatch.setattr(alerts_module, "WEBHOOK_ATTEMPTS", 1)
    ledger.set_budget(experiment="grid-a", limit=1, alerts=(1.0,), warn_at=None, webhook="http://127.0.0.1:9/hook")
    with sqlite3.connect(ledger.path) as raw:
        raw.execute("UPDATE budgets SET webhook = ?", ("http://127.0.0.1:9/hook\r\nX-Injected: 1",))
    with caplog.at_level(logging.WARNING, logger="imagekit"):
        spend(ledger, 1, clock.at)
        assert alerts_module.webhooks().drain(30)
    [line] = [r.getMessage() for r in caplog.records if "not delivered" in r.getMessage()]
    assert "http://127.0.0.1:9 was not delivered" in line and "\n" not in line and "Injected" not in line
    assert not [r for r in caplog.records if r.exc_info]
