"""Where the browser side of the widgets (ES modules and CSS) lives.

A wheel carries the files in ``imagekit/widgets/static/``; a source checkout (or an editable install)
keeps them in the top-level ``widgets/`` folder. Both are plain files: no build step.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

# `from "./name.js"` in a module: a sibling asset, the only kind of import the widgets use.
_SIBLING = re.compile(r"""(\bfrom\s*)(["'])\./([\w.-]+\.js)\2""")

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


def asset_module(name: str) -> str:
    """A widget's module for anywidget: three lines that bind at once and, when a view renders, import
    ``name`` (with its siblings, see ``linked_module``) and ``kernel_link.js``.

    anywidget drops, for good and without a word, every message the kernel sends a model whose module
    is not loaded and bound within 2 seconds of the model's creation (anywidget 0.11). On a busy
    machine a module of many files can take longer (seen with an 8192 px painter beside other work):
    the page then shows the widget, but no mask the kernel sets and no answer to a stroke reaches it.
    This module has nothing to fetch before it binds; ``kernel_link.js`` mends a model that went deaf
    all the same (the page was too busy even for three lines).
    """
    module, link = (base64.b64encode(linked_module(part).encode()).decode() for part in (name, "kernel_link.js"))
    return (f"// imagekit: {name} is imported when a view renders, so that the model binds at once\n"
            f'const MODULE = "data:text/javascript;base64,{module}", LINK = "data:text/javascript;base64,{link}";\n'
            "export default { async render(context) { const [widget, link] = await Promise.all([import(MODULE), "
            "import(LINK)]); const cleanup = await widget.default.render(context); context.el.dataset.kernelLink = "
            "await link.keepHearing(context.model); return cleanup; } };\n")


def linked_module(name: str) -> str:
    """The ES module ``name`` with its sibling imports inlined as ``data:`` URLs.

    anywidget loads a widget's module from a blob URL, where ``./x.js`` cannot resolve; the files stay
    plain ES modules that a browser can also load from the folder as they are.
    """

    def inline(match: re.Match) -> str:
        encoded = base64.b64encode(linked_module(match.group(3)).encode()).decode()
        return f'{match.group(1)}"data:text/javascript;base64,{encoded}"'

    return _SIBLING.sub(inline, asset_text(name))
