"""``imagekit sandbox serve --workers N``: N processes accept on one listening socket and share one
database, which holds everything they must agree on (see :mod:`.jobs` and ``Sandbox.refresh_shared``).

The parent keeps the data folder claimed, settled the earlier run's work once before starting the
workers, and supervises them with uvicorn's process manager (a worker that dies is replaced).
Each worker opens its own sandbox over the same settings, handed down in an environment variable.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
from pathlib import Path

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .settings import SandboxSettings

SETTINGS_VARIABLE = "IMAGEKIT_SANDBOX_WORKER_SETTINGS"


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
    from .app import create_app
    from .faults import quiet_dropped_connections
    from .service import Sandbox

    settings = settings_from_json(os.environ[SETTINGS_VARIABLE])
    quiet_dropped_connections()
    app = create_app(settings, Sandbox(settings, upgrade=False), owner=False)
    if settings.worker_header:
        app.add_middleware(WorkerHeader)
    return app


class WorkerHeader:
    """Adds ``X-Sandbox-Worker: <pid>`` to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.header = (b"x-sandbox-worker", str(os.getpid()).encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def named(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), self.header]
            await send(message)

        await self.app(scope, receive, named if scope["type"] == "http" else send)


def serve_workers(settings: SandboxSettings, sock: socket.socket, workers: int, log_level: str) -> None:
    """Serve ``settings`` from ``workers`` processes on ``sock`` until stopped (SIGINT or SIGTERM)."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    os.environ[SETTINGS_VARIABLE] = settings_to_json(settings)
    # The socket says IPPROTO_TCP (see listening_socket), so each worker's event loop turns Nagle off
    # on the connections it accepts: without it a keep-alive response waits ~40 ms for a delayed ACK.
    config = uvicorn.Config(f"{__name__}:worker_app", factory=True, workers=workers, log_level=log_level,
                            access_log=log_level == "debug", timeout_keep_alive=30)
    Multiprocess(config, sockets=[sock]).run()
