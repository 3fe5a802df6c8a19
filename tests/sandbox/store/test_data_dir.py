"""Damaged or unusable data folders, a busy port and a folder with no sandbox: each ends in one line
on stderr and exit code 2, and nothing that was there is changed."""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path

import pytest

from imagekit.sandbox import EmbeddedSandbox
from imagekit.sandbox.store.datadir import DataDirError

from ..serving import imagekit


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` by relative path, with a hash of its bytes."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def assert_refused(result, *words: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Serving" not in result.stdout
    for word in words:
        assert word in lines[0], lines[0]


@pytest.fixture(scope="module")
def initialised(tmp_path_factory) -> Path:
    """A folder set up by ``imagekit sandbox init`` (its catalogue thumbnails are images on disk)."""
    folder = tmp_path_factory.mktemp("initialised") / "data"
    imagekit("sandbox", "init", "--data", str(folder))
    return folder


def copy_of(folder: Path, to: Path) -> Path:
    import shutil

    shutil.copytree(folder, to, ignore=shutil.ignore_patterns("serve.lock"))
    return to


def serve_once(folder: Path, *args: str):
    """``serve`` expected to refuse before it serves (so it returns by itself)."""
    return imagekit("sandbox", "serve", "--data", str(folder), "--port", "0", *args, check=False)


def test_an_empty_database_beside_images_is_refused_not_reinitialised(initialised, tmp_path):
    folder = copy_of(initialised, tmp_path / "data")
    (folder / "sandbox.db").write_bytes(b"")
    before = fingerprint(folder)
    assert_refused(serve_once(folder), "sandbox.db", "empty")
    assert fingerprint(folder) == before
    with pytest.raises(DataDirError, match="empty"):
        EmbeddedSandbox(folder).start()
    assert fingerprint(folder) == before


def test_images_without_a_database_are_refused(initialised, tmp_path):
    folder = copy_of(initialised, tmp_path / "data")
    for name in ("sandbox.db", "sandbox.db-wal", "sandbox.db-shm"):
        (folder / name).unlink(missing_ok=True)
    before = fingerprint(folder)
    assert_refused(serve_once(folder), "no sandbox.db")
    assert fingerprint(folder) == before


def test_a_file_that_is_no_database_is_refused(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "sandbox.db").write_bytes(os.urandom(64 * 1024))
    before = fingerprint(folder)
    assert_refused(serve_once(folder), "not a database")
    assert_refused(imagekit("sandbox", "init", "--data", str(folder), check=False), "not a database")
    assert fingerprint(folder) == before


def test_a_damaged_database_is_refused(initialised, tmp_path):
    folder = copy_of(initialised, tmp_path / "data")
    imagekit("sandbox", "init", "--data", str(folder))  # checkpoints the WAL: all pages in sandbox.db
    db = folder / "sandbox.db"
    data = bytearray(db.read_bytes())
    page = 4096
    data[2 * page:len(data) - page] = b"\xa5" * (len(data) - 3 * page)  # keep the header and schema page
    db.write_bytes(bytes(data))
    for name in ("sandbox.db-wal", "sandbox.db-shm"):
        (folder / name).unlink(missing_ok=True)
    before = fingerprint(folder)
    assert_refused(serve_once(folder), "damaged")
    assert fingerprint(folder) == before


def test_a_folder_that_cannot_be_written_is_refused(tmp_path):
    if os.geteuid() == 0:
        folder = Path("/sys/kernel")  # root writes through permissions; sysfs refuses new files to anyone
    else:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(0o555)
    assert_refused(serve_once(folder), str(folder))
    assert_refused(imagekit("sandbox", "init", "--data", str(folder), check=False), str(folder))
    assert not (folder / "sandbox.db").exists()


def test_a_file_in_place_of_the_folder_is_refused(tmp_path):
    path = tmp_path / "data"
    path.write_text("not a folder")
    assert_refused(serve_once(path))
    assert path.read_text() == "not a folder"


def test_user_add_and_token_on_an_uninitialised_folder_leave_nothing_behind(tmp_path):
    missing, empty = tmp_path / "missing", tmp_path / "empty"
    empty.mkdir()
    for folder in (missing, empty):
        for command in (["user", "add", "--email", "q@x.io"], ["token"]):
            assert_refused(imagekit("sandbox", *command, "--data", str(folder), check=False), "sandbox init")
    assert not missing.exists() and list(empty.iterdir()) == []


def test_serve_on_a_busy_port_fails_before_it_claims_to_serve(initialised, tmp_path):
    folder = copy_of(initialised, tmp_path / "data")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = imagekit("sandbox", "serve", "--data", str(folder), "--port", str(port), check=False)
    assert_refused(result, f"127.0.0.1:{port}")
    assert "in use" in result.stderr


def test_a_folder_whose_tables_are_in_postgresql_says_add_db(postgres, tmp_path):
    """Forgetting --db on a PostgreSQL sandbox's folder names the database (never its password) and
    the fix, from every command, instead of sending the user in a circle between init and restore."""
    folder, url = tmp_path / "data", postgres.new_database().replace("postgres@", "postgres:secret@")
    imagekit("sandbox", "init", "--data", str(folder), "--db", url)
    note = (folder / "database.txt").read_text()
    assert note.startswith("postgresql://postgres:***@") and "secret" not in note
    before = fingerprint(folder)
    for result in (serve_once(folder), imagekit("sandbox", "init", "--data", str(folder), check=False),
                   imagekit("sandbox", "user", "add", "--data", str(folder), "--email", "a@b.c", check=False),
                   imagekit("sandbox", "token", "--data", str(folder), check=False)):
        assert_refused(result, "tables are in PostgreSQL", "add --db URL")
    assert fingerprint(folder) == before
