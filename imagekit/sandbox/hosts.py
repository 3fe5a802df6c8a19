"""The Host header check: a request naming a host the sandbox does not serve is refused.

DNS rebinding points a name the attacker controls at this machine, so a browser page of that name
can talk to the sandbox as if it were its own site; its requests carry that name in Host. IP
literals and ``localhost`` cannot be re-bound, so they always pass; other names only when listed
(``SandboxSettings.allowed_hosts``, ``serve --allowed-host``).
"""

from __future__ import annotations

import ipaddress

from .errors import SandboxError, send_error


def host_name(header: str) -> str:
    """The name in a Host header, without port, brackets or trailing dot, lower-cased."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    name = header.rsplit(":", 1)[0] if header.count(":") == 1 else header
    return name.rstrip(".")


def host_allowed(header: str, allowed: frozenset[str]) -> bool:
    name = host_name(header)
    if name == "localhost" or name in allowed:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheckMiddleware:
    """Refuse (400 ``invalid_host``) any HTTP request whose Host names a host not served here."""

    def __init__(self, app, allowed: tuple[str, ...]):
        self.app = app
        self.allowed = frozenset(host_name(name) for name in allowed)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"host")
            if header is not None and not host_allowed(header.decode("latin-1"), self.allowed):
                await send_error(send, SandboxError("invalid_host", "The Host header names a host this "
                                                    "sandbox does not serve (see serve --allowed-host)."))
                return
        await self.app(scope, receive, send)
