"""``imagekit sandbox serve --workers N``: N processes serve one port and share one database, which
holds everything they must agree on (see :mod:`.jobs` and ``Sandbox.load_shared``).

Each worker accepts on a listening socket of its own in one ``SO_REUSEPORT`` group, so the kernel
spreads connections over them (see ``listening_sockets``; one shared socket where that is missing).
The parent keeps the data folder claimed and every socket open, settled the earlier run's work once
before starting the workers, and replaces a worker that dies or stops answering with one on the same
socket: connections that arrive meanwhile wait in that socket's queue. Each worker opens its own
sandbox over the same settings, handed down in an environment variable.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI

from ..settings import SandboxSettings

if TYPE_CHECKING:
    import uvicorn

SETTINGS_VARIABLE = "IMAGEKIT_SANDBOX_WORKER_SETTINGS"
_log = logging.getLogger("uvicorn.error")


def settings_to_json(settings: SandboxSettings) -> str:
    fields = dataclasses.asdict(settings)
    fields["data_dir"] = str(settings.data_dir)
    return json.dumps(fields)


def settings_from_json(text: str) -> SandboxSettings:
    fields = json.loads(text)
    fields["data_dir"] = Path(fields["data_dir"])
    fields["allowed_hosts"] = tuple(fields["allowed_hosts"])
    return SandboxSettings(**fields)


def worker_app() -> FastAPI:
    """The app of one worker (uvicorn's factory, called in each worker process)."""
    from ..api.app import create_app
    from ..api.middleware import WorkerHeader
    from ..domain.faults import quiet_dropped_connections
    from ..service import Sandbox

    settings = settings_from_json(os.environ[SETTINGS_VARIABLE])
    quiet_dropped_connections()
    app = create_app(settings, Sandbox(settings, upgrade=False), owner=False)
    if settings.worker_header:
        app.add_middleware(WorkerHeader)
    return app


def serve_workers(settings: SandboxSettings, sockets: list[socket.socket], workers: int, log_level: str) -> None:
    """Serve ``settings`` from ``workers`` processes until stopped (SIGINT or SIGTERM): worker ``i``
    accepts on ``sockets[i]`` (on ``sockets[0]`` when there is one socket for all)."""
    import uvicorn

    os.environ[SETTINGS_VARIABLE] = settings_to_json(settings)
    # The sockets say IPPROTO_TCP (see listening_socket), so each worker's event loop turns Nagle off
    # on the connections it accepts: without it a keep-alive response waits ~40 ms for a delayed ACK.
    config = uvicorn.Config(f"{__name__}:worker_app", factory=True, workers=workers, log_level=log_level,
                            access_log=log_level == "debug", timeout_keep_alive=30)
    Supervisor(config, [sockets[index % len(sockets)] for index in range(workers)]).run()


class Supervisor:
    """One uvicorn worker process per socket, each replaced on the same socket when it dies or stops
    answering uvicorn's health check; all stopped on SIGINT or SIGTERM.

    uvicorn's own ``Multiprocess`` hands every worker the same sockets, so it cannot keep a socket per
    worker; its ``Process`` (the worker with its health-check pipe) is used as it is."""

    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket]) -> None:
        self.config, self.sockets = config, sockets
        self.should_exit = threading.Event()

    def run(self) -> None:
        from uvicorn.config import STARTUP_FAILURE
        from uvicorn.supervisors.multiprocess import Process

        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: self.should_exit.set())
        processes = [Process(self.config, [sock]) for sock in self.sockets]
        for process in processes:
            process.start()
        while not self.should_exit.wait(0.5):
            for index, process in enumerate(processes):
                if self.should_exit.is_set() or process.is_alive(self.config.timeout_worker_healthcheck):
                    continue
                process.kill()  # dead, or hung: it no longer answers the health check
                process.join()
                if process.exitcode == STARTUP_FAILURE:  # the app cannot start: a new one would fail alike
                    _log.error("Worker [%s] failed to start; stopping.", process.pid)
                    self.should_exit.set()
                    break
                _log.info("Worker [%s] died; starting another on its socket.", process.pid)
                processes[index] = Process(self.config, [self.sockets[index]])
                processes[index].start()
        for process in processes:
            process.terminate()
        for process in processes:
            process.join()
