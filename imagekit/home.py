"""imagekit's own data folder (``IMAGEKIT_HOME``, else ``~/.imagekit``): the ledger, its spool and the
embedded sandbox live there. Low in the toolkit: it imports only the errors."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ConfigError

__all__ = ["ENV_HOME", "home_dir"]

ENV_HOME = "IMAGEKIT_HOME"


def home_dir() -> Path:
    """imagekit's own data directory: ``IMAGEKIT_HOME`` or ``~/.imagekit``. One line (ConfigError) when
    it, or a folder above it, is a file: nothing could be kept there."""
    home = Path(os.environ.get(ENV_HOME) or Path.home() / ".imagekit")
    for folder in (home, *home.parents):
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                named = f"{ENV_HOME}={home}" if os.environ.get(ENV_HOME) else str(home)
                where = "is a file" if folder == home else f"is inside {folder}, a file"
                raise ConfigError(f"{named} {where}: imagekit keeps its sandbox and ledger in a folder; "
                                  f"set {ENV_HOME} to a folder (or one to be made)")
            break
    return home
