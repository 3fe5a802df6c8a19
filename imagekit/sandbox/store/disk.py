"""Room in the data folder: a full disk is answered by name (507 ``insufficient_storage``), settled
without keeping a credit or leaving a PENDING row, and left behind by itself once space is freed.

The folder keeps a small reserve file. When a write fails for lack of space (an image, a render, the
SQLite database beside them), the reserve is given up first, so the writes that settle the failure
(the image marked FAILED and refunded, the edit refunded, the slot released) have room on a disk that
is full. While the reserve is spent, or too little is free besides it, new work is refused before
anything is charged (``ensure``); the first request that finds room again puts the reserve back.
All of this is read from the folder itself, so the workers of one ``serve`` agree without talking.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..interface.errors import SandboxError

log = logging.getLogger(__name__)

MB = 1024 * 1024
RESERVE = 1 * MB
"""Kept aside for the writes that settle a failed one (a few database pages per operation)."""
HEADROOM = 1 * MB
"""Free space besides the reserve below which new work is refused up front."""
LOW_SPACE = 256 * MB
"""``serve`` warns at start when less than this is free besides the render cache's bound."""
RESERVE_NAME = "space.reserve"
_SQLITE_FULL = 13
_PG_DISK_FULL = "53100"


def is_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` or what it wraps says the disk is full: ENOSPC or EDQUOT from the OS, SQLITE_FULL,
    or PostgreSQL's disk_full."""
    for _ in range(8):  # a driver's error inside SQLAlchemy's inside ours, at most a few deep
        if exc is None:
            return False
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        code = getattr(exc, "sqlite_errorcode", None)
        if (isinstance(code, int) and code & 0xFF == _SQLITE_FULL) or getattr(exc, "sqlstate", None) == _PG_DISK_FULL:
            return True
        exc = getattr(exc, "orig", None) or exc.__cause__
    return False


class DiskSpace:
    """The data folder's free space and its reserve (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.reserve = self.folder / RESERVE_NAME
        self._spent = False
        """This process gave the reserve up (so putting it back is worth a line in the log)."""

    def free(self) -> int:
        return shutil.disk_usage(self.folder).free

    def ensure(self) -> None:
        """Raise 507 unless there is room for new work: the reserve in place (put back when space
        allows) and ``HEADROOM`` free besides it."""
        if not self.reserve.exists() and self.free() >= RESERVE + HEADROOM:
            self._put_back()
        free, kept = self.free(), self.reserve.exists()
        if not kept or free < HEADROOM:
            needed = HEADROOM + (0 if kept else RESERVE)
            raise SandboxError("insufficient_storage", f"The sandbox's data folder is full ({free / MB:.1f} MB free, "
                               f"new work needs {needed / MB:g} MB): nothing was charged. Free some space and try again.")

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Turn a write's failure for lack of space into 507, giving the reserve up first so that the
        failure can be settled (refunded, marked FAILED) on the full disk."""
        try:
            yield
        except Exception as exc:
            if isinstance(exc, SandboxError) or not is_full(exc):  # answered already, or another failure
                raise
            self.give_up()
            raise SandboxError("insufficient_storage", "The sandbox's data folder is full: the result could not be "
                               "stored, and nothing was charged for it. Free some space and try again.") from exc

    def give_up(self) -> None:
        """Free the reserve for the writes that settle a failure; new work waits until it is back."""
        if self.reserve.exists():
            self.reserve.unlink(missing_ok=True)
            log.warning("the data folder %s is full: its %g MB reserve was freed to settle what was running; new "
                        "work is refused (507 insufficient_storage) until space is freed", self.folder, RESERVE / MB)
        self._spent = True

    def shortage(self, wanted: int) -> str | None:
        """A warning when less than ``wanted`` bytes are free, else None."""
        free = self.free()
        if free >= wanted:
            return None
        return (f"only {free / MB:.0f} MB free in {self.folder} (below {wanted / MB:.0f} MB); when it runs out, "
                "creates and edits answer 507 insufficient_storage until space is freed")

    def _put_back(self) -> None:
        try:
            with open(self.reserve, "wb") as handle:
                handle.write(os.urandom(RESERVE))  # random: a compressing filesystem must store every byte
        except OSError:
            self.reserve.unlink(missing_ok=True)  # the room went meanwhile: try again on the next request
            return
        if self._spent:
            self._spent = False
            log.warning("the data folder %s has room again: new work is accepted", self.folder)
