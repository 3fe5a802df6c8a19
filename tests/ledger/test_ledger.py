"""The credit ledger: every operation recorded with what it cost; its sums match the service."""

from __future__ import annotations

import dataclasses
import os

import pandas as pd
import pytest

import imagekit
from imagekit.config import Config
from imagekit.ledger import Entry, Ledger, Status, account_of
from imagekit.resources.edits import cancel_call, enhance_call, prepare, retry_call
from imagekit.resources.images import binary_call, create_call, meta_call
from imagekit.resources.prompts import text_call
from imagekit.resources.users import ME, STYLES, USAGE
from tests.helpers import balance, control


@pytest.fixture
def ledger_location(either_ledger) -> str:
    """Every test here runs on a SQLite ledger and on a PostgreSQL one."""
    return either_ledger


CONFIG = Config("http://sandbox.test", "key")


@pytest.mark.parametrize(("call", "operation", "read", "source_id", "request_id"), [
    (create_call(CONFIG, "a fox", {"style": 1}), "create", None, None, None),
    (prepare(CONFIG, enhance_call(CONFIG, 12, "2x"), "r-1", None)[0], "enhance", None, 12, "r-1"),
    (retry_call(CONFIG, 3, None), "retry", None, 3, None),
    (cancel_call("r 2"), "cancelEdit", None, None, "r 2"),
    (text_call(CONFIG, "a fox", None), "textToPrompt", None, None, None),
    (meta_call(12), None, "image", 12, None),
    (ME, None, "me", None, None),
    (STYLES, None, "styles", None, None),
    (USAGE, None, "usage", None, None),
    (binary_call(CONFIG, 12), None, None, None, None),
])
def test_each_request_says_what_the_ledger_records(call, operation, read, source_id, request_id):
    """Named where the request is built, never guessed from its path."""
    assert (call.operation, call.read, call.source_id, call.request_id) == (operation, read, source_id, request_id)


def test_the_account_id_hides_the_key():
    account = account_of("http://x", "sk-SECRET")
    assert "SECRET" not in account and account == account_of("http://x/", "sk-SECRET") != account_of("http://y", "sk-SECRET")


def test_a_create_is_recorded_with_ids_credits_balances_and_latency(connect, box):
    ik = connect()
    result = ik.create("a lighthouse", style=ik.styles()[0], count=2, group_id="g-1")
    ik.me()  # reads are not operations
    [entry] = ik.ledger.entries()
    assert entry.operation == "create" and entry.status == Status.ANSWERED and entry.http_status == 200
    assert entry.group_id == "g-1"
    assert entry.image_ids == [image.id for image in result.images]
    # Without the credit headers the style's creditCost (read by styles()) prices it.
    assert entry.credits == 4 and entry.source == ("priced" if box.spec_exact else "reported")
    assert result.credits_charged == (None if box.spec_exact else 4)
    assert entry.balance == balance(ik) == (result.credits_remaining or entry.balance)
    assert entry.monthly_credit is not None and entry.latency > 0 and entry.style_id == ik.styles()[0].style_id


def test_a_refused_operation_is_recorded_with_its_error(connect):
    ik = connect()
    with pytest.raises(imagekit.ImageNotFoundError):
        ik.image(10**9).remove_bg()
    [entry] = ik.ledger.entries()
    assert (entry.operation, entry.status, entry.http_status) == ("removeBg", Status.FAILED, 404)
    assert (entry.error, entry.source_id) == ("image_not_found", 10**9)
    assert entry.request_id  # the edit's request id, to cancel or trace it


def test_a_refused_call_is_told_apart_from_what_was_charged_in_the_report(connect):
    """A create the service refused (a style it does not know) is no style's spend and no call of the
    tables: the report's first line tells it apart."""
    from imagekit.reports import ledger_report

    ik = connect()
    style = ik.styles()[0]
    ik.create("paid", style=style)
    with pytest.raises(imagekit.StyleNotFoundError):
        ik.create("refused", style=10**6)
    report = ledger_report(ik.ledger)
    assert list(report.by_style.index) == [f"style {style.style_id}"]  # from the ledger alone: by number
    assert report.by_operation.loc["create", "calls"] == 1
    spent = ik.ledger.total()
    assert report.summary() == (f"1 operation recorded, {spent:g} credits spent (1 more refused by the service, "
                                "which charges nothing for them).")


def test_accounts_share_a_file_but_not_their_entries(connect):
    first, second = connect(), connect()
    assert first.ledger.location == second.ledger.location
    first.create("one", style=first.styles()[0])
    assert len(first.ledger.entries()) == 1 and second.ledger.entries() == []
    assert len(first.ledger.for_account("").entries()) == 1  # "" account: every entry in the ledger


