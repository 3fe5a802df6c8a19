"""The request path: ``GET /api/users/me`` requests per second, the sandbox beside bare Starlette.

Every row is a real server in a subprocess on 127.0.0.1, started by a command line:
- the sandbox rows run ``imagekit sandbox init --data DIR [INIT ARGS]`` (its last line is the demo
  key) and then ``imagekit sandbox serve --data DIR --port P [SERVE ARGS]``;
- the bare row is this script's ``--bare DOCUMENT --port P``: one async Starlette endpoint returning
  the very document the first sandbox row answered, under uvicorn with its default settings (as
  ``imagekit sandbox serve`` uses them).

The load is the same for every row: ``--connections`` keep-alive HTTP/1.1 connections (default 16:
a team's several clients, each with its own pool) driven by one asyncio loop in this process (raw
requests, each answer read to its end and checked to be a 200). The connections are opened together,
as a client's pool is. On 2 cores the load generator, the server's workers and PostgreSQL share the
CPUs, so each row also prints the CPU time per request of each (Linux ``/proc``: the client, the
server's processes, PostgreSQL's backends), how many cores they kept busy in all, and per round how
many the whole machine did (the difference went to other processes on a shared machine). In each of
``--rounds`` rounds every row is driven for ``--seconds`` in turn, and a row's ratio to bare
Starlette is taken within the round: load from elsewhere on a shared machine drifts slowly, so it
hits both sides of a ratio alike. The medians over the rounds are printed, with each round's figure.

The sandbox rows are SQLite with 1 worker, and PostgreSQL with 1 and with 2 workers, each over its
own fresh database in a throwaway cluster (the test suite's, ``tests/postgres.py``; Debian's
``postgresql`` package). The 2-worker row runs with ``--worker-header``, to see that both workers
answer (a round where the kernel gave every connection to one says so). ``--sqlite-only`` leaves
PostgreSQL out; more configurations are more rows: ``--row "NAME|INIT ARGS|SERVE ARGS"``.

Run: ``.venv/bin/python benchmarks/bench_request_path.py [--seconds 5] [--rounds 3] [--connections 16]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.postgres import PostgresServer  # noqa: E402

PATH = "/api/users/me"
WORKER_HEADER = "x-sandbox-worker"


@dataclass(frozen=True)
class Row:
    """One server to measure: a sandbox configuration (its init and serve arguments) or the bare app."""

    name: str
    init: tuple[str, ...] = ()
    serve: tuple[str, ...] = ()
    bare: bool = False

    @property
    def workers(self) -> int:
        """How many processes serve this row (each must be seen answering)."""
        return int(self.serve[self.serve.index("--workers") + 1]) if "--workers" in self.serve else 1

    @classmethod
    def parse(cls, text: str) -> Row:
        name, init, serve = (text.split("|") + ["", ""])[:3]
        return cls(name.strip(), tuple(shlex.split(init)), tuple(shlex.split(serve)))


SANDBOX = Row("sandbox, SQLite, 1 worker")
BARE = Row("bare Starlette, same body", bare=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "imagekit.cli", *args]


@dataclass
class Server:
    """A row's server, answering on ``url`` with ``key``; ``database`` is the pid of its PostgreSQL."""

    url: str
    key: str
    process: subprocess.Popen[bytes]
    database: int | None = None


def tree_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) used so far by ``pid`` and its living descendants (0 without /proc)."""
    if pid is None or not Path("/proc").is_dir():
        return 0.0
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        try:
            text = (entry / "stat").read_text() if entry.name.isdigit() else ""
        except OSError:  # gone meanwhile
            continue
        if text:
            stats[int(entry.name)] = text[text.rindex(")") + 2:].split()  # after "pid (name) "
    family, total = {pid}, 0.0
    for _ in range(4):  # server -> workers (-> their helpers); postmaster -> backends
        family |= {child for child, fields in stats.items() if int(fields[1]) in family}
    for member in family & stats.keys():
        total += int(stats[member][11]) + int(stats[member][12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def machine_cpu() -> float:
    """CPU seconds every process on the machine has used (not idle, not waiting on I/O): /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(value) for value in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


@dataclass
class Drive:
    """One row driven once: answers per second, the workers that answered, and CPU seconds per
    request of the load generator, the server and its PostgreSQL; ``busy``: cores they kept busy;
    ``machine``: cores the whole machine kept busy (the rest went to processes outside the benchmark)."""

    rate: float
    workers: int
    client: float
    server: float
    database: float
    busy: float
    machine: float


