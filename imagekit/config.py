"""Connection settings: base URL, API key (never shown), timeouts, retries and wire names.

Environment: ``IMAGEKIT_BASE_URL``, ``IMAGEKIT_API_KEY``; ``IMAGEKIT_HOME`` (default ``~/.imagekit``)
holds the embedded sandbox's data.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ._retry import RetryPolicy
from .errors import ENV_API_KEY, ENV_BASE_URL, ConfigError
from .wire import DEFAULT_WIRE, Wire

__all__ = ["Config", "PLATFORMS", "VERSION", "home_dir"]

VERSION = "0.1.0"
PLATFORMS = ("web", "app", "figma", "api")
ENV_HOME = "IMAGEKIT_HOME"


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

    def __post_init__(self) -> None:
        if not self.base_url:
            raise ConfigError(
                f"no base URL: pass base_url= or set {ENV_BASE_URL} "
                "(imagekit.connect() starts a local sandbox instead)"
            )
        if not self.api_key:
            raise ConfigError(f"no API key: pass api_key= or set {ENV_API_KEY}")
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))

    @classmethod
    def from_env(cls, base_url: str | None = None, api_key: str | None = None, **options) -> Config:
        """Settings from arguments, falling back to ``IMAGEKIT_BASE_URL`` / ``IMAGEKIT_API_KEY``."""
        return cls(
            base_url=base_url or os.environ.get(ENV_BASE_URL, ""),
            api_key=api_key or os.environ.get(ENV_API_KEY, ""),
            **options,
        )

    def __repr__(self) -> str:
        return (
            f"Config(base_url={self.base_url!r}, api_key='****', timeout={self.timeout}, "
            f"platform={self.platform!r}, api_type={self.api_type!r}, max_retries={self.retry.max_retries})"
        )


def home_dir() -> Path:
    """imagekit's own data directory: ``IMAGEKIT_HOME`` or ``~/.imagekit``."""
    return Path(os.environ.get(ENV_HOME) or Path.home() / ".imagekit")
