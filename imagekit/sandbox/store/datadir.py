"""Checks of a data folder before and while it is opened: damage is refused, never repaired over.

A folder is either new (no ``sandbox.db``, no images) or it holds a sandbox. A zero-length or
missing database beside existing images, a file that is not a database, a database that fails
SQLite's ``quick_check``, or a folder the process may not write each raise :class:`DataDirError`
with a one-line reason, before anything in the folder is changed.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

DB_NAME = "sandbox.db"
DATABASE_NOTE = "database.txt"
IMAGES = "images"


class DataDirError(RuntimeError):
    """A data folder the sandbox cannot use as it is; the message says why, in one line."""


class DataDirInUse(DataDirError):
    """Another live process serves this data folder."""


def database_file(data_dir: Path, database_url: str | None) -> Path | None:
    """The SQLite file the sandbox uses by default, or None for any other database URL."""
    return Path(data_dir) / DB_NAME if database_url is None else None


def check_before_open(data_dir: Path, database_url: str | None) -> None:
    """Refuse a folder whose database is gone or empty while its images remain (re-creating the
    database would hand out the same image ids again and overwrite those files)."""
    data_dir = Path(data_dir)
    if data_dir.exists() and not data_dir.is_dir():
        raise DataDirError(f"{data_dir} is not a folder")
    db = database_file(data_dir, database_url)
    if db is None:
        return
    elsewhere = database_note(data_dir)
    if elsewhere and not db.exists():
        raise DataDirError(f"{data_dir}'s tables are in PostgreSQL ({elsewhere}): add --db URL")
    if db.exists() and not db.is_file():
        raise DataDirError(f"{db} is not a file")
    if db.exists() and db.stat().st_size == 0:
        raise DataDirError(f"{db} is empty (0 bytes): its data is lost; restore it from a copy or use another folder")
    if not db.exists() and holds_images(data_dir):
        raise DataDirError(f"{data_dir} holds images but no {DB_NAME}; restore the database or use another folder")


def note_database(data_dir: Path, database_url: str) -> None:
    """Record in the folder which database holds its tables (password hidden), so that opening the
    folder without it says where they are instead of making an empty SQLite sandbox beside them."""
    from sqlalchemy.engine import make_url

    shown = make_url(database_url).render_as_string(hide_password=True)
    note = Path(data_dir) / DATABASE_NOTE
    if database_note(data_dir) != shown:
        note.write_text(shown + "\n")


def database_note(data_dir: Path) -> str | None:
    """The database a folder's tables are in, as ``note_database`` recorded it (None: SQLite here)."""
    try:
        return (Path(data_dir) / DATABASE_NOTE).read_text().strip() or None
    except OSError:
        return None


def holds_images(data_dir: Path) -> bool:
    """Whether the folder's image directory has files (a database made now would reuse their ids)."""
    images = Path(data_dir) / IMAGES
    return images.is_dir() and any(path.is_file() for path in images.iterdir())


def reason(exc: BaseException) -> str:
    """The first line of what went wrong (SQLAlchemy wraps the driver's message in several lines)."""
    inner = getattr(exc, "orig", None) or exc
    text = str(inner).strip().splitlines()
    return text[0] if text else type(inner).__name__


def is_new(data_dir: Path, database_url: str | None) -> bool:
    """True when the folder has no sandbox database yet (opening it would create one)."""
    db = database_file(data_dir, database_url)
    return db is not None and not db.exists()


def kept_identity(data_dir: Path) -> str | None:
    """The folder's lasting id (``sandbox_state``'s ``identity``) read from its SQLite database without
    opening the sandbox or changing a byte of the folder (an immutable read: what a running sandbox
    has not yet checkpointed is not seen); None for a new folder, or one whose tables are elsewhere."""
    db = database_file(data_dir, None)
    if db is None or not db.is_file():
        return None
    try:
        with closing(sqlite3.connect(f"{db.resolve().as_uri()}?immutable=1", uri=True)) as connection:
            row = connection.execute("SELECT value FROM sandbox_state WHERE key = 'identity'").fetchone()
    except sqlite3.Error:  # not a sandbox's database, or one being written: nothing to tell
        return None
    return row[0] if row and isinstance(row[0], str) else None