@contextmanager
def running(row: Row, workdir: Path, document: Path | None, database: int | None = None) -> Iterator[Server]:
    """Start ``row``'s server, wait until it answers, stop it (SIGTERM) at the end."""
    port, key = free_port(), ""
    if row.bare:
        assert document is not None, "the bare row needs a sandbox row before it"
        argv = [sys.executable, __file__, "--bare", str(document), "--port", str(port)]
    else:
        data = workdir / f"data-{port}"
        init = subprocess.run(_cli("sandbox", "init", "--data", str(data), *row.init),
                              capture_output=True, text=True, check=True, timeout=300)
        key = init.stdout.strip().splitlines()[-1]
        argv = _cli("sandbox", "serve", "--data", str(data), "--port", str(port), "--log-level", "warning", *row.serve)
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    server = Server(f"http://127.0.0.1:{port}", key, process, database if "--db" in row.serve else None)
    try:
        _wait_until_answering(server)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_answering(server: Server) -> None:
    deadline = time.monotonic() + 120
    while True:
        if server.process.poll() is not None:
            said = server.process.stderr.read().decode() if server.process.stderr else ""
            raise RuntimeError(f"the server exited: {said}")
        try:
            httpx.get(server.url + PATH, headers={"X-Api-Key": server.key}, timeout=5).raise_for_status()
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline, f"{server.url} did not answer within 120 s"
            time.sleep(0.05)  # a port that is not open yet gives no event to wait on


async def _drive(url: str, key: str, seconds: float, connections: int) -> tuple[int, set[bytes]]:
    """Answers (all 200) to ``GET /api/users/me`` in ``seconds`` over ``connections`` keep-alive
    connections, and the workers that answered (named only with ``--worker-header``)."""
    host, port = url.removeprefix("http://").split(":")
    request = (f"GET {PATH} HTTP/1.1\r\nHost: {host}:{port}\r\nX-Api-Key: {key}\r\n"
               f"Accept: */*\r\nUser-Agent: bench\r\n\r\n").encode()
    done, workers = 0, set()

    async def connection(stop_at: float, opened: asyncio.Barrier) -> None:
        nonlocal done
        reader, writer = await asyncio.open_connection(host, int(port))
        await opened.wait()  # every connection open before the first request, as a client's pool
        try:
            while time.perf_counter() < stop_at:
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                if not head.startswith(b"HTTP/1.1 200"):
                    raise RuntimeError(f"{url}{PATH} answered {head.splitlines()[0].decode()}")
                fields = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
                fields = {name.strip().lower(): value.strip() for name, value in fields.items()}
                length = int(fields[b"content-length"])
                workers.add(fields.get(WORKER_HEADER.encode(), b"one"))
                await reader.readexactly(length)
                done += 1
        finally:
            writer.close()

    warm = asyncio.Barrier(connections)
    await asyncio.gather(*(connection(time.perf_counter() + 0.3, warm) for _ in range(connections)))
    done, opened = 0, asyncio.Barrier(connections)
    await asyncio.gather(*(connection(time.perf_counter() + seconds, opened) for _ in range(connections)))
    return done, workers


def drive(server: Server, seconds: float, connections: int) -> Drive:
    """Drive ``server`` for ``seconds``, measuring the CPU every party spent meanwhile."""
    def now() -> tuple[float, ...]:
        return (time.perf_counter(), time.process_time(), tree_cpu(server.process.pid), tree_cpu(server.database),
                machine_cpu())

    before = now()
    done, answered = asyncio.run(_drive(server.url, server.key, seconds, connections))
    wall, client, served, database, machine = (end - start for start, end in zip(before, now(), strict=True))
    return Drive(done / wall, len(answered), client / done, served / done, database / done,
                 (client + served + database) / wall, machine / wall)


def measure(sandboxes: list[Row], seconds: float, rounds: int, connections: int,
            database: int | None) -> dict[str, list[Drive]]:
    """Every sandbox row and the bare row driven ``rounds`` times, in turn."""
    drives: dict[str, list[Drive]] = {row.name: [] for row in [*sandboxes, BARE]}
    with tempfile.TemporaryDirectory(prefix="bench-request-path-") as tmp, ExitStack() as stack:
        workdir, servers = Path(tmp), {}
        for row in sandboxes:
            servers[row.name] = stack.enter_context(running(row, workdir, None, database))
        first = servers[sandboxes[0].name]
        document = workdir / "me.json"
        document.write_bytes(httpx.get(first.url + PATH, headers={"X-Api-Key": first.key}).raise_for_status().content)
        servers[BARE.name] = stack.enter_context(running(BARE, workdir, document))
        for _ in range(rounds):
            for row in [*sandboxes, BARE]:
                drives[row.name].append(drive(servers[row.name], seconds, connections))
                if drives[row.name][-1].workers < row.workers:
                    print(f"  note: {row.name}: only {drives[row.name][-1].workers} of {row.workers} workers "
                          "answered in one round")
    return drives


