"""``imagekit usage`` through the console script, as a new user meets it: a ledger with nothing in it,
one spend, and one an earlier version poisoned are normal reports, and read as a person reads; so does
the weekly report per tag."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime, timedelta

from imagekit.ledger import Entry, Ledger, Status
from imagekit.reports import burn_down, usage_report
from tests.helpers import run_console
from tests.ledger.test_columns import poison
from tests.workflows.conftest import public_style


def assert_reads_as_a_person_reads(out: str) -> None:
    assert "Traceback" not in out and "NaN" not in out and "None" not in out and "Batch(" not in out
    limits = out.split("Plan limits")[1].split("Records against")[0]
    assert re.search(r"credit balance\s+[\d,]+\s+[\d,]+\s+\d+(\.\d+)?%", limits), limits
    assert not re.search(r"0\.\d{3,}", limits)  # shares as percentages, not fractions


def test_a_fresh_home_with_nothing_spent_is_a_normal_report(tmp_path):
    done = run_console("usage", cwd=tmp_path, env={"IMAGEKIT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    service, summary = done.stdout.splitlines()[:2]
    assert service.startswith("Usage of ") and f"on the local sandbox in {tmp_path / 'home' / 'sandbox'}" in service
    assert "(not the real service" in service  # said first: this is not the account people pay for
    assert summary.startswith("Nothing recorded yet") and "Traceback" not in done.stderr
    assert_reads_as_a_person_reads(done.stdout)
    assert (tmp_path / "usage" / "usage-burn-down.png").stat().st_size > 0


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
    ik.create("a fox", style=public_style(box))
    poison(ledger_location)
    env = {"IMAGEKIT_HOME": str(tmp_path / "home"), "IMAGEKIT_BASE_URL": box.url,
           "IMAGEKIT_API_KEY": ik.config.api_key}
    every = run_console("usage", "--by", "experiment", "--ledger", ledger_location, cwd=tmp_path, env=env)
    assert every.returncode == 0 and "(untagged)" in every.stdout, every.stderr
    assert "could not be read in full" in every.stderr  # the warning, once
    with sqlite3.connect(ledger_location) as db:  # the poisoned row is this account's
        db.execute("UPDATE entries SET account = ? WHERE uid = 'poisoned'", (ik.ledger.account,))
    done = run_console("usage", "--ledger", ledger_location, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "1 entry could not be read in full" in done.stdout and "'My Photo' is not a style id" in done.stdout
    assert done.stdout.splitlines()[1].startswith("2 operations recorded")


def test_a_weekly_report_names_the_top_ten_folds_the_rest_and_reads_as_a_person_reads(tmp_path):
    """13 experiments over two weeks: the ten dearest this week, each against the same stretch of the
    week before, the other three in one row, a total, and the run-out dates of their budgets."""
    location = str(tmp_path / "ledger.sqlite")
    ledger, now = Ledger(location, account="team"), datetime.now(UTC)
    for hour in range(0, 14 * 24, 6):
        when = (now - timedelta(minutes=1, hours=hour)).isoformat(timespec="milliseconds")
        for number in range(13):
            credits = (number + 1) * (2 if number == 12 and hour < 7 * 24 else 1)  # exp-12 doubled this week
            ledger.record(Entry(operation="create", status=Status.ANSWERED, time=when, credits=float(credits),
                                image_ids=[1], tags={"experiment": f"exp-{number}"}))
    ledger.set_budget(experiment="exp-12", limit=1)  # spent already
    spent = ledger.forecast(by="experiment", period="week").loc["exp-11", "spent"]
    ledger.set_budget(experiment="exp-11", limit=float(spent) + 40, period="week")  # 40 left this week at 48 a day
    env = {"IMAGEKIT_HOME": str(tmp_path / "home")}
    done = run_console("usage", "--by", "experiment", "--period", "week", "--ledger", location, cwd=tmp_path, env=env)
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


def test_an_empty_ledger_is_a_normal_weekly_report(tmp_path):
    done = run_console("usage", "--by", "experiment", "--period", "week", cwd=tmp_path,
                       env={"IMAGEKIT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert done.stdout.splitlines()[1] == "(nothing spent this week or the week before)"
    assert "Traceback" not in done.stdout and "NaN" not in done.stdout
