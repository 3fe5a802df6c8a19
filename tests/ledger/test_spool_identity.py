"""Nothing waits where nobody will find it: a process that ends while its shared ledger cannot be
reached tries for a while, then says in one line how many entries wait and where; ``imagekit ledger
flush`` writes them; the spool is the database's, however its URL is spelled, and one an earlier
version named by the URL's spelling is brought in. On a PostgreSQL cluster of this module's own."""

from __future__ import annotations

import hashlib
import logging
import subprocess
import sys
import time

import pytest

from imagekit.ledger import Entry, Ledger, Status, outage
from imagekit.ledger.columns import row_of
from imagekit.ledger.spool import Spool, identity
from tests.helpers import ROOT, run_console
from tests.ledger.test_ledger_outage import cluster, creates_in, ledger_url  # noqa: F401 (fixtures)

pytestmark = pytest.mark.postgres


def test_a_database_has_one_identity_however_its_url_is_spelled():
    one = identity("postgresql://postgres@127.0.0.1:5433/team")
    assert one == identity("postgresql://postgres:secret@localhost:5433/team")
    assert one == identity("postgres://postgres@[::1]:5433/team?sslmode=disable&connect_timeout=3")
    assert one == identity("postgresql+psycopg://localhost:5433/team?user=postgres")
    assert "secret" not in identity("postgresql://postgres:secret@localhost:5433/team")
    others = ["postgresql://postgres@127.0.0.1:5434/team", "postgresql://postgres@127.0.0.1:5433/other",
              "postgresql://alice@127.0.0.1:5433/team", "postgresql://postgres@db.example.com:5433/team"]
    assert len({one, *(identity(url) for url in others)}) == 5
    assert identity("postgresql://u@localhost/db") == identity("postgresql://u@localhost:5432/db")


def spelled_otherwise(url: str) -> str:
    """The same database's URL with ``localhost`` for ``127.0.0.1``."""
    assert "@127.0.0.1:" in url
    return url.replace("@127.0.0.1:", "@localhost:")


ENDS_WITHOUT_CLOSING = """
import sys
from imagekit.ledger import Entry, Ledger, Status
ledger = Ledger(sys.argv[1], account="a")
for n in range(3):
    ledger.record(Entry(operation="create", status=Status.ANSWERED, image_ids=[n], credits=2.0))
"""


def test_entries_left_at_exit_are_said_found_by_another_spelling_and_flushed(cluster, ledger_url, tmp_path):  # noqa: F811
    env = {"IMAGEKIT_HOME": str(tmp_path / "home")}
    Ledger(ledger_url).close()  # the tables exist: only the outage is left to meet
    cluster.halt()
    try:
        started = time.monotonic()
        ended = subprocess.run([sys.executable, "-c", ENDS_WITHOUT_CLOSING, ledger_url], capture_output=True,
                               text=True, timeout=60, env={**env, "PYTHONPATH": str(ROOT)})
        assert ended.returncode == 0 and time.monotonic() - started >= outage.CLOSE_SECONDS  # it tried first
        began, said = ended.stderr.strip().splitlines()  # a line when the outage began, one at the end
        assert "cannot be reached" in began and said.startswith("3 ledger entries wait in ") and str(tmp_path / "home" / "spool") in said
        assert "`imagekit ledger flush --ledger URL`, with the ledger's URL as you gave it, writes them" in said

        report = run_console("usage", "--by", "experiment", "--ledger", spelled_otherwise(ledger_url),
                             cwd=tmp_path, env=env)
        assert report.returncode == 1 and "Traceback" not in report.stderr
        assert "3 ledger entries of this machine wait in" in report.stderr and len(report.stderr.splitlines()) == 1
    finally:
        cluster.resume()

    flushed = run_console("ledger", "flush", "--ledger", spelled_otherwise(ledger_url), cwd=tmp_path, env=env)
    assert flushed.returncode == 0, flushed.stderr
    assert flushed.stdout.startswith("Wrote 3 entries that waited in ") and creates_in(ledger_url) == 3
    again = run_console("ledger", "flush", "--ledger", ledger_url, cwd=tmp_path, env=env)
    assert again.stdout.startswith("Nothing waits on this machine") and creates_in(ledger_url) == 3


def test_closing_tries_for_a_bounded_time_then_says_what_waits(cluster, ledger_url, monkeypatch, caplog):  # noqa: F811
    monkeypatch.setattr(outage, "CLOSE_SECONDS", 1.0)
    ledger = Ledger(ledger_url, account="a")
    ledger.close()
    cluster.halt()
    try:
        for n in range(2):
            ledger.record(Entry(operation="create", status=Status.ANSWERED, image_ids=[n], credits=2.0))
        caplog.set_level(logging.WARNING, logger="imagekit")
        started = time.monotonic()
        ledger.close()
        assert 1.0 <= time.monotonic() - started < 5
        said = [record.getMessage() for record in caplog.records if "ledger entries wait in" in record.getMessage()]
        assert len(said) == 1 and said[0].startswith(f"2 ledger entries wait in {ledger.spool} for the ledger at")
    finally:
        cluster.resume()
    assert ledger.flush() == 2 and ledger.waiting() == 0 and creates_in(ledger_url) == 2


def test_a_spool_an_earlier_version_named_by_the_url_is_brought_in(ledger_url, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("IMAGEKIT_HOME", str(tmp_path / "home"))
    old = tmp_path / "home" / "spool" / f"ledger-{hashlib.sha256(ledger_url.encode()).hexdigest()[:16]}.sqlite"
    entry = Entry(operation="create", status=Status.ANSWERED, image_ids=[7], credits=2.0, account="a")
    Spool(old).put("entry", "a", {**row_of(entry), "hold": None}, entry.uid)

    ledger = Ledger(ledger_url, account="a")  # the spelling the old spool was named by
    assert not old.exists() and ledger.spool != old
    assert Ledger(spelled_otherwise(ledger_url)).spool == ledger.spool
    [written] = ledger.entries()
    assert written.uid == entry.uid and written.image_ids == [7] and ledger.waiting() == 0


def test_the_flush_command_said_is_one_that_finds_the_entries(monkeypatch):
    """The URL shown has no user (secrets are never printed), and without its user it names another
    spool: `imagekit ledger flush --ledger <shown URL>` said "Nothing waits" (a walk found it). The
    command said is plain when IMAGEKIT_LEDGER_URL names the ledger, however spelled."""
    from imagekit.ledger.outage import flush_command

    url = "postgresql://postgres:secret@127.0.0.1:55432/credits"
    monkeypatch.setenv("IMAGEKIT_LEDGER_URL", "postgresql://postgres:secret@localhost:55432/credits")
    assert flush_command(url) == "`imagekit ledger flush` (IMAGEKIT_LEDGER_URL names that ledger)"
    monkeypatch.setenv("IMAGEKIT_LEDGER_URL", "postgresql://postgres@127.0.0.1:55432/other")
    assert flush_command(url) == "`imagekit ledger flush --ledger URL`, with the ledger's URL as you gave it,"
    monkeypatch.delenv("IMAGEKIT_LEDGER_URL")
    assert "secret" not in flush_command(url) and "postgres@" not in flush_command(url)
