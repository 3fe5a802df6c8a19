"""Operating a sandbox from outside it: the face the command line (``imagekit sandbox ...``) and
scripts use to initialise a data folder, add a user, read the admin token and serve.

Nothing outside the sandbox reaches its layers but through this module and ``EmbeddedSandbox``
(an import-linter contract holds it). The heavy parts (SQLAlchemy, FastAPI, uvicorn) load when a
function is called, not when this module is imported.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .interface.errors import SandboxError
from .settings import SandboxSettings
from .store.datadir import DataDirError, DataDirInUse

if TYPE_CHECKING:
    from .service import Sandbox

__all__ = ["DataDirError", "DataDirInUse", "SandboxError", "Initialised", "Serving", "init", "add_user", "admin_token", "initialised",
           "open_folder", "serving", "is_loopback", "DEFAULT_RENDER_CACHE_MB"]

DEFAULT_RENDER_CACHE_MB = SandboxSettings.render_cache_mb
"""Most MB of rendered variants a sandbox keeps by default."""


@dataclass(frozen=True)
class Initialised:
    """What ``init`` did: whether the folder was new, the demo user's e-mail and a fresh API key."""

    fresh: bool
    email: str
    api_key: str


def open_folder(data: str | Path, db: str | None = None, upgrade: bool | None = None, **settings: Any) -> Sandbox:
    """The sandbox of a data folder (and database: default SQLite inside the folder); its schema is
    upgraded when ``upgrade``, else as the sandbox decides (SQLite yes, a shared database no). A
    folder holding files that are not a sandbox's is refused (DataDirError)."""
    from .service import Sandbox
    from .store.datadir import DATABASE_NOTE, DB_NAME, IMAGES

    folder = Path(data)
    found = sorted(path.name for path in folder.iterdir()) if folder.is_dir() else []
    if found and not {DB_NAME, IMAGES, DATABASE_NOTE} & set(found):  # the user's own folder: not a sandbox's
        raise DataDirError(f"{data} holds files that are not a sandbox's ({', '.join(found[:3])}"
                           f"{', ...' if len(found) > 3 else ''}): name an empty or new folder")
    folder.mkdir(parents=True, exist_ok=True)
    return Sandbox(SandboxSettings(data_dir=folder, database_url=db, **settings), upgrade=upgrade)


def init(data: str | Path, db: str | None = None) -> Initialised:
    """Create (or upgrade) the database, the plans and the demo user of ``data``; a fresh API key."""
    from .domain.seed import DEMO_EMAIL, initialize, is_initialized

    sandbox = open_folder(data, db, upgrade=True)
    try:
        fresh = not is_initialized(sandbox)
        return Initialised(fresh, DEMO_EMAIL, initialize(sandbox))
    finally:
        sandbox.close()


@contextmanager
def initialised(data: str | Path, db: str | None = None) -> Iterator[Sandbox]:
    """The sandbox of an initialised folder, closed afterwards; DataDirError (and nothing created,
    when the caller undoes what it made) for a folder that holds none."""
    from .domain.seed import is_initialized
    from .service import init_command
    from .store.datadir import check_before_open, is_new

    hint = init_command(SandboxSettings(data_dir=Path(data), database_url=db))
    if db is None and (not Path(data).is_dir() or is_new(Path(data), None)):
        check_before_open(Path(data), db)  # a folder whose tables are elsewhere says so
        raise DataDirError(f"{data} holds no sandbox; run `{hint}` first")
    sandbox = open_folder(data, db)
    try:
        if not is_initialized(sandbox):
            raise DataDirError(f"{data} holds no sandbox; run `{hint}` first")
        yield sandbox
    finally:
        sandbox.close()


def add_user(sandbox: Sandbox, email: str, plan: str = "standard") -> tuple[int, str]:
    """Register a user on ``plan`` (SandboxError for a taken e-mail or an unknown plan): its id and API key."""
    from .domain.seed import register_user

    return register_user(sandbox, email, plan)


def admin_token(sandbox: Sandbox) -> str:
    """The token the ``/sandbox`` controls need where they need one."""
    return sandbox.admin_token


@dataclass
class Serving:
    """A sandbox listening and ready to serve (``run``): what its start did and where it listens."""

    sandbox: Sandbox
    sockets: list[socket.socket]
    seeded: bool
    """This start seeded the database (the folder was new)."""
    demo_key: str | None
    """The demo user's fresh API key when this start seeded the database."""
    workers: int

    @property
    def port(self) -> int:
        return int(self.sockets[0].getsockname()[1])

    def disk_warning(self) -> str | None:
        """What is short of disk space for the render cache and new images, or None."""
        from .store.disk import LOW_SPACE

        return self.sandbox.disk.shortage(self.sandbox.renderer.cache.limit + LOW_SPACE) or None

    def run(self, log_level: str = "info") -> None:
        """Serve until interrupted (``workers`` processes behind the sockets when more than one)."""
        if self.workers > 1:
            from .serving.workers import serve_workers

            self.sandbox.recover()  # once, here: in a worker it would fail the others' work in flight
            self.sandbox.db.dispose()
            try:
                serve_workers(self.sandbox.settings, self.sockets, self.workers, log_level)
            finally:
                self.sandbox.close()
            return
        import uvicorn

        from .api.app import create_app

        config = uvicorn.Config(create_app(self.sandbox.settings, self.sandbox), log_level=log_level,
                                access_log=log_level == "debug")
        uvicorn.Server(config).run(sockets=self.sockets)


def serving(data: str | Path, db: str | None, host: str, port: int, workers: int = 1, **settings: Any) -> Serving:
    """Claim the folder, listen on ``host:port`` and seed a new database: a sandbox ready to ``run``
    (``settings``: SandboxSettings' fields). Workers above 1 need a database they can share."""
    from .serving.start import start

    if workers > 1 and db is None:
        raise DataDirError("--workers above 1 needs a database every worker can share (--db postgresql://...); "
                           "the SQLite file in the data folder is served by one process")
    started = start(open_folder(data, db, **settings), host, port, workers)
    return Serving(started.sandbox, started.sockets, started.seeded, started.demo_key, workers)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address to listen on) is this machine's loopback only."""
    from .serving.sockets import is_loopback as loopback

    return loopback(host)
