"""The render cache: image binaries other than the stored files (scaled, watermarked, re-encoded),
kept in ``images/cache/`` as ``<id>-<variant>`` up to a size, least recently used out first.

Several processes may share the folder (``serve --workers N``), so all the cache knows is on disk: a
variant's size is its file's, and its modification time is when it was last used (set on every hit).
A variant is written whole (a temporary file renamed into place) and opened before it is streamed:
eviction, in any process, removes names only, and on POSIX an open file stays readable to its end
after its name is gone (Windows refuses to remove an open file; eviction passes it by until later).
Temporary files of writes in progress are never evicted.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import BinaryIO

from ..interface.errors import SandboxError
from .disk import DiskSpace
from .files import write_atomically

_TEMPORARY = ".tmp-"


class RenderCache:
    """Rendered variants in one folder, at most ``limit`` bytes of them."""

    def __init__(self, folder: Path, limit: int, disk: DiskSpace) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.limit = limit
        self._disk = disk
        self._lock = threading.Lock()
        self._last_use = 0

    def open(self, name: str) -> BinaryIO | None:
        """The variant ``name``, opened and marked as just used; None when it is not kept."""
        try:
            handle = open(self.folder / name, "rb")
        except FileNotFoundError:
            return None
        self._touch(name)
        return handle

    def put(self, name: str, data: bytes) -> BinaryIO | None:
        """Keep ``data`` as the variant ``name`` and open it, evicting the least recently used to make
        room; None when it is not kept (larger than the whole cache, or no room on the disk: the
        caller streams ``data`` itself)."""
        if len(data) > self.limit:
            return None
        self.evict(room=len(data))
        try:
            self._disk.ensure()
            with self._disk.writing():
                write_atomically(self.folder / name, data)
        except SandboxError:  # a full disk: the answer needs no cache
            return None
        return self.open(name)  # None if another worker evicted it already

    def evict(self, room: int = 0) -> int:
        """Remove least recently used variants until they and ``room`` more bytes fit the limit;
        returns how many were removed."""
        with self._lock:
            variants = sorted(self._variants(), key=lambda v: (v[1].st_mtime_ns, v[0].name))
            total = sum(stat.st_size for _, stat in variants)
            removed = 0
            for path, stat in variants:
                if total + room <= self.limit:
                    break
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass  # another worker evicted it
                except OSError:
                    continue  # open in another process, on a system that refuses to remove open files
                total -= stat.st_size
                removed += 1
            return removed

    def size(self) -> int:
        """Bytes the kept variants hold."""
        return sum(stat.st_size for _, stat in self._variants())

    def sweep(self, images: set[str]) -> int:
        """Remove variants of images that no longer exist, and leftovers of interrupted writes (run
        at start, before anything writes here); returns how many."""
        stray = [path for path in self.folder.iterdir() if path.name.split("-")[0] not in images]
        for path in stray:
            path.unlink(missing_ok=True)
        return len(stray)

    def _variants(self) -> list[tuple[Path, os.stat_result]]:
        found = []
        for entry in os.scandir(self.folder):
            if entry.name.startswith(_TEMPORARY):
                continue
            try:
                found.append((Path(entry.path), entry.stat()))
            except FileNotFoundError:
                continue  # evicted while listed
        return found

    def _touch(self, name: str) -> None:
        # Set explicitly, not left to the file system: its clock ticks coarsely, and two uses in one
        # tick must still be told apart.
        with self._lock:
            self._last_use = max(time.time_ns(), self._last_use + 1)
            now = self._last_use
        try:
            os.utime(self.folder / name, ns=(now, now))
        except FileNotFoundError:
            pass  # evicted since it was opened: the open file still reads whole
