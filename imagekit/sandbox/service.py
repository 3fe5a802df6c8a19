"""One running sandbox: its settings, database, clock, files, engines and in-flight work."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from filelock import FileLock, Timeout
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import selectinload

from .domain.accounts import admin_token
from .domain.clock import CLOCK_KEY, Clock
from .domain.faults import FAULTS_KEY, Faults
from .domain.jobs import JobRegistry
from .domain.recovery import Recovered, recover
from .domain.rendering import Renderer
from .domain.slots import ConcurrencyGate
from .engines import load_engine
from .engines.base import GenerationEngine
from .settings import SandboxSettings
from .store import migrate as schema
from .store.datadir import DataDirError, DataDirInUse, check_before_open, note_database, reason
from .store.db import Database
from .store.disk import MB, DiskSpace
from .store.files import ImageStore
from .store.render_cache import RenderCache
from .store.tables import Model, Plan, State

SHARED_STATE = select(select(State.value).where(State.key == CLOCK_KEY).scalar_subquery().label("clock"),
                      select(State.value).where(State.key == FAULTS_KEY).scalar_subquery().label("faults"))
"""What several workers must agree on beyond rows: the clock offset and the injected faults (one row)."""


class Sandbox:
    """Everything a request handler needs, created once per app by ``create_app``."""

    def __init__(self, settings: SandboxSettings, upgrade: bool | None = None) -> None:
        """Open the sandbox of ``settings``; its schema is brought to the head revision when
        ``upgrade`` (default: on SQLite, whose folder one process serves), else checked."""
        self.settings = settings
        check_before_open(settings.data_dir, settings.database_url)
        self.disk = DiskSpace(settings.data_dir)
        self.db = Database(settings.url, guard=self.disk.writing, wait=settings.db_wait)
        try:
            self.db.check_integrity()
            if (not self.db.shared) if upgrade is None else upgrade:
                schema.upgrade(self.db.engine, settings.data_dir)
            else:
                schema.check(self.db.engine, init_command(settings))
            self.clock = Clock(self.db)
            self.store = ImageStore(settings.image_dir, self.disk)
            if settings.database_url is not None:  # the folder exists now
                note_database(settings.data_dir, settings.database_url)
            cache = RenderCache(settings.image_dir / "cache", round(settings.render_cache_mb * MB), self.disk)
        except (OSError, SQLAlchemyError, DataDirError) as exc:
            self.db.dispose()
            detail = str(exc) if isinstance(exc, DataDirError) else reason(exc)
            raise DataDirError(f"cannot use {settings.data_dir}: {detail}") from None
        self.renderer = Renderer(self.store, cache, settings.render_slots)
        self.gate = ConcurrencyGate(self.db, self.clock)
        self.jobs = JobRegistry(self.db, self.clock)
        self.faults = Faults(self.db)
        self.executor = ThreadPoolExecutor(settings.workers, thread_name_prefix="sandbox-job")
        self._engines: dict[str, GenerationEngine] = {}
        self._claim: FileLock | None = None
        self._plans: dict[int, Plan] = {}
        self._admin_token: str | None = None

    def load_shared(self, clock: str | None, faults: str | None) -> None:
        """Take what another worker may have changed (clock offset, faults) as the database keeps
        it (``SHARED_STATE``): read at the start of every request on a shared database, so a
        request that follows a change sees it (see ``Callers.refresh_shared``)."""
        self.clock.load(clock)
        self.faults.load(faults)

    def engine_for(self, model: Model) -> GenerationEngine:
        if model.engine not in self._engines:
            self._engines[model.engine] = load_engine(model.engine)
        return self._engines[model.engine]

    @property
    def engine(self) -> GenerationEngine:
        """The built-in engine (seeding, edits that draw content)."""
        if "procedural" not in self._engines:
            self._engines["procedural"] = load_engine("procedural")
        return self._engines["procedural"]

    def plan(self, plan_id: int) -> Plan:
        """A plan with its costs and models, loaded once: plans do not change while the sandbox runs."""
        if plan_id not in self._plans:
            with self.db.read() as session:
                plan = session.get(Plan, plan_id, options=(selectinload(Plan.costs), selectinload(Plan.models)))
            if plan is None:
                raise LookupError(f"No plan {plan_id} in the sandbox's database.")
            self._plans[plan_id] = plan
        return self._plans[plan_id]

    @property
    def admin_token(self) -> str:
        """The token of the ``/sandbox`` controls (made now if an older version set up the folder)."""
        if self._admin_token is None:
            with self.db.write() as session:
                self._admin_token = admin_token(session)
        return self._admin_token

    def claim(self) -> None:
        """Hold the data folder for this process while it serves, or raise :class:`DataDirInUse`.

        A lock file (filelock: flock on POSIX, msvcrt on Windows; released by the OS when the process
        dies, even by ``kill -9``) keeps two servers off one folder: each would take the other's
        PENDING images for leftovers of a dead run. ``serve.pid`` names the holder."""
        if self._claim is not None:
            return
        folder = Path(self.settings.data_dir)
        lock = FileLock(folder / "serve.lock", timeout=0)
        try:
            lock.acquire()
            (folder / "serve.pid").write_text(str(os.getpid()))
        except Timeout:
            owner = _read_text(folder / "serve.pid") or "unknown"
            raise DataDirInUse(f"{self.settings.data_dir} is served by another process (pid {owner})") from None
        except OSError as exc:
            lock.release()
            raise DataDirError(f"cannot lock {folder / 'serve.lock'}: {exc.strerror or exc}") from None
        self._claim = lock

    def recover(self) -> Recovered:
        """Settle what an earlier run left unfinished (see :mod:`.recovery`)."""
        return recover(self.db, self.clock, self.store, self.renderer.cache)

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=False)
        self.db.dispose()
        if self._claim is not None:
            self._claim.release()
            self._claim = None


def init_command(settings: SandboxSettings) -> str:
    """The command that creates (or upgrades) this sandbox's database, password hidden."""
    from sqlalchemy.engine import make_url

    db = f" --db {make_url(settings.database_url).render_as_string(hide_password=True)}" if settings.database_url else ""
    return f"imagekit sandbox init --data {settings.data_dir}{db}"


def _read_text(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""
