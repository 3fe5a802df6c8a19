"""Fencing in the journals: a row's writes carry the claim that leased it, and are refused once
another process has claimed it; a done row is never written back; a renewal the database leaves
waiting is an outage, not a hang. Journals on a real PostgreSQL cluster (two of them on one database
are two processes to each other) and a SQLite file."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from imagekit.errors import JournalUnavailableError
from imagekit.workflows.batches.journals.journal import RowLost, RowRecord
from imagekit.workflows.batches.journals.local import LocalJournal
from imagekit.workflows.batches.journals.shared import SharedJournal
from tests.helpers import wait_until

ACCOUNT = "account-1"


def claimed_after_its_lease(url: str, key: str, run: str) -> tuple[SharedJournal, SharedJournal]:
    """The first journal claims ``key``; the second claims it once that lease has run out."""
    first, second = SharedJournal(url, "fenced", lease=0.3), SharedJournal(url, "fenced", lease=30)
    first.register([key])
    assert first.claim([ACCOUNT], "run-1") == key
    wait_until(lambda: second.claim([ACCOUNT], run) == key, timeout=30, what="the lease running out")
    return first, second


def token(url: str, key: str) -> int:
    return lease(url, key)[0]


def lease(url: str, key: str) -> tuple[int, str | None]:
    """A row's fencing token and owner."""
    with psycopg.connect(url) as db:
        return db.execute("SELECT lease_version, owner FROM sweep_rows WHERE key = %s", (key,)).fetchone()


def test_a_write_after_another_claimed_the_row_is_refused_and_writes_nothing(postgres):
    url = postgres.new_database()
    first, second = claimed_after_its_lease(url, "a", "run-2")
    assert token(url, "a") == 2  # one more with each claim
    with pytest.raises(RowLost, match=r"^row a of the sweep .*#fenced is not this process's any more"):
        first.save(RowRecord("a", status="sent", attempts=1))  # the check before a send: nothing goes out
    second.save(RowRecord("a", status="done", attempts=1, credits=2.0))
    first.release("a")  # a stale release leaves the other's lease alone
    assert second.get("a").status == "done" and lease(url, "a") == (2, second.owner)


def test_a_renewal_takes_nothing_back_from_the_process_that_claimed_the_row(postgres):
    url = postgres.new_database()
    first, second = claimed_after_its_lease(url, "a", "run-2")
    first.renew()
    assert lease(url, "a") == (2, second.owner)
    second.save(RowRecord("a", status="sent", attempts=1))
    with pytest.raises(RowLost):
        first.save(RowRecord("a", status="pending"))
    assert second.get("a").status == "sent"


def test_a_done_row_is_never_written_back(postgres, tmp_path):
    shared = SharedJournal(postgres.new_database(), "done", lease=30)
    shared.register(["a"])
    shared.claim([ACCOUNT], "run-1")
    shared.save(RowRecord("a", status="done", credits=2.0))
    with pytest.raises(RowLost):
        shared.save(RowRecord("a", status="sent"))
    local = LocalJournal(tmp_path / "journal.sqlite")
    local.save(RowRecord("a", status="sent"))
    local.save(RowRecord("a", status="done", credits=2.0))
    with pytest.raises(RowLost, match="done already"):
        local.save(RowRecord("a", status="sent"))
    assert shared.get("a").status == local.get("a").status == "done"


def test_a_journal_made_before_fencing_tokens_is_brought_forward(postgres):
    url = postgres.new_database()
    with psycopg.connect(url, autocommit=True) as db:  # the table as the journal made it before
        db.execute("""CREATE TABLE sweep_rows (sweep TEXT NOT NULL, key TEXT NOT NULL, idx INTEGER NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0, group_id TEXT, low_id BIGINT,
            sent_at DOUBLE PRECISION, images TEXT NOT NULL DEFAULT '[]', credits DOUBLE PRECISION, error TEXT,
            latency DOUBLE PRECISION, account TEXT, owner TEXT, lease_until TIMESTAMPTZ, run_id TEXT,
            finished_at TIMESTAMPTZ, PRIMARY KEY (sweep, key))""")
        db.execute("INSERT INTO sweep_rows (sweep, key, idx, status) VALUES ('old', 'a', 0, 'done'),"
                   " ('old', 'b', 1, 'pending')")
    journal = SharedJournal(url, "old")
    assert token(url, "a") == 0
    assert journal.claim([ACCOUNT], "run-1") == "b" and token(url, "b") == 1
    journal.save(RowRecord("b", status="done"))
    assert journal.progress() == {"done": 2}


def test_a_renewal_the_database_leaves_waiting_is_an_outage_not_a_hang(postgres):
    """A transaction holding the sweep's rows (a stuck job, an open session) makes the renewal wait:
    the wait is bounded, so the process stops within its lease instead of working on unrenewed rows."""
    url = postgres.new_database()
    journal = SharedJournal(url, "stalled", lease=3)
    journal.register(["a"])
    journal.claim([ACCOUNT], "run-1")
    with ThreadPoolExecutor(1) as pool, psycopg.connect(url) as blocker:
        blocker.execute("SELECT key FROM sweep_rows FOR UPDATE")
        failed = pool.submit(journal.renew).exception(timeout=120)  # without bounds: until the blocker ends
    assert isinstance(failed, JournalUnavailableError), failed


def test_the_bounds_keep_the_options_the_journals_url_gives(postgres):
    url = postgres.new_database()
    journal = SharedJournal(f"{url}?options=-c%20application_name%3Dsweeper", "named")
    with psycopg.connect(url) as db:
        assert db.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'sweeper'").fetchone()[0] == 1
    journal.close()


def test_a_process_two_hours_fast_takes_no_live_lease_and_is_told_of_its_clock_once(postgres, caplog):
    """Leases run out by the database's clock: a machine whose clock is two hours ahead sees the
    others' rows as leased, and is told once that its clock is off (time-machine moves this process's
    clock; the database's is its own)."""
    from datetime import UTC, datetime, timedelta

    import time_machine

    url = postgres.new_database()
    honest = SharedJournal(url, "fenced", lease=30)
    honest.register(["a"])
    assert honest.claim([ACCOUNT], "run-1") == "a"
    assert not [record for record in caplog.records if "clock" in record.getMessage()]
    with time_machine.travel(datetime.now(UTC) + timedelta(hours=2), tick=True):
        fast = SharedJournal(url, "fenced", lease=30)
        assert fast.claim([ACCOUNT], "run-2") is None  # the honest process's lease is live
        SharedJournal(url, "fenced", lease=30)
    told = [record.getMessage() for record in caplog.records if "clock" in record.getMessage()]
    assert len(told) == 1 and told[0].startswith("imagekit: this machine's clock is 2.0 hours ahead of the clock of "
                                                 "the sweep's journal ("), told
    assert "its leases go by the database's clock" in told[0] and lease(url, "a")[1] == honest.owner
