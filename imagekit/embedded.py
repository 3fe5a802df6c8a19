"""``connect()``: a client for the configured service, or for the process's embedded sandbox.

The sandbox (FastAPI, SQLAlchemy...) is imported only here, and only when no service is configured.
"""

from __future__ import annotations

import atexit
import functools
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, Unpack, overload

import httpx

from . import config as _config
from ._urls import shown_url
from .client import AsyncClient, Client
from .config import ClientOptions
from .errors import ENV_API_KEY, ENV_BASE_URL, ConfigError
from .home import home_dir

if TYPE_CHECKING:
    import os
    from pathlib import Path

    from .images import CreateResult, Image
    from .sandbox import EmbeddedSandbox

__all__ = ["connect", "reproduce", "FollowsTheFolder"]

log = logging.getLogger("imagekit")

START_WAIT = 60.0
"""Seconds a process waits for the sandbox another process began to start from the same home (two
scripts started at once): it is joined once it answers."""

_embedded: dict[tuple[bool, Path], EmbeddedSandbox] = {}
"""The process's embedded sandboxes, by spec-exactness and the home's sandbox folder (a process
that sets another IMAGEKIT_HOME gets that home's sandbox)."""
_embedded_lock = threading.Lock()


def _sandbox_folder() -> Path:
    """Where IMAGEKIT_HOME keeps its sandbox (one line if it cannot)."""
    return home_dir("its local sandbox (no IMAGEKIT_BASE_URL is set)") / "sandbox"


def _embedded_sandbox(spec_exact: bool = False, folder: Path | None = None) -> EmbeddedSandbox:
    """The process's embedded sandbox of ``folder`` (default: IMAGEKIT_HOME's), started on first
    use and stopped at exit."""
    folder = folder if folder is not None else _sandbox_folder()
    with _embedded_lock:
        if (spec_exact, folder) not in _embedded:
            from .extras import missing_extra
            from .sandbox import EmbeddedSandbox  # FastAPI, SQLAlchemy... load on start(), only here

            try:
                sandbox = _start_embedded(functools.partial(EmbeddedSandbox, spec_exact=spec_exact), spec_exact,
                                          folder)
            except ModuleNotFoundError as exc:
                if missing_extra(exc) is None:
                    raise  # a bug, not a missing extra
                raise ConfigError(
                    "no IMAGEKIT_BASE_URL/IMAGEKIT_API_KEY, and the local sandbox needs "
                    f"pip install 'imagekit[sandbox]' ({exc.name} is missing)"
                ) from exc
            atexit.register(_stop_at_exit, sandbox)
            _embedded[spec_exact, folder] = sandbox
        return _embedded[spec_exact, folder]


def _stop_at_exit(sandbox: EmbeddedSandbox) -> None:
    """Stop the embedded sandbox as the process ends; a Ctrl+C while it lets its last requests
    finish leaves at once, quietly (what its database committed is kept: SQLite sees to that)."""
    try:
        sandbox.stop()
    except KeyboardInterrupt:
        log.debug("the embedded sandbox was left running as the process ended: Ctrl+C")


def _start_embedded(factory: Callable[..., EmbeddedSandbox], spec_exact: bool, folder: Path) -> EmbeddedSandbox:
    """The sandbox of IMAGEKIT_HOME: started here, or the one another process of this user serves
    from it (a notebook left open), so that both are one service, one account and one history."""
    from .sandbox import EmbeddedSandbox
    from .sandbox.operations import DataDirInUse

    try:
        return factory(data_dir=folder).start()
    except DataDirInUse as exc:
        joined = EmbeddedSandbox.join(folder, spec_exact, starting=START_WAIT)
        if joined is not None:
            log.info("using the sandbox another process serves from %s at %s", folder, joined.url)
            return joined
        if any(held.data_dir == folder for held in _embedded.values()):
            # this process serves the folder with the other face: that one's own sandbox is temporary
            log.warning("%s with the other face; this process's %s sandbox is a temporary one",
                        folder, "spec-exact" if spec_exact else "default")
            return factory().start()
        try:  # the process that held it may have ended while starting: the folder is free again
            return factory(data_dir=folder).start()
        except DataDirInUse:
            pass
        raise ConfigError(f"{exc} that imagekit cannot reach; stop that process, or set IMAGEKIT_HOME "
                          "to another folder for a sandbox of this process's own") from None


