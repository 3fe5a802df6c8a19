"""Connection settings: base URL, API key (never shown), timeouts, retries and wire names.

The one home of the client's defaults: ``Config``'s fields (and ``RetryPolicy``'s); a client given
no option keeps them. Environment: ``IMAGEKIT_BASE_URL``, ``IMAGEKIT_API_KEY``; ``IMAGEKIT_HOME``
(default ``~/.imagekit``) holds the embedded sandbox's data.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from ._retry import RetryPolicy
from ._urls import shown_url
from .errors import ENV_API_KEY, ENV_BASE_URL, ConfigError
from .wire import DEFAULT_WIRE, Wire

if TYPE_CHECKING:
    import httpx

    from .ledger import Ledger

__all__ = ["ClientOptions", "Config", "PLATFORMS", "VERSION", "service_from_env"]

VERSION = "0.1.0"
PLATFORMS = ("web", "app", "figma", "api")


SANDBOX_SERVICE = "imagekit sandbox"
"""How ``connect()`` names the embedded sandbox's service: this, then its data folder's id."""


@dataclass(frozen=True, repr=False)
class Config:
    """Everything a client needs to reach the service. The API key never appears in its repr."""

    base_url: str
    api_key: str = field(compare=False)
    timeout: float = 60.0
    """Seconds allowed for each HTTP request (connect is capped at 10)."""
    platform: str | None = "api"
    """Value of the platform header on create, edit and prompt calls; None sends none."""
    api_type: str | None = None
    """Value of the API-type header on create ("standard" or "enterprise"); None sends none."""
    retry: RetryPolicy = RetryPolicy()
    wire: Wire = DEFAULT_WIRE
    service: str = ""
    """Which service this is, for people and for tags (MLflow's ``imagekit.service``): by default
    the base URL without user, password, query or fragment; ``connect()`` names the embedded sandbox
    by its data folder's id instead, since its port changes every session."""

    def __post_init__(self) -> None:
        if not self.base_url:
            raise ConfigError(
                f"no base URL: pass base_url= or set {ENV_BASE_URL} "
                "(imagekit.connect() starts a local sandbox instead)"
            )
        if not self.api_key:
            raise ConfigError(f"no API key: pass api_key= or set {ENV_API_KEY}")
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        if not self.service:
            object.__setattr__(self, "service", service_of_url(self.base_url))

    @classmethod
    def from_env(cls, base_url: str | None = None, api_key: str | None = None) -> Config:
        """Default settings for ``base_url`` and ``api_key``, falling back to ``IMAGEKIT_BASE_URL`` /
        ``IMAGEKIT_API_KEY``."""
        base_url, api_key = service_from_env(base_url, api_key)
        return cls(base_url=base_url or "", api_key=api_key or "")

    def updated(self, options: ClientOptions, *, base_url: str | None = None, api_key: str | None = None) -> Config:
        """These settings with what ``options`` (and ``base_url``, ``api_key``) change; the rest kept."""
        retry = options.get("retry_policy", self.retry)
        if "max_retries" in options:
            retry = dataclasses.replace(retry, max_retries=options["max_retries"])
        return dataclasses.replace(
            self,
            base_url=base_url or self.base_url,
            api_key=api_key or self.api_key,
            timeout=options.get("timeout", self.timeout),
            platform=options.get("platform", self.platform),
            api_type=options.get("api_type", self.api_type),
            retry=retry,
            wire=options.get("wire", self.wire),
            service=options.get("service") or (self.service if base_url in (None, self.base_url) else ""),
        )

    def __repr__(self) -> str:
        return (
            f"Config(base_url={shown_url(self.base_url)!r}, api_key='****', timeout={self.timeout}, "
            f"platform={self.platform!r}, api_type={self.api_type!r}, max_retries={self.retry.max_retries})"
        )


class ClientOptions(TypedDict, total=False):
    """What a Client or AsyncClient takes besides ``base_url`` and ``api_key``. An option left out
    keeps ``Config``'s default (or, in ``with_options``, the client's current value)."""

    timeout: float
    """Seconds allowed for each HTTP request (connect is capped at 10)."""
    max_retries: int
    """Extra attempts of a safe retry (applied to ``retry_policy`` when both are given)."""
    retry_policy: RetryPolicy
    """When and how long to wait before a safe retry."""
    platform: str | None
    """Value of the platform header on create, edit and prompt calls; None sends none."""
    api_type: str | None
    """Value of the API-type header on create; None sends none."""
    wire: Wire
    """Names the spec leaves unshown, where the service spells them differently."""
    transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None
    """An httpx transport (proxies, TLS, ``httpx.MockTransport`` in tests)."""
    ledger: Ledger | str | os.PathLike[str] | bool | None
    """The credit ledger: its file (default ``$IMAGEKIT_HOME/ledger.sqlite``), a Ledger, or False."""
    account: str | None
    """The account's name in the ledger (default: from base URL and key)."""
    service: str | None
    """Which service this is, for people and tags (default: the base URL without user, password and query)."""


def service_of_url(base_url: str) -> str:
    """A service's lasting name from its base URL: scheme, host, port and path (a user, password,
    query or fragment in it names no other service)."""
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/") if parts.scheme else base_url


def service_from_env(base_url: str | None, api_key: str | None) -> tuple[str | None, str | None]:
    """``base_url`` and ``api_key``, each falling back to its environment variable."""
    return base_url or os.environ.get(ENV_BASE_URL) or None, api_key or os.environ.get(ENV_API_KEY) or None