def serve_bare(document: Path, port: int) -> None:
    """``--bare``: one async endpoint returning ``document``, under uvicorn's default settings."""
    import json

    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    body = json.loads(document.read_text())

    async def me(request: Request) -> JSONResponse:
        return JSONResponse(body)

    uvicorn.run(Starlette(routes=[Route(PATH, me)]), host="127.0.0.1", port=port, log_level="warning")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one round per row")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the rows alternate within each")
    parser.add_argument("--connections", type=int, default=16, help="keep-alive connections of the load")
    parser.add_argument("--sqlite-only", action="store_true", help="leave the PostgreSQL rows out")
    parser.add_argument("--row", action="append", default=[], type=Row.parse, metavar="NAME|INIT ARGS|SERVE ARGS",
                        help="another sandbox configuration to measure (repeatable)")
    parser.add_argument("--bare", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:
        serve_bare(args.bare, args.port)
        return 0

    with ExitStack() as stack:
        cluster = None if args.sqlite_only else stack.enter_context(PostgresServer())
        sandboxes = [SANDBOX, *(postgres_rows(cluster) if cluster else []), *args.row]
        drives = measure(sandboxes, args.seconds, args.rounds, args.connections,
                         postmaster(cluster) if cluster else None)
    report(drives, sandboxes, args)
    return 0


def report(drives: dict[str, list[Drive]], sandboxes: list[Row], args: argparse.Namespace) -> None:
    rates = {name: [round(one.rate) for one in row] for name, row in drives.items()}
    bare = rates[BARE.name]
    print(f"request path benchmark  ({os.cpu_count()} CPUs, Python {platform.python_version()})")
    print(f"GET {PATH}: {args.connections} keep-alive connections, {args.rounds} rounds x {args.seconds:g} s "
          f"per row, rows in turn within each round")
    print(f"  {'':34}{'req/s':>8}{'of bare':>9}   {'CPU us/request: client server postgres':>40}"
          f"{'cores':>7}   req/s (cores: ours/machine) per round")
    for row in [*sandboxes, BARE]:
        ratio = statistics.median(mine / theirs for mine, theirs in zip(rates[row.name], bare, strict=True))
        cpu = [statistics.median(getattr(one, part) for one in drives[row.name]) * 1e6
               for part in ("client", "server", "database")]
        busy = statistics.median(one.busy for one in drives[row.name])
        print(f"  {row.name:34}{statistics.median(rates[row.name]):8.0f}{ratio:9.2f}   {'':14}"
              f"{cpu[0]:7.0f}{cpu[1]:7.0f}{cpu[2]:9.0f}   {busy:7.2f}   "
              f"{', '.join(f'{one.rate:.0f} ({one.busy:.1f}/{one.machine:.1f})' for one in drives[row.name])}")
    if POSTGRES_ONE in rates and POSTGRES_TWO in rates:
        one, two = rates[POSTGRES_ONE], rates[POSTGRES_TWO]
        ratios = [b / a for a, b in zip(one, two, strict=True)]
        print(f"  PostgreSQL, 2 workers / 1 worker: {statistics.median(ratios):.2f}x (within each round: "
              f"{', '.join(f'{ratio:.2f}' for ratio in ratios)})")


POSTGRES_ONE, POSTGRES_TWO = "sandbox, PostgreSQL, 1 worker", "sandbox, PostgreSQL, 2 workers"


def postmaster(cluster: PostgresServer) -> int:
    """The pid of the cluster's postmaster, whose backends serve the sandbox rows."""
    return int((cluster.data / "postmaster.pid").read_text().split()[0])


def postgres_rows(cluster: PostgresServer) -> list[Row]:
    """The PostgreSQL rows, each on a fresh database of ``cluster``."""
    one, two = cluster.new_database(), cluster.new_database()
    return [Row(POSTGRES_ONE, ("--db", one), ("--db", one)),
            Row(POSTGRES_TWO, ("--db", two), ("--db", two, "--workers", "2", "--worker-header"))]


if __name__ == "__main__":
    sys.exit(main())
