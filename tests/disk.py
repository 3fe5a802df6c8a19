"""A real small file system for the tests of a full disk: a tmpfs (mounting one needs root), filled
with a real file whose removal frees the space again (see the ``small_disk`` fixture)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

from imagekit.sandbox.store.disk import MB


def mount_tmpfs(folder: Path, size: str) -> None:
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"these tests mount a tmpfs, which needs root (CAP_SYS_ADMIN): {done.stderr.strip()}"


def fill(disk: Path, leave: int = 0) -> Path:
    """Take all of the disk's free space but ``leave`` bytes, with a real file (zeros take real pages
    on a tmpfs); returns the file, whose removal frees the space again."""
    filler = disk / "filler"
    room = shutil.disk_usage(disk).free - leave
    with open(filler, "wb", buffering=0) as handle:
        try:
            while room > 0:
                room -= handle.write(bytes(min(room, MB)))
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def leave_free(filler: Path, wanted: int) -> None:
    """Shrink the filler so that ``wanted`` bytes are free."""
    free = shutil.disk_usage(filler.parent).free
    os.truncate(filler, filler.stat().st_size - (wanted - free))


def unmount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], check=True)
