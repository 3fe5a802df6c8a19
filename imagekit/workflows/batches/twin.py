"""The AsyncClient a batch works through: the caller's client's twin, whose retries leave a refused
create to the batch (which narrows its window and queues the row again)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..._retry import REFUSED_STATUSES, RetryPolicy

if TYPE_CHECKING:
    from ...client import AsyncClient, Client

__all__ = ["async_twin"]


@dataclass(frozen=True, slots=True)
class _RefusalsToCaller(RetryPolicy):
    """The caller's policy, except that a refused write comes straight back: the batch narrows its
    window and queues the row again, where a retry in place would hold the create lock."""

    def decide(self, method: str, outcome: Any, attempt: int, **kwargs: Any) -> float | None:
        if method != "GET" and outcome in REFUSED_STATUSES:
            return None
        return RetryPolicy.decide(self, method, outcome, attempt, **kwargs)


def async_twin(client: Client | AsyncClient) -> AsyncClient:
    """An AsyncClient for the same service, key, settings, transport and ledger as ``client``."""
    retry = client.config.retry
    return client.to_async(retry_policy=_RefusalsToCaller(**{f.name: getattr(retry, f.name) for f in fields(RetryPolicy)}))