def test_the_ledger_can_be_turned_off(box):
    ik = imagekit.Client(box.url, box.api_key, ledger=False)
    assert ik.ledger is None
    ik.close()


def test_to_pandas_has_the_documented_columns(connect, box):
    ik = connect()
    ik.create("a fox", style=ik.styles()[0])
    frame = ik.ledger.to_pandas()
    assert {"time", "operation", "image_ids", "request_id", "credits", "balance", "status", "latency"} <= set(frame.columns)
    assert str(frame["time"].dtype).startswith("datetime64")
    assert frame["style_id"].dtype == "Int64" and frame["source_id"].dtype == "Int64"  # ids stay integers
    assert frame["source"].tolist() == ["priced" if box.spec_exact else "reported"]


def test_manual_entries_round_trip(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite", account="a")
    ledger.record(Entry(operation="refund", status=Status.REFUNDED, image_ids=[3], credits=-2.0))
    assert ledger.total() == -2.0 and ledger.entries()[0].image_ids == [3]


def test_ledger_sums_equal_the_balance_changes(connect, box):
    ik = connect()
    before = balance(ik)
    ik.create("sync", style=ik.styles()[0], count=4)
    control(box, "POST", "faults", {"fail_generation_rate": 0.4, "seed": 3})
    ik.batch([f"p {i}" for i in range(10)], style=ik.styles()[1], count=2).run(progress=False)
    control(box, "DELETE", "faults")
    with pytest.raises(imagekit.ImageNotFoundError):
        ik.image(10**9).enhance("2x")
    refunds = [e for e in ik.ledger.entries() if e.operation == "refund"]
    assert refunds, "the seeded faults failed some generations"
    assert before - balance(ik) == pytest.approx(ik.ledger.total())


PUBLIC_STYLE = 1
"""A public style: the interface shows no price for it (only the caller's own styles have one)."""


def mixed_session(ik, box) -> None:
    """Every kind of operation, with failures: creates (own and public style, a collection, an
    unanswered-price one), a batch with failed images, single edits, a chain with a failing step,
    a cancelled edit, prompts."""
    image = ik.create("a fox", style=ik.styles()[0], count=2).images[0]
    ik.create("a kite", style=PUBLIC_STYLE)
    ik.create("a coast", collection=1)
    control(box, "POST", "faults", {"fail_generation_rate": 0.4, "seed": 5})
    ik.batch([f"p {i}" for i in range(6)], style=PUBLIC_STYLE + 1).run(progress=False)
    control(box, "DELETE", "faults")
    image.upsize(), image.retry()
    chain = imagekit.chain().remove_bg().enhance("2x").vectorize()
    failing = imagekit.chain().remove_bg().outpaint(canvas=(50, 50), size=(40, 40), at=(5, 5))  # refused: too small a canvas
    assert chain.run(image).ok and not failing.run(image).ok
    cut = imagekit.chain().enhance("4x").run(image, deadline=0.001)  # cancelled in flight (or just too late)
    assert cut.lineage["status"].tolist() in (["timeout"], ["uncertain"])
    ik.text_to_prompt("a fox in the snow"), ik.image_to_prompt(image)


def test_a_mixed_session_is_exact_to_the_credit(connect, box):
    from imagekit.reports import usage_report

    ik = connect()
    before = balance(ik)
    mixed_session(ik, box)
    report = usage_report(ik)
    spent = before - balance(ik)
    assert spent > 0 and ik.ledger.total() == pytest.approx(spent, abs=1e-9)
    assert report.by_operation["credits"].sum() == pytest.approx(spent, abs=1e-9)
    assert report.reconciliation["difference"].abs().max() < 1e-9 and "they agree" in str(report)
    charged = [entry for entry in ik.ledger.entries() if entry.credits]
    assert all(entry.source in ("reported", "priced", "reconciled") for entry in charged)
    sources = {entry.source for entry in charged}
    # Nothing needs the credit headers: without them every charge is priced or reconciled.
    assert sources <= {"priced", "reconciled"} and "priced" in sources if box.spec_exact else "reported" in sources


def test_unknown_prices_are_reconciled_from_balances_and_learned(connect, box):
    ik = connect()
    ik.me()  # a balance reading before
    ik.create("a kite", style=PUBLIC_STYLE, count=2)
    [entry] = ik.ledger.entries()
    if box.spec_exact:  # no headers, and no price shown for a public style: the balances tell
        assert entry.credits is None
        ik.ledger.reconcile()
        [entry] = ik.ledger.entries()
        assert entry.source == "reconciled"
    assert entry.credits == 6  # the sandbox's photo style costs 3 an image
    assert ik.ledger.prices()["style:1"] == 3
    # Estimates use the price seen, not the dearest generation price the plan lists (6).
    assert ik.batch(["one", "two"], style=PUBLIC_STYLE).estimate() == 6


def test_the_reconciliation_shows_work_done_elsewhere(connect, box):
    ik = connect()
    ik.me()
    ik.create("mine", style=ik.styles()[0])
    elsewhere = imagekit.Client(box.url, ik.config.api_key, ledger=False)  # e.g. another machine
    elsewhere.create("not recorded here", style=ik.styles()[0], count=2)
    elsewhere.close()
    ik.create("mine again", style=ik.styles()[0])
    ik.usage()
    table = ik.ledger.reconciliation()
    assert list(table.columns) == ["from", "to", "balance_before", "balance_after", "spent_by_balance",
                                   "spent_by_ledger", "unknown", "difference"]
    assert table["spent_by_ledger"].sum() == 4 and table["difference"].sum() == 4  # the other machine's
    assert (table["difference"] != 0).sum() == 1


def test_the_agreement_line_counts_what_no_two_readings_enclose(connect):
    from imagekit.reports import ledger_report

    ik = connect()
    style = ik.styles()[0]
    ik.usage()
    ik.create("between two readings", style=style)
    ik.usage()
    ik.create("since the last reading", style=style, count=2)
    report = ledger_report(ik.ledger)
    spent, checked = ik.ledger.total(), report.reconciliation["spent_by_ledger"].sum()
    assert 0 < checked < spent and report.summary().endswith(f"{spent:g} credits spent.")
    assert report.agreement() == (f"ledger {checked:g} credits, balance change {checked:g} credits, from the first "
                                  f"balance reading to the last: they agree; {spent - checked:g} more credits "
                                  "recorded outside those readings")
    # Two stretches off by as much either way: a charge counted next to its own stretch, not money lost.
    shifted = pd.DataFrame({"spent_by_ledger": [3.0, 5.0], "spent_by_balance": [8.0, 0.0], "difference": [5.0, -5.0]})
    assert dataclasses.replace(report, reconciliation=shifted).agreement().startswith(
        "ledger 8 credits, balance change 8 credits, from the first balance reading to the last: they agree in all; "
        "2 stretches differ by up to 5 credits, which cancel out")


def test_a_cancel_settles_the_edit_whose_answer_was_lost(connect):
    ik = connect()
    image = ik.create("a fox", style=ik.styles()[0]).images[0]
    cut = imagekit.chain().enhance("8x").run(image, deadline=0.001)
    [edit] = [entry for entry in ik.ledger.entries() if entry.operation == "enhance"]
    price = next(c.credit for c in ik.me().plan.credit_cost_info if c.type == "enhance-8x")
    finished = cut.error.cancel_status == "not_running"
    assert edit.status == "no_response" and edit.credits == (price if finished else 0) and edit.source == "priced"


@pytest.mark.slow(8)
@pytest.mark.parametrize("spec_exact", [False, True])
def test_the_embedded_sandbox_keeps_its_history_across_sessions(tmp_path, monkeypatch, spec_exact):
    """Yesterday's session and today's, each with its own port and key, are one account's history."""
    import subprocess
    import sys

    import pandas as pd

    from imagekit import embedded
    from imagekit.cli import main

    home = tmp_path / "home"
    monkeypatch.setenv("IMAGEKIT_HOME", str(home))
    session = (f"import imagekit; ik = imagekit.connect(spec_exact={spec_exact}); "
               "ik.create('session {n}', style=ik.styles()[0], count={n}); print(ik.config.base_url, ik.config.api_key)")
    seen = [subprocess.run([sys.executable, "-c", session.format(n=n)], check=True, capture_output=True, text=True,
                           env={**os.environ, "IMAGEKIT_HOME": str(home)}).stdout for n in (1, 2)]
    assert seen[0] != seen[1]  # another port and another key each session
    monkeypatch.setattr(embedded, "_embedded", {})  # this process's own, in this test's home
    try:
        assert main(["usage", "--out", str(tmp_path / "u")]) == 0
    finally:
        for box in embedded._embedded.values():
            box.stop()
    table = pd.read_csv(tmp_path / "u" / "usage-by-operation.csv", index_col="operation")
    assert table.loc["create", "calls"] == 2 and table.loc["create", "credits"] == 6  # 3 images at 2 credits


def test_reads_of_binaries_are_left_alone(connect, tmp_path, caplog):
    """A streamed binary is never read by the ledger's hook (it would fail, unread)."""
    ik = connect()
    image = ik.create("a fox", style=ik.styles()[0]).images[0]
    with caplog.at_level("WARNING", logger="imagekit"):
        image.save(tmp_path / "fox.png")
    assert (tmp_path / "fox.png").stat().st_size > 0 and not caplog.records
