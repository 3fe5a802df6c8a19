"""The credit ledger: every operation recorded with what it cost; its sums match the service."""

from __future__ import annotations

import pytest

import imagekit
from imagekit.ledger import Entry, Ledger, account_of, operation_of

from .conftest import balance, control


@pytest.mark.parametrize(("path", "operation"), [
    ("/api/images/create", "create"), ("/api/images/12/enhance", "enhance"), ("/api/images/3/removeBg", "removeBg"),
    ("/api/images/cancelEdit/abc", "cancelEdit"), ("/api/images/textToPrompt", "textToPrompt"),
    ("/api/users/me", None), ("/api/images/12", None),
])
def test_operation_names(path, operation):
    assert operation_of(path) == operation


def test_the_account_id_hides_the_key():
    account = account_of("http://x", "sk-SECRET")
    assert "SECRET" not in account and account == account_of("http://x/", "sk-SECRET") != account_of("http://y", "sk-SECRET")


def test_a_create_is_recorded_with_ids_credits_balances_and_latency(connect):
    ik = connect()
    result = ik.create("a lighthouse", style=ik.styles()[0], count=2, group_id="g-1")
    ik.me()  # reads are not operations
    [entry] = ik.ledger.entries()
    assert entry.operation == "create" and entry.status == "200" and entry.group_id == "g-1"
    assert entry.image_ids == [image.id for image in result.images]
    assert entry.credits == result.credits_charged == 4 and entry.balance == result.credits_remaining
    assert entry.monthly_credit is not None and entry.latency > 0 and entry.style_id == ik.styles()[0].style_id


def test_a_refused_operation_is_recorded_with_its_error(connect):
    ik = connect()
    with pytest.raises(imagekit.ImageNotFoundError):
        ik.image(10**9).remove_bg()
    [entry] = ik.ledger.entries()
    assert (entry.operation, entry.status, entry.error, entry.source_id) == ("removeBg", "404", "image_not_found", 10**9)
    assert entry.request_id  # the edit's request id, to cancel or trace it


def test_accounts_share_a_file_but_not_their_entries(connect):
    first, second = connect(), connect()
    assert first.ledger.path == second.ledger.path
    first.create("one", style=first.styles()[0])
    assert len(first.ledger.entries()) == 1 and second.ledger.entries() == []
    assert len(Ledger(first.ledger.path).entries()) == 1  # "" account: every entry in the file


def test_the_ledger_can_be_turned_off(box):
    ik = imagekit.Client(box.url, box.api_key, ledger=False)
    assert ik.ledger is None
    ik.close()


def test_to_pandas_has_the_documented_columns(connect):
    ik = connect()
    ik.create("a fox", style=ik.styles()[0])
    frame = ik.ledger.to_pandas()
    assert {"time", "operation", "image_ids", "request_id", "credits", "balance", "status", "latency"} <= set(frame.columns)
    assert str(frame["time"].dtype).startswith("datetime64")


def test_manual_entries_round_trip(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite", account="a")
    ledger.record(Entry(operation="refund", status="FAILED", image_ids=[3], credits=-2.0))
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
