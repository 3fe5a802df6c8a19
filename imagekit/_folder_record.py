"""What imagekit knows of a folder it writes, kept where nothing in that folder can forge it: a record
under ``$IMAGEKIT_HOME/owned/`` per folder (keyed by its real path, bound to its device and inode), and
the lock a run holds on the folder while it writes there.

A record holds a token (the folder's manifest must carry the same one to be believed), the writer,
the run, the top-level names it claimed and, per file, its size and SHA-256 once written. A copied
folder has another inode, a planted manifest another token (or none on record): neither is believed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from pathlib import Path
from typing import IO, Any

from .errors import ConfigError
from .home import home_dir
from .storage import Store

__all__ = ["FolderInUseError", "FolderLock", "FolderRecord", "digest"]

RECORDS = "owned"
"""The folder under IMAGEKIT_HOME that holds the records and locks."""


class FolderInUseError(ConfigError):
    """Another run (another process) is writing into this folder now."""


def digest(store: Store, name: str) -> list[Any] | None:
    """``[size, sha256]`` of the file ``name`` in ``store``; None when it is not a readable file."""
    try:
        with store.reader(name) as source:
            return _digest_of(source)
    except (OSError, IsADirectoryError):
        return None


def _digest_of(source: IO[bytes]) -> list[Any]:
    sha, size = hashlib.sha256(), 0
    while block := source.read(1 << 20):
        sha.update(block)
        size += len(block)
    return [size, sha.hexdigest()]


def _records_dir() -> Path:
    """``$IMAGEKIT_HOME/owned``, made when missing; a one-line ConfigError when it cannot be."""
    where = home_dir() / RECORDS
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot keep the record of the folders imagekit writes in {where} "
                          f"({exc.strerror or exc}): set IMAGEKIT_HOME to a folder you can write") from None
    return where


class FolderRecord:
    """The record of one folder (a Store's): read, written whole, forgotten."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.key = store.location if store.remote else os.path.realpath(store.location)
        """The folder as the record names it: its real path, or its URL."""
        self.name = hashlib.sha256(self.key.encode()).hexdigest()[:32]

    def _identity(self) -> tuple[int | None, int | None]:
        """The folder's device and inode (None for an object store's prefix, or a folder not there)."""
        if self.store.remote:
            return None, None
        try:
            found = os.stat(self.key)
        except OSError:
            return None, None
        return found.st_dev, found.st_ino

    def read(self) -> dict[str, Any] | None:
        """The record, when there is one for this very folder (not one of the same path made since)."""
        path = home_dir() / RECORDS / f"{self.name}.json"
        try:
            kept = json.loads(path.read_text())
        except (OSError, ValueError):  # none, or a damaged one: that proves nothing
            return None
        if not isinstance(kept, dict) or kept.get("folder") != self.key or \
                [kept.get("device"), kept.get("inode")] != list(self._identity()):
            return None
        if not isinstance(kept.get("token"), str) or not isinstance(kept.get("files"), dict):
            return None
        return kept

    def write(self, kept: dict[str, Any]) -> None:
        """Write the record whole (beside its name, then renamed into place)."""
        device, inode = self._identity()
        path = _records_dir() / f"{self.name}.json"
        part = path.with_name(f"{path.name}.{os.getpid()}.part")
        part.write_text(json.dumps({**kept, "folder": self.key, "device": device, "inode": inode}))
        os.replace(part, path)

    def forget(self) -> None:
        """Remove the record: the folder is no longer ours."""
        (home_dir() / RECORDS / f"{self.name}.json").unlink(missing_ok=True)

    @staticmethod
    def new_token() -> str:
        """A token for a folder newly ours (its manifest repeats it)."""
        return secrets.token_hex(16)


class FolderLock:
    """An exclusive lock on a folder while a run writes there (``flock`` on a file beside the record;
    the system lets go when the process ends, however it ends)."""

    def __init__(self, record: FolderRecord, location: str) -> None:
        self.record, self.location = record, location
        self._held: IO[bytes] | None = None
        self._path = Path()

    def acquire(self) -> None:
        """Hold the lock, or FolderInUseError in one line naming the process that holds it."""
        if self._held is not None:
            return
        while True:  # the file a run lets go of is removed: lock the one at the path now, or try again
            path = _records_dir() / f"{self.record.name}.lock"
            try:
                held = open(path, "a+b")  # noqa: SIM115  (kept open while the lock is held)
            except FileNotFoundError:  # its folder removed in between: made again above
                continue
            try:
                _lock(held)
            except OSError:
                held.seek(0)
                pid = held.read(20).decode(errors="replace").strip()
                held.close()
                who = f"process {pid}" if pid.isdigit() else "another process"
                raise FolderInUseError(f"{self.location} is being written by another imagekit run ({who}): wait "
                                       "for it to end, or name another folder") from None
            try:
                same = os.stat(path).st_ino == os.fstat(held.fileno()).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            held.close()
        held.seek(0)
        held.truncate()
        held.write(str(os.getpid()).encode())
        held.flush()
        self._held, self._path = held, path

    def release(self) -> None:
        """Let go of the lock and remove its file (and the records' folder, when that leaves it empty)."""
        if self._held is None:
            return
        try:
            self._path.unlink(missing_ok=True)  # before closing: who opens it next finds it gone, and tries again
            with contextlib.suppress(OSError):
                self._path.parent.rmdir()
        finally:
            self._held.close()  # closing the file lets go of its lock
            self._held = None


def _lock(held: IO[bytes]) -> None:
    """Lock ``held`` without waiting; OSError when another process holds it."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        held.seek(0)
        msvcrt.locking(held.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