class FollowsTheFolder(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Sends to the sandbox another process serves from this home (``EmbeddedSandbox.join``); when
    that process has ended (its port refuses the connection: two scripts started at once, the first
    done), the folder's sandbox is found again, joined or started here, and the request goes there.
    A refused connection sent nothing, so any request may go again; the demo key stays valid, for
    keys live in the folder's database."""

    def __init__(self, spec_exact: bool, folder: Path) -> None:
        self._spec_exact = spec_exact
        self._folder = folder
        """The home's sandbox folder it follows."""
        self._sync = httpx.HTTPTransport()
        self._async = httpx.AsyncHTTPTransport()
        self._lock = threading.Lock()
        self._moved: dict[str, str] = {}
        """Where requests built for one sandbox's address now go (``host:port`` to ``host:port``)."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return self._sync.handle_request(self._aimed(request))
        except httpx.ConnectError:
            self._follow(request)
            return self._sync.handle_request(self._aimed(request))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        from anyio.to_thread import run_sync

        try:
            return await self._async.handle_async_request(self._aimed(request))
        except httpx.ConnectError:
            await run_sync(self._follow, request)  # it may start a sandbox: seconds, off the event loop
            return await self._async.handle_async_request(self._aimed(request))

    def _aimed(self, request: httpx.Request) -> httpx.Request:
        with self._lock:
            moved = self._moved.get(request.url.netloc.decode())
        if moved is not None:
            host, port = moved.rsplit(":", 1)
            request.url = request.url.copy_with(host=host, port=int(port))
            request.headers["host"] = moved
        return request

    def _follow(self, request: httpx.Request) -> None:
        """Find the folder's sandbox again (once, whichever request saw the refusal first); re-raise
        the refusal when it is the one this process holds, which did not end."""
        failed = request.url.netloc.decode()
        with _embedded_lock:
            held = _embedded.get((self._spec_exact, self._folder))
            if held is not None and held.joined and httpx.URL(held.url).netloc.decode() == failed:
                del _embedded[self._spec_exact, self._folder]  # ended with its process
        sandbox = _embedded_sandbox(self._spec_exact, self._folder)
        now = httpx.URL(sandbox.url).netloc.decode()
        if now == failed:
            raise httpx.ConnectError(f"the sandbox at {sandbox.url} refuses connections", request=request)
        log.info("the process serving the sandbox at %s ended; using the folder's sandbox at %s", failed, now)
        with self._lock:
            self._moved = {**{old: now for old, new in self._moved.items() if new == failed}, failed: now}

    def close(self) -> None:
        self._sync.close()

    async def aclose(self) -> None:
        await self._async.aclose()


@overload
def connect(base_url: str | None = None, api_key: str | None = None, *, asynchronous: Literal[False] = False,
            spec_exact: bool = False, **options: Unpack[ClientOptions]) -> Client: ...
@overload
def connect(base_url: str | None = None, api_key: str | None = None, *, asynchronous: Literal[True],
            spec_exact: bool = False, **options: Unpack[ClientOptions]) -> AsyncClient: ...
def connect(base_url: str | None = None, api_key: str | None = None, *, asynchronous: bool = False,
            spec_exact: bool = False, **options: Unpack[ClientOptions]) -> Client | AsyncClient:
    """A client for the configured service, or for a local sandbox when none is configured.

    Uses ``base_url``/``api_key``, else ``IMAGEKIT_BASE_URL``/``IMAGEKIT_API_KEY``; with neither,
    starts one embedded sandbox per process (data in ``IMAGEKIT_HOME``, default ``~/.imagekit``)
    and connects as its demo user; ``spec_exact=True`` makes that sandbox answer exactly as the
    interface shows, without its extensions. ``asynchronous=True`` returns an AsyncClient.
    """
    base_url, api_key = _config.service_from_env(base_url, api_key)
    if bool(base_url) != bool(api_key):
        given, missing = (ENV_BASE_URL, ENV_API_KEY) if base_url else (ENV_API_KEY, ENV_BASE_URL)
        what = f"your API key for {shown_url(base_url)}" if base_url else "the service's address"
        raise ConfigError(f"{given} is set but {missing} is not: set {missing} to {what} "
                          f"(set both to reach a service), or unset {given} to use the local sandbox.")
    if not base_url:
        from .ledger import sandbox_account

        folder = _sandbox_folder()
        sandbox = _embedded_sandbox(spec_exact, folder)
        base_url, api_key = sandbox.url, sandbox.api_key
        # Its port and the demo user's key change every session; the data folder's id does not.
        options.setdefault("account", sandbox_account(sandbox.identity))
        options.setdefault("service", f"{_config.SANDBOX_SERVICE} {sandbox.identity}")
        if sandbox.joined:  # it ends with the process serving it: this client then follows the folder
            options.setdefault("transport", FollowsTheFolder(spec_exact, folder))
    elif spec_exact:
        raise ConfigError("spec_exact=True applies to the embedded sandbox; a configured service answers as it does")
    return (AsyncClient if asynchronous else Client)(base_url, api_key, **options)


def reproduce(path: str | os.PathLike[str], client: Client | None = None, *, max_credits: float | None = None,
              confirm: bool = False) -> CreateResult | Image | None:
    """Send the request that made the image in ``path`` again through ``client`` (default
    ``connect()``): ``imagekit.workflows.reproduce.reproduce``, which says the rest."""
    from .workflows.reproduce import reproduce as send_again

    return send_again(path, client if client is not None else connect(), max_credits=max_credits, confirm=confirm)
