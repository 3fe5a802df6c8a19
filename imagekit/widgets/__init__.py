"""Notebook widgets: PromptStudio (generate), MaskPainter (paint a mask, fill, clean up, outpaint),
OutpaintFramer (frame an outpaint), Gallery.

Loaded on first use, so ``import imagekit`` never pulls in ipywidgets or anywidget::

    from imagekit.widgets import MaskPainter, PromptStudio
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["PromptStudio", "MaskPainter", "OutpaintFramer", "Gallery"]

_HOMES = {"PromptStudio": ".studio", "MaskPainter": ".painter", "OutpaintFramer": ".outpaint", "Gallery": ".gallery"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ..extras import needs_extra

    with needs_extra():  # without ipywidgets or anywidget (imagekit[notebook]): one line naming the extra
        return getattr(importlib.import_module(_HOMES[name], __name__), name)


def __dir__() -> list[str]:
    return sorted(__all__)
