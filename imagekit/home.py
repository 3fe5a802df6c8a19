"""imagekit's own data folder (``IMAGEKIT_HOME``, else ``~/.imagekit``): the ledger, its spool and the
embedded sandbox live there. Low in the toolkit: it imports only the errors."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ConfigError

__all__ = ["ENV_HOME", "home_dir"]

ENV_HOME = "IMAGEKIT_HOME"


def home_dir(keeping: str | None = None) -> Path:
    """imagekit's own data directory: ``IMAGEKIT_HOME`` or ``~/.imagekit``. One line (ConfigError) when
    it, or a folder above it, is a file: nothing could be kept there; or, when it is to keep
    something (``keeping``: what, e.g. "its ledger"), when it cannot be written (a read-only mount, a
    folder of another user's): before anything is sent that it would have recorded."""
    home = Path(os.environ.get(ENV_HOME) or Path.home() / ".imagekit")
    named = f"{ENV_HOME}={home}" if os.environ.get(ENV_HOME) else str(home)
    for folder in (home, *home.parents):
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                where = "is a file" if folder == home else f"is inside {folder}, a file"
                raise ConfigError(f"{named} {where}: imagekit keeps its sandbox and ledger in a folder; "
                                  f"set {ENV_HOME} to a folder (or one to be made)")
            if keeping is not None and not os.access(folder, os.W_OK | os.X_OK):
                where = "" if folder == home else f" (inside {folder})"
                raise ConfigError(f"{named} cannot be written{where}: {_why_not(folder)}; imagekit keeps {keeping} "
                                  f"there: set {ENV_HOME} to a folder you can write")
            break
    return home


def _why_not(folder: Path) -> str:
    """Why ``folder`` cannot be written, in words."""
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "it is on a read-only file system"
    except OSError:
        pass
    return "no permission to write there"
