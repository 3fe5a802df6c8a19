"""Smoke check of ``pip install 'imagekit-*.whl[EXTRA]'`` with one extra alone: what the extra
promises imports and works, and the core stays without the other extras' packages.

Usage: ``python tests/smoke/extra_only.py EXTRA`` from a venv holding the wheel with that extra.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path


def notebook() -> None:
    from imagekit.ledger import Ledger

    with tempfile.TemporaryDirectory() as folder:
        assert Ledger(Path(folder) / "ledger.sqlite").to_pandas().empty  # reports are DataFrames


def storage() -> None:
    from imagekit.storage import Store

    with tempfile.TemporaryDirectory() as folder:
        store = Store(f"file://{folder}/out")  # a URL: written through fsspec
        store.make()
        with store.writer("a.txt") as out:
            out.write(b"kept")
        assert (Path(folder) / "out" / "a.txt").read_bytes() == b"kept" and store.names() == ["a.txt"]


def parquet() -> None:
    import pyarrow.parquet  # noqa: F401  (export(format="parquet") writes through it)


def postgres() -> None:
    import psycopg  # noqa: F401  (a ledger or journal at a postgresql:// URL)
    import sqlalchemy  # noqa: F401


CHECKS = {"notebook": notebook, "storage": storage, "parquet": parquet, "postgres": postgres}
ABSENT = {"notebook": ("fastapi", "mlflow"), "storage": ("pandas", "fastapi"), "parquet": ("pandas", "fastapi"),
          "postgres": ("pandas", "fastapi", "numpy")}
"""Packages another extra brings, which this one must not."""


def main(extra: str) -> None:
    import imagekit

    for other in ABSENT[extra]:
        assert importlib.util.find_spec(other) is None, f"imagekit[{extra}] pulled in {other}"
    CHECKS[extra]()
    print(f"imagekit[{extra}] install (wheel {imagekit.__version__}): ok")


if __name__ == "__main__":
    main(sys.argv[1])
