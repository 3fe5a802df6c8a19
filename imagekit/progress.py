"""Progress bars: tqdm's (in a notebook, one that leaves a line of text behind), or a silent counter.

Loads tqdm only when a bar is drawn (``imagekit[notebook]``).
"""

from __future__ import annotations

import sys
from typing import Any

from .extras import require

__all__ = ["progress_bar"]


def progress_bar(progress: bool, **options: Any) -> Any:
    """tqdm's bar (``tqdm.auto``, with ``options``), or without ``progress`` a counter that draws
    nothing and needs no tqdm; either is a context manager with ``n`` and ``update``."""
    if not progress:
        return _Counter()
    tqdm = require("tqdm.auto").tqdm
    # tqdm.auto loads tqdm.notebook (and ipywidgets) only in a notebook's kernel: a terminal's bar
    # never does, and a command does not pay for importing ipywidgets.
    notebook = sys.modules.get("tqdm.notebook")
    if notebook is not None and issubclass(tqdm, notebook.tqdm):
        return _NotebookBar(tqdm(display=False, **options))
    return tqdm(**options)


class _NotebookBar:
    """tqdm's notebook bar, whose last state is printed as a line of text when it closes. A saved
    notebook shows that line: GitHub, nbviewer and nbconvert draw no widget, only the text a widget
    carried when it was shown, which for a bar was "0%" and read as a run that never started; so
    the bar carries no text of its own, and is hidden once its line is printed."""

    def __init__(self, bar: Any) -> None:
        self._bar = bar
        view = dict(bar.container._repr_mimebundle_())
        view["text/plain"] = ""
        require("IPython.display").display(view, raw=True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._bar, name)

    def update(self, n: float = 1) -> Any:
        return self._bar.update(n)

    def close(self) -> None:
        if self._bar.disable:  # closed already
            return
        self._bar.close()
        self._bar.container.layout.display = "none"
        print(self._bar)

    def __enter__(self) -> _NotebookBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Counter:
    n: float = 0

    def update(self, n: float = 1) -> None:
        self.n += n

    def __enter__(self) -> _Counter:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
