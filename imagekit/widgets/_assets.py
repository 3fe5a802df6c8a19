"""Where the browser side of the widgets (ES modules and CSS) lives.

A wheel carries the files in ``imagekit/widgets/static/``; a source checkout (or an editable install)
keeps them in the top-level ``widgets/`` folder. Both are plain files: no build step.
"""

from __future__ import annotations

from pathlib import Path

_PLACES = (
    Path(__file__).parent / "static",  # installed wheel
    Path(__file__).parents[2] / "widgets",  # source checkout
)


def asset_path(name: str) -> Path:
    """The path of the browser asset ``name`` (for example ``mask_painter.js``)."""
    for place in _PLACES:
        if (place / name).is_file():
            return place / name
    raise FileNotFoundError(
        f"widget asset {name!r} is missing (looked in {', '.join(map(str, _PLACES))}); reinstall imagekit"
    )


def asset_text(name: str) -> str:
    """The contents of the browser asset ``name``."""
    return asset_path(name).read_text(encoding="utf-8")
