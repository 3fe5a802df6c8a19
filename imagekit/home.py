"""imagekit's own data folder (``IMAGEKIT_HOME``, else ``~/.imagekit``): the ledger, its spool and the
embedded sandbox live there. Low in the toolkit: it imports nothing of imagekit's."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ENV_HOME", "home_dir"]

ENV_HOME = "IMAGEKIT_HOME"


def home_dir() -> Path:
    """imagekit's own data directory: ``IMAGEKIT_HOME`` or ``~/.imagekit``."""
    return Path(os.environ.get(ENV_HOME) or Path.home() / ".imagekit")
