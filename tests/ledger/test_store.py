"""The ledger's storage: entries round-trip with their named statuses and sources, and a ledger file
from before named statuses is brought forward when opened."""

from __future__ import annotations

import sqlite3

from imagekit.ledger import Entry, Ledger, Source, Status

OLD_ENTRIES = """CREATE TABLE entries (seq INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL, account TEXT NOT NULL,
    operation TEXT NOT NULL, source_id INTEGER, image_ids TEXT NOT NULL, request_id TEXT, group_id TEXT,
    style_id INTEGER, credits REAL, balance REAL, daily_credit REAL, monthly_credit REAL, default_credit REAL,
    status TEXT NOT NULL, error TEXT, latency REAL, source TEXT, tags TEXT NOT NULL DEFAULT '{}')"""


def test_an_entry_comes_back_as_it_was_recorded(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct")
    made = ledger.record(Entry(operation="create", status=Status.ANSWERED, http_status=200, image_ids=[4, 5],
                               credits=4.0, source=Source.REPORTED, tags={"experiment": "a"}, style_id=7))
    [back] = Ledger(tmp_path / "ledger.sqlite", account="acct").entries()
    assert back == made and back.seq == made.seq
    assert isinstance(back.status, Status) and isinstance(back.source, Source)


def test_the_dataframe_names_statuses_as_text(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct")
    ledger.record(Entry(operation="removeBg", status=Status.FAILED, http_status=404, tags={}))
    ledger.record(Entry(operation="refund", status=Status.REFUNDED, credits=-2.0, source=Source.PRICED, tags={}))
    frame = ledger.to_pandas()
    assert frame["status"].tolist() == ["failed", "refunded"] and type(frame["status"][0]) is str
    assert frame["http_status"].tolist()[0] == 404 and str(frame["http_status"].dtype) == "Int64"


def test_a_ledger_from_before_named_statuses_is_brought_forward(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(OLD_ENTRIES)
        for operation, status in [("create", "200"), ("removeBg", "404"), ("refund", "FAILED"),
                                  ("enhance", "no_response"), ("create", "recovered"), ("balance", "200")]:
            db.execute("INSERT INTO entries (time, account, operation, image_ids, status) VALUES (?, ?, ?, '[]', ?)",
                       ("2026-01-01T00:00:00.000+00:00", "acct", operation, status))
    entries = Ledger(path, account="acct").entries(readings=True)
    assert [(e.status, e.http_status) for e in entries] == [
        (Status.ANSWERED, 200), (Status.FAILED, 404), (Status.REFUNDED, None), (Status.NO_RESPONSE, None),
        (Status.RECOVERED, None), (Status.ANSWERED, 200)]


def test_an_entry_is_written_once_however_often_it_is_tried(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", account="acct")
    entry = Entry(operation="create", status=Status.ANSWERED, image_ids=[1], credits=2.0, tags={})
    first = ledger.record(entry).seq
    again = ledger.record(Entry(**{**vars(entry), "seq": None})).seq  # a flush tried twice
    assert first == again and len(ledger.entries()) == 1


def test_a_ledger_another_process_is_creating_this_instant_is_not_refused(tmp_path):
    """SQLite makes the file, then writes its header: a second process that looks in between sees an
    empty file made a moment ago, and waits for the header (two workers opening one new ledger at
    once failed with 'not a SQLite database'). An empty file of the user's, older, is refused at once."""
    import os
    import threading
    import time

    import pytest

    from imagekit._sqlite import open_wal
    from imagekit.errors import ConfigError
    from imagekit.ledger.store import TABLES, checked_location

    creating = tmp_path / "ledger.sqlite"
    creating.touch()  # the first process's connect made it; its header comes a moment later
    header = threading.Timer(0.3, lambda: open_wal(str(creating), "a ledger", TABLES).close())
    header.start()
    try:
        assert checked_location(creating) == str(creating)
    finally:
        header.join()
    users = tmp_path / "notes.sqlite"
    users.touch()
    os.utime(users, (time.time() - 3600, time.time() - 3600))
    started = time.monotonic()
    with pytest.raises(ConfigError, match="is not a SQLite database"):
        checked_location(users)
    assert time.monotonic() - started < 1


def test_what_a_process_writes_after_naming_its_open_ledger_again_reaches_the_others(tmp_path):
    """Naming a ledger file checks it is a SQLite database. That check read the file's header with a
    descriptor of its own, whose closing dropped every POSIX lock of this process on the file: the
    next process to close the ledger took itself for the last, checkpointed and deleted the WAL, and
    what this process wrote after went into a deleted file (lost; its own reads still saw it)."""
    import subprocess
    import sys

    path = tmp_path / "ledger.sqlite"

    def seen_elsewhere() -> int:
        count = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM entries').fetchone()[0])"
        return int(subprocess.run([sys.executable, "-c", count, str(path)], capture_output=True, text=True,
                                  check=True, timeout=60).stdout)

    def record(ledger: Ledger) -> None:
        ledger.record(Entry(operation="create", status=Status.ANSWERED, credits=1.0, source=Source.PRICED, tags={}))

    record(Ledger(path, account="a"))
    assert seen_elsewhere() == 1
    record(Ledger(path, account="a"))  # the same file named again, as each connect(ledger=...) does
    assert seen_elsewhere() == 2
    record(Ledger(path, account="a"))
    assert seen_elsewhere() == 3 and len(Ledger(path, account="a").entries()) == 3
