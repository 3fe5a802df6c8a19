"""Optional libraries, each behind an extra: imported when the feature that needs it is used, and
when it is missing, one line saying which extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import ConfigError

__all__ = ["require"]


def require(module: str, extra: str, feature: str) -> ModuleType:
    """``module`` imported, or ConfigError: "<feature> needs <package>: pip install 'imagekit[<extra>]'"."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = (exc.name or module).split(".")[0]
        if missing != module.split(".")[0]:
            raise  # the library is there but broken: its own error says more than ours would
        raise ConfigError(f"{feature} needs {missing}: pip install 'imagekit[{extra}]'") from exc
