"""Entries hold only what their columns mean: a value that is not (a style's name in ``style_id``) is
stored as null, and a ledger an earlier version poisoned so is read as far as it can be, with a
warning, never a crash."""

from __future__ import annotations

import logging
import sqlite3

import pytest

from imagekit.errors import ImagekitError
from imagekit.ledger import Entry, Ledger, Status
from imagekit.ledger.columns import checked, entry_of
from imagekit.reports import usage_report
from tests.utils.service import public_style


def test_a_value_is_held_to_what_its_column_means():
    entry = Entry(operation="create", status=Status.FAILED, style_id="My Photo", source_id="12",  # type: ignore[arg-type]
                  group_id=7, credits="2", image_ids=["3", "x", 4], tags={"run": 1})  # type: ignore[arg-type,dict-item]
    notes = checked(entry)
    assert (entry.style_id, entry.source_id, entry.group_id, entry.credits) == (None, 12, "7", 2.0)
    assert entry.image_ids == [3, 4] and entry.tags == {"run": "1"}
    assert notes == ["style_id 'My Photo' is not a style id", "image_ids ['3', 'x', 4] is not a list of image ids"]


def test_a_row_an_earlier_version_poisoned_reads_as_far_as_it_can():
    row = ("2025-03-10T12:00:00.000+00:00", "acct", "create", None, "[1, 2]", None, "g", "My Photo", 4.0,
           None, None, None, None, "failed", 400, "InvalidParameter", "nan?", None, "{bad json", "u1", 9)
    entry = entry_of(row)
    assert (entry.style_id, entry.image_ids, entry.latency, entry.tags, entry.seq) == (None, [1, 2], None, {}, 9)
    assert entry.status == Status.FAILED and entry.credits == 4.0
    assert entry.unreadable == ("style_id 'My Photo' is not a style id; latency 'nan?' is not a number; "
                                "tags '{bad json' is not a set of tags")


def poison(path, style_id: object = "My Photo") -> None:
    """Write a refused create with a style's name in ``style_id``, as versions before the fix did."""
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO entries (time, account, operation, image_ids, style_id, status, http_status, error, "
                   "tags, uid) VALUES ('2025-03-10T12:00:00.000+00:00', '', 'create', '[]', ?, 'failed', 400, "
                   "'InvalidParameter', '{}', 'poisoned')", (style_id,))


def test_a_poisoned_ledger_reads_with_a_warning_and_shows_the_row(tmp_path, caplog):
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path)
    ledger.record(Entry(operation="create", status=Status.ANSWERED, style_id=3, credits=2.0, image_ids=[1]))
    ledger.close()
    poison(path)

    frame = Ledger(path).to_pandas(account="")
    assert list(frame["style_id"].astype("object").where(frame["style_id"].notna(), None)) == [3, None]
    assert frame["unreadable"].tolist()[1] == "style_id 'My Photo' is not a style id"
    assert frame["credits"].sum() == 2.0
    warned = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warned) == 1 and "1 entry of the ledger" in warned[0] and "'My Photo'" in warned[0]
    Ledger(path).to_pandas(account="")
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1  # said once, not per read


@pytest.fixture
def ledger_location(either_ledger) -> str:
    return either_ledger


def test_a_style_name_sent_to_the_service_never_poisons_the_ledger(connect, box):
    ik = connect()
    with pytest.raises(ImagekitError):  # refused: by the service, or by the client before sending
        ik.create("a fox", style="No Such Style")  # type: ignore[arg-type]
    with pytest.raises(ImagekitError):  # a name on the wire, whatever the client checks of its options
        ik.create("a fox", extra_body={ik.config.wire.style_id: "No Such Style"})
    ik.create("a fox", style=public_style(box))

    frame = ik.ledger.to_pandas()
    assert frame["operation"].tolist()[-1] == "create" and frame["unreadable"].isna().all()
    assert set(frame["style_id"].dropna()) == {public_style(box)}
    refused = frame[frame["status"] == "failed"]
    assert refused["style_id"].isna().all()  # refused on the wire or before it: never a name in style_id
    report = usage_report(ik)
    assert report.by_operation.loc["create", "calls"] == len(frame) and "could not be read" not in str(report)

