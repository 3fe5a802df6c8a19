"""``imagekit usage`` through the console script, as a new user meets it: a ledger with nothing in it,
one spend, and one an earlier version poisoned are normal reports, and read as a person reads; so does
the weekly report per tag. A report reads the ledger: it starts no sandbox and asks no service unless
told to (``--refresh``), and says how old the balance it counts from is."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import imagekit
from imagekit.ledger import Entry, Ledger, Status, account_of
from imagekit.ledger.budgets import Budget
from imagekit.reports import burn_down, usage_report
from imagekit.reports.report import budget_text
from tests.helpers import run_console
from tests.ledger.test_columns import poison
from tests.utils.service import public_style


def assert_reads_as_a_person_reads(out: str) -> None:
    assert "Traceback" not in out and "NaN" not in out and "None" not in out and "Batch(" not in out
    limits = out.split("Plan limits")[1].split("Records against")[0]
    assert re.search(r"credit balance\s+[\d,]+\s+[\d,]+\s+\d+(\.\d+)?%", limits), limits
    assert not re.search(r"0\.\d{3,}", limits)  # shares as percentages, not fractions


def test_a_fresh_home_with_nothing_spent_is_a_normal_report(tmp_path):
    plain = run_console("usage", cwd=tmp_path, env={"IMAGEKIT_HOME": str(tmp_path / "home")})
    assert plain.returncode == 0 and not plain.stderr, plain.stderr
    service, summary, balance = plain.stdout.splitlines()[:3]
    assert service == (f"Usage of the demo account on the local sandbox in {tmp_path / 'home' / 'sandbox'} (not the "
                       "real service: set IMAGEKIT_BASE_URL and IMAGEKIT_API_KEY for yours), from the ledger alone")
    assert summary.startswith("Nothing recorded yet") and balance.startswith("Balance: none recorded yet")
    assert "NaN" not in plain.stdout and "None" not in plain.stdout
    assert not (tmp_path / "home" / "sandbox").exists() and not (tmp_path / "usage").exists()  # nothing started or written

    done = run_console("usage", "--refresh", "--out", "usage", cwd=tmp_path, env={"IMAGEKIT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    service, summary = done.stdout.splitlines()[:2]
    assert service.startswith("Usage of ") and f"on the local sandbox in {tmp_path / 'home' / 'sandbox'}" in service
    assert "(not the real service" in service  # said first: this is not the account people pay for
    assert summary.startswith("Nothing recorded yet") and "Traceback" not in done.stderr
    assert_reads_as_a_person_reads(done.stdout)
    assert (tmp_path / "usage" / "usage-burn-down.png").stat().st_size > 0


def test_a_ledger_of_another_home_says_whose_entries_it_holds(tmp_path):
    """``usage --ledger FILE`` for a file another IMAGEKIT_HOME wrote said "Nothing recorded yet" alone."""
    theirs = Ledger(tmp_path / "theirs.sqlite", account="someone-else")
    for credits in (2.0, 4.0):
        theirs.record(Entry(operation="create", status=Status.ANSWERED, credits=credits, image_ids=[1], tags={}))
    theirs.record(Entry(operation="balance", status=Status.ANSWERED, balance=94.0, tags={}))
    done = run_console("usage", "--ledger", str(tmp_path / "theirs.sqlite"), cwd=tmp_path,
                       env={"IMAGEKIT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:3] == [
        f"The ledger {tmp_path / 'theirs.sqlite'} holds nothing of this account, but 2 operations of 1 other account "
        "(written under another IMAGEKIT_HOME or for another service): imagekit usage --by TAG reports every account's.",
        "Nothing recorded yet: no operation of this account is in the ledger, so nothing was spent."]
    mine = run_console("usage", cwd=tmp_path, env={"IMAGEKIT_HOME": str(tmp_path / "home")})
    assert "holds nothing of this account" not in mine.stdout  # an empty ledger is just empty


def test_one_spend_is_a_report_with_a_visible_point(connect, box, ledger_location, tmp_path):
    ik = connect()
    ik.create("a fox", style=public_style(box))
    env = {"IMAGEKIT_HOME": str(tmp_path / "home"), "IMAGEKIT_BASE_URL": box.url,
           "IMAGEKIT_API_KEY": ik.config.api_key}
    done = run_console("usage", "--ledger", ledger_location, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    service, summary = done.stdout.splitlines()[:2]
    assert service == f"Usage of {ik.me().email} (user {ik.me().user_id}) on {box.url}"
    assert summary.startswith("1 operation recorded") and "Traceback" not in done.stderr
    assert_reads_as_a_person_reads(done.stdout)

    report = usage_report(ik)
    [line] = burn_down(report.balance, report.forecast).axes[0].get_lines()[:1]
    assert len(line.get_xdata()) == 1 and line.get_marker() == "o"  # one balance, drawn as a point


def test_a_ledger_an_earlier_version_poisoned_still_reports(connect, box, ledger_location, tmp_path):
    ik = connect()
    with imagekit.tags(experiment="foxes"):
        ik.create("a fox", style=public_style(box))
    poison(ledger_location)
    env = {"IMAGEKIT_HOME": str(tmp_path / "home"), "IMAGEKIT_BASE_URL": box.url,
           "IMAGEKIT_API_KEY": ik.config.api_key}
    every = run_console("usage", "--by", "experiment", "--ledger", ledger_location, cwd=tmp_path, env=env)
    assert every.returncode == 0 and "foxes" in every.stdout, every.stderr
    assert "(untagged)" not in every.stdout  # the poisoned entry is a refused call: no tag's spend
    assert "could not be read in full" in every.stderr  # the warning, once
    typo = run_console("usage", "--by", "experimnt", "--ledger", ledger_location, cwd=tmp_path, env=env)
    assert typo.returncode == 1 and typo.stderr.splitlines()[-1] == (
        f"error: no entry in the ledger at {ledger_location} carries the tag 'experimnt'; its tags: experiment")
    with sqlite3.connect(ledger_location) as db:  # the poisoned row is this account's
        db.execute("UPDATE entries SET account = ? WHERE uid = 'poisoned'", (ik.ledger.account,))
    done = run_console("usage", "--ledger", ledger_location, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "1 entry could not be read in full" in done.stdout and "'My Photo' is not a style id" in done.stdout
    assert done.stdout.splitlines()[1].startswith("1 operation recorded, ")
    assert done.stdout.splitlines()[1].endswith(" spent (1 more refused by the service, which charges nothing for them).")


def test_a_weekly_report_names_the_top_ten_folds_the_rest_and_reads_as_a_person_reads(tmp_path):
    """13 experiments over two weeks: the ten dearest this week, each against the same stretch of the
    week before, the other three in one row, a total, and the run-out dates of their budgets."""
    now = datetime.now(UTC)
    monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    if monday + timedelta(days=7) - now < timedelta(minutes=10):  # the week resets within the test: wait for it
        time.sleep((monday + timedelta(days=7) - now).total_seconds() + 1)
        now = datetime.now(UTC)
        monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    week_left = (monday + timedelta(days=7) - now) / timedelta(days=1)
    location = str(tmp_path / "ledger.sqlite")
    ledger = Ledger(location, account="team")
    for hour in range(0, 14 * 24, 6):
        when = (now - timedelta(minutes=1, hours=hour)).isoformat(timespec="milliseconds")
        for number in range(13):
            credits = (number + 1) * (2 if number == 12 and hour < 7 * 24 else 1)  # exp-12 doubled this week
            ledger.record(Entry(operation="create", status=Status.ANSWERED, time=when, credits=float(credits),
                                image_ids=[1], tags={"experiment": f"exp-{number}"}))
    ledger.set_budget(experiment="exp-12", limit=1)  # spent already
    spent = ledger.forecast(by="experiment", period="week").loc["exp-11", "spent"]
    # at 48 a day, what is left runs out in half of what is left of the week (not after its reset)
    ledger.set_budget(experiment="exp-11", limit=float(spent) + round(48 * week_left / 2, 3), period="week")
    env = {"IMAGEKIT_HOME": str(tmp_path / "home")}
    done = run_console("usage", "--by", "experiment", "--period", "week", "--ledger", location, "--out", "usage",
                       cwd=tmp_path, env=env)
    assert done.returncode == 0 and not done.stderr, done.stderr
    out = done.stdout
    for junk in ("Traceback", "NaN", "NaT", "None", "Timestamp", "nan", "e+"):
        assert junk not in out, out
    lines = out.splitlines()
    assert re.fullmatch(rf"Spend by experiment this week \(since Mon \d\d \w{{3}} \d{{4}} 00:00, UTC\) in "
                        rf"{re.escape(location)} \(every account\)", lines[0]), lines[0]
    rows = {line.split()[0]: line for line in lines[3:] if line.strip() and not line.startswith(("change:", "Wrote"))}
    assert list(rows)[:10] == [f"exp-{number}" for number in range(12, 2, -1)]
    assert list(rows)[10:] == ["other", "total"] and "other (3 values)" in rows["other"]
    assert rows["exp-12"].split()[3] == "+100%" and rows["exp-12"].split()[-1] == "already"
    assert re.search(r"\+0%\s+48\.0\s+\w{3} \d\d \w{3} \d\d:\d\d$", rows["exp-11"]), rows["exp-11"]
    assert rows["exp-10"].split()[3] == "+0%" and len(rows["exp-10"].split()) == 5  # no budget: no date
    assert "change: against the same stretch of the week before" in out
    assert (tmp_path / "usage" / "usage-by-experiment-week.csv").stat().st_size > 0

    berlin = run_console("usage", "--by", "experiment", "--period", "month", "--tz", "Europe/Berlin", "--ledger",
                         location, "--out", str(tmp_path / "month"), cwd=tmp_path, env=env)
    assert berlin.returncode == 0 and berlin.stdout.startswith("Spend by experiment this month (since "), berlin.stderr
    assert "00:00, Europe/Berlin)" in berlin.stdout.splitlines()[0]


def lately(*minutes_ago: float) -> list[str]:
    """The times that many minutes ago, squeezed (in order) into this week and month when one of them
    began less long ago: a report of this period counts them in the first minutes of a Monday or a 1st too."""
    now = datetime.now(UTC)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    began = max(midnight - timedelta(days=now.weekday()), midnight.replace(day=1))
    squeeze = min(1.0, (now - began - timedelta(seconds=1)) / timedelta(minutes=max(minutes_ago)))
    return [(now - timedelta(minutes=minutes) * squeeze).isoformat(timespec="milliseconds") for minutes in minutes_ago]


def test_a_tag_whose_budget_is_spent_is_named_not_folded_into_other(tmp_path):
    location = str(tmp_path / "ledger.sqlite")
    ledger, [when] = Ledger(location, account="team"), lately(5)
    for number in range(12):  # exp-0 spends least: the fold would hide it
        ledger.record(Entry(operation="create", status=Status.ANSWERED, time=when,
                            credits=float(number + 1), image_ids=[1], tags={"experiment": f"exp-{number}"}))
    ledger.set_budget(experiment="exp-0", limit=1, period="month")
    done = run_console("usage", "--by", "experiment", "--period", "week", "--ledger", location, cwd=tmp_path,
                       env={"IMAGEKIT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0 and not done.stderr, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[2:] if line.startswith(("exp-", "other"))}
    assert rows["exp-0"].split()[-1] == "already" and "other (1 value)" in rows["other"]
    assert "already" not in rows["other"] and len(rows) == 12
    assert "counting its reset at the end of the budget's own period" in done.stdout


def test_the_accounts_report_says_what_its_budget_leaves(tmp_path):
    location = str(tmp_path / "ledger.sqlite")
    Ledger(location, account="team").record(Entry(operation="create", status=Status.ANSWERED, credits=7.0,
                                                  image_ids=[1], tags={}))
    Ledger(location).set_budget(limit=7, period="week")  # the whole ledger's: every account's work, the report's too
    done = run_console("usage", "--ledger", location, cwd=tmp_path, env={"IMAGEKIT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    assert re.search(r"^Budget of the whole ledger: 7 of 7 credits spent this week; nothing left until it resets "
                     r"Mon \d\d \w{3} \d{4} 00:00 UTC: work is refused$", done.stdout, re.M), done.stdout

    team, now = Ledger(location, account="team"), datetime.now(UTC)
    for hour in range(1, 73):  # three days at a credit an hour
        team.record(Entry(operation="create", status=Status.ANSWERED, credits=1.0, image_ids=[1], tags={},
                          time=(now - timedelta(hours=hour)).isoformat(timespec="milliseconds")))
    Ledger(location).set_budget(limit=7 + 72 + 10, period=None)  # all time: 10 left, some 10 hours at this rate
    done = run_console("usage", "--ledger", location, cwd=tmp_path, env={"IMAGEKIT_HOME": str(tmp_path / "home")})
    line = next(line for line in done.stdout.splitlines() if line.startswith("Budget of the whole ledger"))
    when = datetime.strptime(line.rsplit("around ", 1)[1], "%Y-%m-%d %H:%M UTC").replace(tzinfo=UTC)
    assert line.startswith("Budget of the whole ledger: 79 of 89 credits spent; 10 of it left; at the recent rate it runs out")
    assert abs(when - (now + timedelta(hours=10))) < timedelta(hours=2), line


def test_the_accounts_own_budget_is_this_accounts_and_its_left_is_the_budgets():
    """The walk read "Budget of account 1ac0dea8d300487a: ...; 1985 credits left" under a forecast of 985
    credits left: the report names the account above it, and the two lefts are of two things."""
    own = Budget(key="", value="1ac0dea8d300487a", limit=2000, spent=15)
    assert budget_text(own) == "Budget of this account: 15 of 2000 credits spent; 1985 of it left"
    assert budget_text(Budget(key="team", value="a", limit=5, spent=5)).startswith("Budget of team=a: 5 of 5 credits spent; nothing left")


def test_a_rate_from_an_hour_of_spending_is_blank_not_zero_a_day(tmp_path):
    location = str(tmp_path / "ledger.sqlite")
    ledger = Ledger(location, account="team")
    for when in lately(50, 20):
        ledger.record(Entry(operation="create", status=Status.ANSWERED, time=when, credits=3.0, image_ids=[1],
                            tags={"experiment": "fresh"}))
    done = run_console("usage", "--by", "experiment", "--period", "week", "--ledger", location, cwd=tmp_path,
                       env={"IMAGEKIT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0 and not done.stderr, done.stderr
    header, fresh = done.stdout.splitlines()[1], next(line for line in done.stdout.splitlines() if line.startswith("fresh"))
    assert fresh.split() == ["fresh", "6", "0", "new"] and "0.0" not in done.stdout  # per day: blank, not 0.0
    assert header.index("per day") > len(fresh.rstrip())
    assert "per day: the rate of the last 7 days (blank: under 1 day of spending, too little to tell)" in done.stdout


def test_an_empty_ledger_is_a_normal_weekly_report(tmp_path):
    done = run_console("usage", "--by", "experiment", "--period", "week", cwd=tmp_path,
                       env={"IMAGEKIT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert done.stdout.splitlines()[1] == "(nothing spent this week or the week before)"
    assert "Traceback" not in done.stdout and "NaN" not in done.stdout


SPEND = "import imagekit; ik = imagekit.connect(); ik.create('a fox', style=ik.styles()[0]); ik.usage()"


def folder_state(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` with its size and modification time (in nanoseconds)."""
    return {str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns)
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_a_report_reads_the_ledger_starts_no_sandbox_and_says_a_balance_is_stale(tmp_path):
    """A home whose sandbox spent two days ago: the report names the sandbox's demo account first,
    counts from the balance the ledger recorded and says it is stale, and leaves the sandbox's
    folder as it was (no process served it: no record, no lock or database written)."""
    home = tmp_path / "home"
    env = {**os.environ, "IMAGEKIT_HOME": str(home)}
    for name in ("IMAGEKIT_BASE_URL", "IMAGEKIT_API_KEY", "IMAGEKIT_LEDGER_URL"):
        env.pop(name, None)
    subprocess.run([sys.executable, "-c", SPEND], env=env, check=True, capture_output=True, timeout=300)
    with sqlite3.connect(home / "ledger.sqlite") as db:  # the spend and the balance it showed, two days back
        for seq, time in db.execute("SELECT seq, time FROM entries").fetchall():
            earlier = datetime.fromisoformat(time) - timedelta(days=2)
            db.execute("UPDATE entries SET time = ? WHERE seq = ?", (earlier.isoformat(timespec="milliseconds"), seq))
    before = folder_state(home / "sandbox")

    done = run_console("usage", cwd=tmp_path, env={"IMAGEKIT_HOME": str(home)})
    assert done.returncode == 0 and not done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"Usage of the demo account on the local sandbox in {home / 'sandbox'} (not the real")
    assert lines[1] == "1 operation recorded, 2 credits spent."
    assert re.fullmatch(r"Balance [\d,]+ credits: the last the service reported, 2 days ago \(\d{4}-\d\d-\d\d "
                        r"\d\d:\d\d UTC\), less what the ledger recorded since; stale: grants and work done elsewhere "
                        r"since then are not in it\.", lines[2]), lines[2]
    assert lines[-1] == "imagekit usage --refresh starts the local sandbox and asks it for the balance and plan limits now."
    assert folder_state(home / "sandbox") == before  # not started, not joined, not written
    assert not (tmp_path / "usage").exists()  # files only with --out


