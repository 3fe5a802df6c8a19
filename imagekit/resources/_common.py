"""What every resource namespace shares: its client, the request headers, response decoding."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from .._http import Response
from ..config import Config

if TYPE_CHECKING:
    from ..client import AsyncClient, Client

M = TypeVar("M")


class Namespace:
    """A group of endpoints bound to one client."""

    def __init__(self, client: Client | AsyncClient) -> None:
        self._client = client
        self._http = client._http
        self._config: Config = client._config


def platform_headers(config: Config, platform: str | None = None) -> dict[str, str]:
    """The platform header, when the call or the client sets one."""
    value = platform or config.platform
    return {config.wire.platform_header: value} if value else {}


def parse(model: type[M], response: Response) -> M:
    """Validate a JSON response body into ``model``."""
    return model.model_validate_json(response.content)  # type: ignore[attr-defined]


def compact(body: dict[str, Any]) -> dict[str, Any]:
    """The body without the fields left at None (the service reads absent and null differently)."""
    return {key: value for key, value in body.items() if value is not None}
