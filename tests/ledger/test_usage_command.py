"""``imagekit usage`` through the console script, as a new user meets it: a ledger with nothing in it,
one spend, and one an earlier version poisoned are normal reports, and read as a person reads."""

from __future__ import annotations

import re
import sqlite3

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
