"""Usage reports: the tables from a known ledger, the forecast's arithmetic, files and the CLI."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from imagekit.cli import main
from imagekit.reports import (
    MIN_HISTORY,
    balance_over_time,
    burn_down,
    forecast,
    spend_by_day,
    spend_by_operation,
    spend_by_style,
    style_label,
    usage_report,
)

NOW = datetime(2025, 3, 10, 12, tzinfo=UTC)


@pytest.fixture
def ledger() -> pd.DataFrame:
    rows = [  # time offset (hours), operation, credits, style, group, images
        (-50, "create", 4.0, 1, "a.1", [1, 2]), (-26, "refund", -2.0, None, "a.1", [2]),
        (-25, "create", 3.0, 2, "b.1", [3]), (-2, "enhance", 2.0, None, None, [4]),
        (-1, "removeBg", 1.0, None, None, [5]), (-1, "cancelEdit", None, None, None, []),
    ]
    return pd.DataFrame([{"time": pd.Timestamp(NOW + timedelta(hours=h)), "operation": op, "credits": c,
                          "style_id": s, "group_id": g, "image_ids": ids, "balance": None}
                         for h, op, c, s, g, ids in rows])


def test_spend_by_operation_counts_refunds_against_creates(ledger):
    table = spend_by_operation(ledger)
    assert table.loc["create", "credits"] == 5.0 and table.loc["enhance", "credits"] == 2.0
    assert table.index[0] == "create" and table.loc["cancelEdit", "credits"] == 0


def test_spend_by_day_has_a_running_total(ledger):
    table = spend_by_day(ledger)
    assert list(table["credits"]) == [4.0, 1.0, 3.0] and list(table["cumulative"]) == [4.0, 5.0, 8.0]


def test_spend_by_style_follows_refunds_to_their_style(ledger):
    table = spend_by_style(ledger)
    assert table["credits"].to_dict() == {"style 2": 3.0, "style 1": 2.0}
    named = spend_by_style(ledger, {1: "My Photo"})  # names as styles() shows them, with their ids
    assert named["credits"].to_dict() == {"style 2": 3.0, "My Photo #1": 2.0}
    assert style_label(1, {1: "My Photo"}) == "My Photo #1" and style_label(None) == "no style"


def test_balance_is_worked_back_from_the_current_balance(ledger):
    frame = balance_over_time(ledger, current=100.0)
    assert frame["balance"].iloc[-1] == 100.0 and frame["balance"].iloc[0] == 100.0 + 8.0 - 4.0


@pytest.mark.parametrize("seconds", [1, 4, 40, 3000, 300_000])
def test_the_burn_down_labels_its_time_axis_as_times_a_person_reads(seconds):
    """``14:03:20`` or ``11 Mar``, the date beside them, whatever the span: never ``42:11.000000``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    times = [pd.Timestamp(NOW + timedelta(seconds=seconds * share)) for share in (0, 0.1, 0.5, 1)]
    figure = burn_down(pd.DataFrame({"time": times, "balance": [100.0, 98.0, 96.0, 90.0]}))
    FigureCanvasAgg(figure).draw()
    ax = figure.axes[0]
    labels = [label.get_text() for label in ax.get_xticklabels()]
    assert len(labels) >= 3 and all(re.fullmatch(r"\d\d:\d\d(:\d\d)?|\d\d [A-Z][a-z]{2}", text) for text in labels), labels
    assert re.fullmatch(r"(\d\d )?Mar 2025", ax.xaxis.get_offset_text().get_text()) and ax.get_xlabel() == "time (UTC)"
    low, high = ax.get_xlim()
    assert (times[-1] - times[0]).total_seconds() / 86_400 >= 0.3 * (high - low) or seconds < 3  # the run fills the axis
    assert len(set(labels)) == len(labels)


def test_forecast_runs_out_at_the_recent_rate(ledger):
    result = forecast(ledger, 80.0, days=7, now=NOW)
    assert result.per_day == pytest.approx(8.0 / (50 / 24))
    assert result.runs_out == NOW + timedelta(days=80.0 / result.per_day)
    assert forecast(ledger.iloc[:0], 80.0, now=NOW).runs_out is None


def test_a_forecast_needs_a_day_of_history(ledger):
    """Three seconds of spending say nothing about a rate per day."""
    recent = ledger.assign(time=[pd.Timestamp(NOW - timedelta(seconds=3))] * len(ledger))
    result = forecast(recent, 80.0, now=NOW)
    assert result.runs_out is None and not result.enough_history and MIN_HISTORY == timedelta(days=1)
    assert "too little history" in str(result) and "3 seconds" in str(result) and "1 day" in str(result)
    assert forecast(ledger, 80.0, now=NOW).enough_history


@pytest.fixture
def ledger_location(either_ledger) -> str:
    """The report tests that record run on a SQLite ledger and on a PostgreSQL one."""
    return either_ledger


def test_usage_report_writes_tables_and_plots(connect, tmp_path):
    ik = connect()
    ik.batch(["a fox", "a cat"], style=ik.styles()[0]).run(progress=False)
    report = usage_report(ik, tmp_path / "report")
    names = {path.name for path in report.files}
    assert {"usage-by-operation.csv", "usage-by-day.csv", "usage-by-style.csv", "usage-limits.csv",
            "usage-burn-down.png", "usage-by-operation.png", "usage-by-style.png"} <= names
    assert all(path.stat().st_size > 0 for path in report.files)
    assert report.by_operation.loc["create", "credits"] == 4 and "Forecast" in str(report)
    assert "too little history" in str(report.forecast)  # seconds of spending: no run-out date


def test_limits_show_balance_cap_and_spent_in_the_period(connect):
    ik = connect()
    ik.create("a fox", style=ik.styles()[0], count=2)
    limits = usage_report(ik).limits
    usage, period = ik.usage(), ik.usage().period
    assert limits.loc["credit balance", "value"] == usage.current_credit
    assert limits.loc["credit balance", "cap"] == usage.max_credit
    assert limits.loc[f"credits spent this {period}", "value"] == 4
    assert limits.loc[f"edits this {period}", "cap"] == usage.max_edit_count


def test_the_usage_command_prints_and_writes(connect, box, ledger_location, tmp_path, monkeypatch, capsys):
    ik = connect()
    ik.create("a fox", style=ik.styles()[0])
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", ik.config.api_key)
    assert main(["usage", "--out", str(tmp_path / "u"), "--ledger", ledger_location]) == 0
    out = capsys.readouterr().out
    assert "Spend by operation" in out and "create" in out and (tmp_path / "u" / "usage-burn-down.png").exists()
