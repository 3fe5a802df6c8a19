"""The sandbox: a local implementation of the whole interface, embeddable in any process.

``EmbeddedSandbox`` serves it on a loopback port from a background thread; it is what
``imagekit.connect()`` starts when no server is configured. Heavy imports (FastAPI, SQLAlchemy,
OpenCV) happen on ``start()``, not on import.
"""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uvicorn

    from .service import Sandbox

__all__ = ["EmbeddedSandbox", "is_loopback", "listening_socket", "listening_sockets"]


REUSE_PORT = sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")
"""Whether several listening sockets can share one port with the kernel spreading connections over
them (Linux; BSD and macOS accept the option but hand every connection to one socket)."""


def listening_socket(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A TCP socket bound to ``host:port``; raises OSError (e.g. the port is taken) before serving."""
    sock = _tcp_socket(host)
    try:
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        # Listening now, so a client that read the "Serving" line is queued, never refused, while
        # the server (or each worker process) starts to accept.
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    return sock


def listening_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` sockets listening on one ``host:port``, one per worker process, where ``REUSE_PORT``;
    else one socket they all share. Raises OSError when the port is taken, as ``listening_socket``.

    With one shared socket, the worker whose event loop wakes first accepts every connection that is
    waiting, so connections opened together pile onto one worker; the kernel spreads them over a
    port's ``SO_REUSEPORT`` sockets instead (as nginx ``reuseport`` and gunicorn ``--reuse-port``)."""
    if count == 1 or not REUSE_PORT:
        return [listening_socket(host, port)]
    # A port another server listens on, even with SO_REUSEPORT (which would let ours join its group),
    # refuses this plain socket; held while the group binds, it also gives the port that 0 picked.
    probe = _tcp_socket(host)
    group: list[socket.socket] = []
    try:
        probe.bind((host, port))
        port = probe.getsockname()[1]
        for _ in range(count):
            group.append(listening_socket(host, port, reuse_port=True))
    except BaseException:
        for sock in group:
            sock.close()
        raise
    finally:
        probe.close()
    return group


def _tcp_socket(host: str) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto says
    # TCP, and with Nagle on, every response written in two parts waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    return sock


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` keeps the server on this machine."""
    import ipaddress

    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class EmbeddedSandbox:
    """A sandbox server on 127.0.0.1 in a background thread, with its own data directory."""

    def __init__(self, data_dir: str | Path | None = None, latency: float = 0.0, host: str = "127.0.0.1",
                 port: int = 0, **settings: Any) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if data_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="imagekit-sandbox-")
            data_dir = self._tmp.name
        self.data_dir = Path(data_dir)
        self._latency, self._host, self._port, self._extra = latency, host, port, settings
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.sandbox: Sandbox | None = None
        self.url = ""
        self.api_key = ""
        self.identity = ""
        """A lasting id of the data folder (kept in it): the same sandbox on any port, any day."""

    def start(self) -> EmbeddedSandbox:
        import uvicorn

        from .accounts import sandbox_identity
        from .app import create_app
        from .faults import quiet_dropped_connections
        from .seed import initialize
        from .service import Sandbox
        from .settings import SandboxSettings

        self.data_dir.mkdir(parents=True, exist_ok=True)
        settings = SandboxSettings(data_dir=self.data_dir, latency=self._latency,
                                   **{"controls_need_token": not is_loopback(self._host), **self._extra})
        self.sandbox = Sandbox(settings, upgrade=True)
        try:
            self.sandbox.claim()  # before anything is written: a folder another process serves stays theirs
        except BaseException:
            self.sandbox.close()
            raise
        try:
            self.api_key = initialize(self.sandbox)
            with self.sandbox.db.write() as session:
                self.identity = sandbox_identity(session)
            sock = listening_socket(self._host, self._port)
        except BaseException:
            self.sandbox.close()
            raise
        config = uvicorn.Config(create_app(settings, self.sandbox), log_level="warning", access_log=False,
                                timeout_keep_alive=30, limit_concurrency=512)
        self._server = uvicorn.Server(config)
        quiet_dropped_connections()
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name="imagekit-sandbox", daemon=True)
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the embedded sandbox failed to start; see the log above")
            self._thread.join(0.01)
        host, port = sock.getsockname()[:2]
        self.url = f"http://{host}:{port}"
        return self

    def add_user(self, email: str, plan: str = "standard") -> str:
        """A new user on ``plan``; returns its API key."""
        from .seed import register_user

        return register_user(self.sandbox, email, plan)[1]

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            if self._thread is not None:
                self._thread.join(timeout=30)
            self._server = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> EmbeddedSandbox:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"EmbeddedSandbox(url={self.url!r}, data_dir={str(self.data_dir)!r})"
