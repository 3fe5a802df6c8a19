"""Bridges to the tools around an experiment: one module per outside tool, each behind an extra.

    from imagekit.integrations.mlflow import log_batch     # pip install 'imagekit[mlflow]'

Nothing here is imported by ``import imagekit``; a module loads its tool when first called, and
says in one line which extra installs it when it is missing.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import ConfigError

__all__ = ["require"]


def require(module: str, extra: str) -> ModuleType:
    """``module`` imported, or ConfigError naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != module.split(".")[0]:
            raise  # the tool is there but broken: its own error says more
        raise ConfigError(f"this needs {module}, which is not installed: pip install 'imagekit[{extra}]'") from None
