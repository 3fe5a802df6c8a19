"""Bridges to the tools around an experiment: one module per outside tool, each behind an extra.

    from imagekit.integrations.mlflow import log_batch     # pip install 'imagekit[mlflow]'

Nothing here is imported by ``import imagekit``; a module loads its tool when first called, and
says in one line which extra installs it when it is missing. ``require`` is the one place that says
which extra installs an optional package (``EXTRAS``); the command line turns any such package
found missing into the same line (``missing_extra``).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ..errors import ConfigError

__all__ = ["require", "missing_extra", "progress_bar", "EXTRAS"]

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
    return require("tqdm.auto").tqdm(**options) if progress else _Counter()


class _Counter:
    n: float = 0

    def update(self, n: float = 1) -> None:
        self.n += n

    def __enter__(self) -> _Counter:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
