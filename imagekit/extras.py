"""Which extra installs each optional package, and the one line that says so when one is missing.

``require`` imports an optional package or raises ConfigError naming the extra (``EXTRAS``); the
command line turns any such package found missing into the same line (``missing_extra``). The
lowest of the toolkit's modules: it imports only the errors, so every layer may use it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

from .errors import ConfigError

__all__ = ["require", "needs_extra", "missing_extra", "EXTRAS"]

EXTRAS = {
    **dict.fromkeys(("fastapi", "starlette", "uvicorn", "sqlalchemy", "multipart", "python_multipart", "cv2",
                     "vtracer", "resvg_py", "filelock", "alembic"), "sandbox"),
    **dict.fromkeys(("pandas", "matplotlib", "tqdm", "ipywidgets", "anywidget", "traitlets", "numpy"), "notebook"),
    "psycopg": "postgres", "mlflow": "mlflow", "fsspec": "storage", "s3fs": "s3", "pyarrow": "parquet",
    "datasets": "datasets", "distributed": "dask", "dask": "dask", "ray": "ray",
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
