"""Bridges to the tools around an experiment: one module per outside tool, each behind an extra.

    from imagekit.integrations.mlflow import log_batch     # pip install 'imagekit[mlflow]'

Nothing here is imported by ``import imagekit``; a module loads its tool when first called, and
says in one line which extra installs it when it is missing. ``require`` is the one place that says
which extra installs an optional package (``EXTRAS``); the command line turns any such package
found missing into the same line (``missing_extra``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from ..errors import ConfigError

__all__ = ["require", "needs_extra", "missing_extra", "progress_bar", "EXTRAS"]

EXTRAS = {
    **dict.fromkeys(("fastapi", "starlette", "uvicorn", "sqlalchemy", "multipart", "python_multipart", "cv2",
                     "vtracer", "resvg_py", "filelock", "alembic"), "sandbox"),
    **dict.fromkeys(("pandas", "matplotlib", "tqdm", "ipywidgets", "anywidget", "traitlets", "numpy"), "notebook"),
    "psycopg": "postgres", "mlflow": "mlflow", "fsspec": "storage", "s3fs": "s3", "pyarrow": "parquet",
    "datasets": "datasets",
}
"""Each optional package (its top-level module) -> the extra that installs it (pyproject.toml)."""


def require(module: str, extra: str | None = None) -> ModuleType:
    """``module`` imported, or ConfigError naming the extra that installs it (default: ``EXTRAS``')."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != module.split(".")[0]:
            raise  # the tool is there but broken: its own error says more
        raise _missing(module, extra or EXTRAS.get(module.split(".")[0], "dev")) from None


@contextmanager
def needs_extra() -> Iterator[None]:
    """Imports of optional packages inside it (``with needs_extra(): import pandas as pd``, typed as
    ever): one missing is ConfigError naming the extra that installs it (``EXTRAS``), not a raw
    ModuleNotFoundError."""
    try:
        yield
    except ModuleNotFoundError as exc:
        raise (missing_extra(exc) or exc) from None


def missing_extra(exc: BaseException) -> ConfigError | None:
    """The one-line ConfigError for an optional package found missing (``exc`` a ModuleNotFoundError
    naming one), else None."""
    name = (getattr(exc, "name", None) or "").split(".")[0] if isinstance(exc, ModuleNotFoundError) else ""
    return _missing(name, EXTRAS[name]) if name in EXTRAS else None


def _missing(module: str, extra: str) -> ConfigError:
    return ConfigError(f"this needs {module}, which is not installed: pip install 'imagekit[{extra}]'")


def progress_bar(progress: bool, **options: Any) -> Any:
    """tqdm's bar (``tqdm.auto``, with ``options``), or without ``progress`` a counter that draws
    nothing and needs no tqdm; either is a context manager with ``n`` and ``update``."""
    if not progress:
        return _Counter()
    tqdm = require("tqdm.auto").tqdm
    from tqdm.notebook import tqdm as notebook_tqdm

    return _NotebookBar(tqdm(display=False, **options)) if issubclass(tqdm, notebook_tqdm) else tqdm(**options)


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