def test_a_configured_service_is_asked_unless_told_not_to(tmp_path):
    """With ``--no-refresh`` an unreachable service is not asked: the report comes from the ledger, its
    first line naming the service and the key's last characters (never the key), and a fresh balance
    is not called stale; without it, the service is asked and its absence said in one line."""
    url, key = "http://127.0.0.1:9", "iks_abcdef_secret-wxyz"
    ledger = Ledger(str(tmp_path / "ledger.sqlite"), account=account_of(url, key))
    ledger.record(Entry(operation="balance", status=Status.ANSWERED, credits=None, balance=120.0))
    ledger.record(Entry(operation="create", status=Status.ANSWERED, credits=4.0, image_ids=[1]))
    env = {"IMAGEKIT_HOME": str(tmp_path / "home"), "IMAGEKIT_BASE_URL": url, "IMAGEKIT_API_KEY": key,
           "IMAGEKIT_LEDGER_URL": str(tmp_path / "ledger.sqlite")}
    done = run_console("usage", "--no-refresh", "--out", "report", cwd=tmp_path, env=env)
    assert done.returncode == 0 and not done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"Usage of API key ...wxyz on {url}, from the ledger alone" and "secret" not in done.stdout
    assert lines[2].startswith("Balance 116 credits: the last the service reported, ") and "stale" not in lines[2]
    assert "116 credits left" in done.stdout
    assert (tmp_path / "report" / "usage-burn-down.png").stat().st_size > 0  # drawn when written

    asked = run_console("usage", cwd=tmp_path, env=env)
    assert asked.returncode != 0 and "Could not reach" in asked.stderr and len(asked.stderr.splitlines()) == 1
    assert "imagekit usage --no-refresh reports from the ledger alone" in asked.stderr


def test_an_export_from_a_home_that_recorded_nothing_says_so_and_writes_nothing(tmp_path):
    """A fresh IMAGEKIT_HOME has no ledger: an export does not claim to have read one, and writes no file."""
    home = tmp_path / "home"
    done = run_console("usage", "export", "spend.csv", cwd=tmp_path, env={"IMAGEKIT_HOME": str(home)})
    assert done.returncode == 1 and done.stderr == (
        f"error: no ledger at {home / 'ledger.sqlite'} yet: nothing was recorded in this IMAGEKIT_HOME (a client "
        "records into it as it works; --ledger names another)\n"), done.stderr
    assert not (tmp_path / "spend.csv").exists() and not (home / "ledger.sqlite").exists()
