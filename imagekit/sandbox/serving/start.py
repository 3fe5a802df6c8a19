"""The one start sequence of a served sandbox, for ``imagekit sandbox serve`` and ``EmbeddedSandbox``:
claim the data folder before anything is written (a folder another process serves stays theirs),
listen, then seed a fresh database (and quiet the log lines of connections clients drop); on any failure the sandbox is closed and the error raised, with
nothing seeded (what the caller made of the folder, it removes)."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..domain.faults import quiet_dropped_connections
from ..domain.seed import initialize, is_initialized
from .sockets import listening_sockets

if TYPE_CHECKING:
    from ..service import Sandbox

__all__ = ["Started", "start"]


@dataclass
class Started:
    """A sandbox ready to serve: its sockets, and what the start did to its folder."""

    sandbox: Sandbox
    sockets: list[socket.socket]
    seeded: bool
    """This start seeded the database (the folder was new)."""
    demo_key: str | None
    """A fresh API key of the demo user, when asked for or when this start seeded the database."""


def start(sandbox: Sandbox, host: str, port: int, workers: int = 1, demo_key: bool = False) -> Started:
    """Claim ``sandbox``'s folder, listen on ``host:port`` (``workers`` sockets), seed a new database;
    ``demo_key``: issue the demo user a key even when it was seeded before."""
    try:
        sandbox.claim()
        try:
            sockets = listening_sockets(host, port, workers)
        except OSError as exc:
            raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        try:
            seeded = not is_initialized(sandbox)
            key = initialize(sandbox) if seeded or demo_key else None
        except BaseException:
            for each in sockets:
                each.close()
            raise
    except BaseException:
        sandbox.close()
        raise
    quiet_dropped_connections()
    return Started(sandbox, sockets, seeded, key)
