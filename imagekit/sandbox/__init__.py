"""The sandbox: a local implementation of the whole interface, embeddable in any process.

``EmbeddedSandbox`` serves it on a loopback port from a background thread; it is what
``imagekit.connect()`` starts when no server is configured. Heavy imports (FastAPI, SQLAlchemy,
OpenCV) happen on ``start()``, not on import.

The sandbox is built in layers, each importing only those below it (the sandbox's contract in
pyproject.toml keeps it so; imports under ``TYPE_CHECKING`` are not counted):

- ``settings``: what one sandbox is configured with; every layer may read it;
- ``interface/``: what the interface says (wire schemas, error names and body, extensions);
- ``engines/``: image generation, editing and captions on NumPy arrays (pluggable);
- ``store/``: the database, its migrations, the data folder's files and disk space;
- ``domain/``: the service's rules (accounts, credits, generation, editing, jobs, recovery);
- ``service``: the composition root, ``Sandbox``: one running sandbox's parts, built once;
- ``api/``: FastAPI and Starlette: the app, middleware, callers, views and routes;
- ``serving/``: sockets and worker processes;
- ``operations``: the face for operating a sandbox from outside it (init, add a user, the admin
  token, serve), which the command line uses;
- this module: ``EmbeddedSandbox``, the face ``imagekit.connect()`` uses.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .serving.record import Served, claimed_at, read_record, remove_record, running, write_record

if TYPE_CHECKING:
    import uvicorn

    from .service import Sandbox

__all__ = ["EmbeddedSandbox"]


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

        from .api.app import create_app
        from .domain.accounts import sandbox_identity
        from .service import Sandbox
        from .serving.sockets import is_loopback
        from .serving.start import start
        from .settings import SandboxSettings

        self.data_dir.mkdir(parents=True, exist_ok=True)
        settings = SandboxSettings(data_dir=self.data_dir, latency=self._latency,
                                   **{"controls_need_token": not is_loopback(self._host), **self._extra})
        started = start(Sandbox(settings, upgrade=True), self._host, self._port, demo_key=True)
        self.sandbox, [sock], self.api_key = started.sandbox, started.sockets, started.demo_key or ""
        try:
            with self.sandbox.db.write() as session:
                self.identity = sandbox_identity(session)
        except BaseException:
            sock.close()
            self.sandbox.close()
            raise
        config = uvicorn.Config(create_app(settings, self.sandbox), log_level="warning", access_log=False,
                                timeout_keep_alive=30, limit_concurrency=512)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name="imagekit-sandbox", daemon=True)
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the embedded sandbox failed to start; see the log above")
            self._thread.join(0.01)
        host, port = sock.getsockname()[:2]
        self.url = f"http://{host}:{port}"
        if self._tmp is None and is_loopback(self._host):  # another process of this user may join it
            write_record(self.data_dir, Served(self.url, self.api_key, self.identity, settings.spec_exact, os.getpid()))
        return self

    @classmethod
    def join(cls, data_dir: str | Path, spec_exact: bool = False, starting: float = 0.0) -> EmbeddedSandbox | None:
        """The embedded sandbox another process of this machine serves from ``data_dir`` (with the
        same face), to use from this one; None when there is none that answers. A process that
        claimed the folder less than ``starting`` seconds ago may still be starting it: it is waited
        for (two scripts started at once share one sandbox)."""
        claimed = claimed_at(Path(data_dir))
        while (served := running(Path(data_dir))) is None and claimed is not None \
                and time.time() < claimed + starting:
            time.sleep(0.1)
        if served is None or served.spec_exact != spec_exact:
            return None
        joined = cls(data_dir)
        joined.url, joined.api_key, joined.identity = served.url, served.api_key, served.identity
        return joined

    @property
    def joined(self) -> bool:
        """Served by another process (``join``): it ends when that process does."""
        return self._server is None and bool(self.url)

    @staticmethod
    def identity_of(data_dir: str | Path) -> str | None:
        """The lasting id of ``data_dir``'s sandbox without starting or joining it: as its database
        keeps it, else as the process serving it recorded it; None for a folder never started."""
        from .store.datadir import kept_identity

        served = read_record(Path(data_dir))
        return kept_identity(Path(data_dir)) or (served.identity if served else None)

    def add_user(self, email: str, plan: str = "standard") -> str:
        """A new user on ``plan``; returns its API key."""
        from .domain.seed import register_user

        if self.sandbox is None:
            state = "served by another process" if self.joined else "not started"
            raise RuntimeError(f"add_user needs a sandbox this process runs; this one is {state} "
                               "(POST /sandbox/users adds a user to any)")
        return register_user(self.sandbox, email, plan)[1]

    def stop(self) -> None:
        """Stop serving (a joined sandbox is left to the process that serves it)."""
        if self._server is not None:
            remove_record(self.data_dir)
            self._server.should_exit = True
            try:
                if self._thread is not None:
                    self._thread.join(timeout=30)
            finally:  # a Ctrl+C in the wait too: a temporary folder goes all the same
                self._server = None
                self._remove_tmp()
        self._remove_tmp()

    def _remove_tmp(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> EmbeddedSandbox:
        """Started, once: ``with EmbeddedSandbox(d).start() as box`` is the same sandbox."""
        return self if self._server is not None else self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"EmbeddedSandbox(url={self.url!r}, data_dir={str(self.data_dir)!r})"

