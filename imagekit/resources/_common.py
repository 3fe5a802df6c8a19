"""What every resource namespace shares: its client, the request headers, response decoding.

Sync namespaces hang off ``Client`` and async ones off ``AsyncClient``, each typed on its own (as
openai-python's resource bases are), so a sync call is typed ``T`` and an async one ``Awaitable[T]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from .._http import AsyncHTTP, Response, SyncHTTP
from ..config import Config
from ..errors import ValidationError
from ..validation import PLATFORMS

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..client import AsyncClient, Client

M = TypeVar("M", bound="BaseModel")


class Namespace:
    """A group of endpoints bound to one blocking client."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self._http: SyncHTTP = client._http
        self._config: Config = client.config


class AsyncNamespace:
    """A group of endpoints bound to one async client."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client
        self._http: AsyncHTTP = client._http
        self._config: Config = client.config


def platform_headers(config: Config, platform: str | None = None) -> dict[str, str]:
    """The platform header, when the call or the client sets one."""
    value = platform or config.platform
    if value and value not in PLATFORMS:
        raise ValidationError(f"platform = {value!r}: one of {', '.join(PLATFORMS)}", field="platform", value=value)
    return {config.wire.platform_header: value} if value else {}


def parse(model: type[M], response: Response) -> M:
    """Validate a JSON response body into ``model``."""
    return model.model_validate_json(response.content)


def compact(body: dict[str, Any]) -> dict[str, Any]:
    """The body without the fields left at None (the service reads absent and null differently)."""
    return {key: value for key, value in body.items() if value is not None}
