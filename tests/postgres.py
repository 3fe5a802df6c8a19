"""A throwaway PostgreSQL cluster for the test run: Debian's server binaries, a temporary folder, a free port.

Started once per test process by the ``postgres`` fixture (tests/conftest.py; under pytest-xdist each
worker has its own cluster); each test asks it for a fresh database with :meth:`PostgresServer.new_database`,
so no test sees another's rows. ``IMAGEKIT_TEST_POSTGRES_BIN`` names the folder of ``initdb`` and
``pg_ctl`` when they are not in Debian's place.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tests.helpers import free_ports_below_the_ephemeral_range

_names = itertools.count()


def _server_binaries() -> Path:
    """``IMAGEKIT_TEST_POSTGRES_BIN``, else the newest installed ``/usr/lib/postgresql/<version>/bin``
    (not on PATH on Debian)."""
    if named := os.environ.get("IMAGEKIT_TEST_POSTGRES_BIN"):
        if not (Path(named) / "initdb").is_file():
            raise RuntimeError(f"IMAGEKIT_TEST_POSTGRES_BIN={named} holds no initdb")
        return Path(named)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda path: int(path.split("/")[4]))
    if not found:
        raise RuntimeError("PostgreSQL server binaries not found: apt-get install -y postgresql")
    return Path(found[-1]).parent


def _scratch() -> str | None:
    """Where the cluster's folder goes: /dev/shm when it has room (every database is a copy of
    template1, some 8 MB of files written and later removed: in memory that takes half as long), else
    the system's temporary folder."""
    try:
        roomy = shutil.disk_usage("/dev/shm").free >= 4 * 2**30
    except OSError:
        return None
    return "/dev/shm" if roomy else None


def _signal(pid: int, number: int) -> bool:
    """Send a signal to one of the server's processes; False if it has ended meanwhile (a backend)."""
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        return False
    return True


class PostgresServer:
    """One cluster on 127.0.0.1 owned by this test run; ``stop()`` removes it and its folder.
    ``with PostgresServer() as cluster:`` starts it and stops it at the end of the block."""

    def __init__(self) -> None:
        self.bin = _server_binaries()
        self.folder = Path(tempfile.mkdtemp(prefix="imagekit-pg-", dir=_scratch()))
        self.port = free_ports_below_the_ephemeral_range()
        """Below the ephemeral range: no test's connection takes it while the server starts, or while
        an outage test has it stopped (a port from ``free_port`` was taken so, and the run's cluster
        did not start: 152 tests of its process failed)."""
        self._as_owner: list[str] = []
        if os.geteuid() == 0:  # initdb refuses root: run the cluster as the postgres user
            shutil.chown(self.folder, "postgres")
            self._as_owner = ["runuser", "-u", "postgres", "--"]
        self.data = self.folder / "data"
        self._admin: Any = None  # a psycopg connection to the postgres database, for CREATE DATABASE

    def start(self) -> PostgresServer:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        for attempt in range(3):
            try:
                self.resume()
                return self
            except RuntimeError as exc:  # another test process's cluster took the port first: another port
                if attempt == 2 or "could not bind" not in str(exc):
                    raise
                self.port = free_ports_below_the_ephemeral_range()
        raise AssertionError("unreachable")

    def halt(self) -> None:
        """Stop the server and keep its data, as an outage does (``resume()`` ends it)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the server on its data (and its port) again."""
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.folder} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.folder / "server.log"), "-w", "start")

    def processes(self) -> list[int]:
        """The server's processes: the postmaster and its children (backends, background workers)."""
        main = int((self.data / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:  # "pid (name) state ppid ...": the name may hold spaces, so read after its ")"
                parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
            if parent == main:
                children.append(int(stat.parent.name))
        return [main, *children]

    def freeze(self) -> list[int]:
        """SIGSTOP every process of the server, as a frozen VM or a failover looks from outside: the
        kernel still accepts connections and acknowledges packets, and nothing answers. ``thaw`` ends it."""
        return [pid for pid in self.processes() if _signal(pid, signal.SIGSTOP)]

    def thaw(self, frozen: list[int]) -> None:
        """SIGCONT the processes ``freeze`` stopped."""
        for pid in frozen:
            _signal(pid, signal.SIGCONT)

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every connection is dropped and the server comes back on the same
        options (pg_ctl keeps them); its output goes to the log file, not to a pipe it would hold open."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-m", "fast", "-w", "restart")

    def __enter__(self) -> PostgresServer:
        try:
            return self.start()
        except BaseException:
            self.stop()  # initdb or pg_ctl failed half-way: leave no folder or server behind
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        """A SQLAlchemy/psycopg URL for ``database`` on this cluster."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database and return its URL (over one kept connection: a ``createdb``
        process per database cost twice as long)."""
        import psycopg

        name = f"test_{os.getpid()}_{next(_names)}"
        for attempt in range(2):
            if self._admin is None or self._admin.closed or self._admin.broken:
                self._admin = psycopg.connect(self.url(), autocommit=True)
            try:
                self._admin.execute(f'CREATE DATABASE "{name}"')
                break
            except psycopg.OperationalError:  # the server restarted (a test's outage) since the last one
                if attempt:
                    raise
                self._admin.close()
        return self.url(name)

    def _run(self, program: str, *args: str) -> None:
        command = [*self._as_owner, str(self.bin / program), *args]
        done = subprocess.run(command, capture_output=True, text=True, cwd=self.folder)
        if done.returncode:
            log = self.folder / "server.log"  # why the server did not start is there, not in pg_ctl's words
            said = log.read_text(errors="replace").strip().splitlines()[-5:] if log.exists() else []
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}"
                               + "".join(f"\n  {line}" for line in said))
