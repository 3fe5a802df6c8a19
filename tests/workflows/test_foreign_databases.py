"""A SQLite file that is not imagekit's, or that a newer imagekit made, named as a ledger, a journal or
a review store: refused in one line naming it, before anything is sent, and never written to,
migrated or deleted (before, imagekit added its tables to a browser's history)."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

import imagekit
from imagekit._sqlite import APPLICATION_ID, SCHEMA_VERSION
from imagekit.cli import main
from imagekit.decisions.log import DecisionLog
from imagekit.errors import ConfigError
from imagekit.ledger import Entry, Ledger, Source, Status
from tests.helpers import balance
from tests.ledger.test_store import OLD_ENTRIES
from tests.utils.service import public_style, server_images


def places(path: Path) -> Path:
    """A browser's history as Firefox keeps it: WAL, a schema version of its own, its own tables."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA user_version = 77")
        db.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT, title TEXT)")
        db.execute("CREATE TABLE moz_bookmarks (id INTEGER PRIMARY KEY, fk INTEGER, title TEXT)")
        db.execute("INSERT INTO moz_places (url, title) VALUES ('https://example.org/', 'Example')")
        db.commit()
    return path


def notes(path: Path) -> Path:
    """An app's store with no marks in its header (application_id and user_version 0) and a table
    named like one of imagekit's beside its own."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE rows (key TEXT PRIMARY KEY, status TEXT)")  # a journal's table name
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes (text) VALUES ('buy milk')")
        db.commit()
    return path


def newer_ledger(path: Path) -> Path:
    """imagekit's own ledger, as a later version (one schema ahead) left it."""
    Ledger(path, account="a").record(Entry(operation="create", status=Status.ANSWERED, credits=2.0,
                                           source=Source.PRICED, tags={}))
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    return path


def newer_journal(path: Path, connect: Callable[..., imagekit.Client], style: int) -> Path:
    with connect() as ik:
        ik.batch(["a kite"], style=style).run(journal=path, progress=False)
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    return path


def state(folder: Path) -> dict[str, str]:
    """Every file in ``folder`` by name, with a digest of its bytes (a ``-shm``'s left out: it is the
    index of a WAL an open connection keeps, whose every read may change it)."""
    return {path.name: "" if path.name.endswith("-shm") else hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.iterdir())}


FOREIGN = {"places": (places, "moz_bookmarks, moz_places"), "notes": (notes, "notes")}
"""How each file is made, and the tables a refusal names (a journal's own table, ``rows``, left out)."""


@pytest.mark.parametrize("kind", sorted(FOREIGN))
def test_another_programs_database_is_refused_as_a_ledger_a_journal_and_a_review_store(box, connect, tmp_path, kind,
                                                                                      capsys):
    make, tables = FOREIGN[kind]
    said = f"another program's SQLite database (its tables: {tables}"
    folder = tmp_path / "theirs"
    folder.mkdir()
    path = make(folder / "data.sqlite")
    before = state(folder)
    style = public_style(box)

    with pytest.raises(ConfigError) as as_ledger:
        connect(ledger=str(path))
    assert str(as_ledger.value).startswith(f"{path} is {said}")  # a ledger has no ``rows`` either
    assert str(as_ledger.value).endswith("), not a ledger: name a new file or a ledger imagekit made (nothing was "
                                         "written to it)")

    ik = connect()
    credits = balance(ik)
    with pytest.raises(ConfigError) as as_journal:
        ik.batch(["a lighthouse", "a kite"], style=style).run(journal=path, progress=False)
    assert str(as_journal.value) == (f"{path} is {said}), not a journal: name a new file or a journal imagekit "
                                     "made (nothing was written to it)")
    assert balance(ik) == credits and server_images(box, ik.user_id) == []  # nothing sent

    with pytest.raises(ConfigError, match="not a review store"):
        DecisionLog(str(path))
    for command in (["usage", "--ledger", str(path)], ["sweep", "status", "--journal", str(path), "lighthouses"]):
        with pytest.raises(SystemExit) as refused:
            main(command)
        err = capsys.readouterr().err
        assert refused.value.code == 2 and len(err.strip().splitlines()) == 1 and str(path) in err, err
        assert "nothing was written to it" in err and "Traceback" not in err
    assert state(folder) == before  # not written, not migrated, not deleted, no -wal or -shm left


@pytest.mark.parametrize("what", ["ledger", "journal"])
def test_a_file_a_newer_imagekit_made_is_refused_and_left_as_it_was(box, connect, tmp_path, what):
    folder = tmp_path / "kept"
    folder.mkdir()
    style = public_style(box)
    path = newer_ledger(folder / "ledger.sqlite") if what == "ledger" else newer_journal(
        folder / "journal.sqlite", connect, style)
    before = state(folder)
    newer = (f"{path} was made by a newer imagekit (its tables are of version {SCHEMA_VERSION + 1}; this one knows "
             f"up to {SCHEMA_VERSION}): upgrade imagekit to open it (nothing was written to it)")
    ik = connect()
    credits = balance(ik)
    with pytest.raises(ConfigError) as refused:
        if what == "ledger":
            connect(ledger=str(path))
        else:
            ik.batch(["a lighthouse"], style=style).run(journal=path, progress=False)
    assert str(refused.value) == newer
    assert balance(ik) == credits and server_images(box, ik.user_id) == []
    assert state(folder) == before


def test_a_ledger_named_as_a_journal_is_refused_and_an_unmarked_one_of_ours_is_taken_and_marked(box, connect,
                                                                                               tmp_path):
    """A ledger imagekit made before files were marked is still taken as a ledger (and marked); named
    as a journal it is refused, marked or not: it would have been given a journal's tables."""
    (tmp_path / "old").mkdir()
    path = tmp_path / "old" / "ledger.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.execute(OLD_ENTRIES)
        db.execute("INSERT INTO entries (time, account, operation, image_ids, status) VALUES (?, 'a', 'create', "
                   "'[]', '200')", ("2026-01-01T00:00:00.000+00:00",))
        db.commit()
    before = state(path.parent)
    with connect() as ik, pytest.raises(ConfigError, match=rf"^{path} is another program's SQLite database \(its "
                                                            r"tables: entries\), not a journal"):
        ik.batch(["a kite"], style=public_style(box)).run(journal=path, progress=False)
    assert state(path.parent) == before
    assert len(Ledger(path, account="a").entries(readings=True)) == 1  # taken as a ledger
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    with connect() as ik, pytest.raises(ConfigError, match=r"is imagekit's file of another kind \(its tables: "
                                                            r"accounts, alerts, budgets, \.\.\.\), not a journal"):
        ik.batch(["a kite"], style=public_style(box)).run(journal=path, progress=False)
