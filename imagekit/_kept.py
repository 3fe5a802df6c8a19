"""``KEPT``: the default of a setting that, when not given, stays as it was set before (a budget set
again keeps its period, alerts and webhook). Its own module, so the client's signatures can name it
without loading the ledger."""

from __future__ import annotations

from typing import Any

__all__ = ["KEPT"]


class _Kept:
    def __repr__(self) -> str:
        return "<as set before>"


KEPT: Any = _Kept()
