"""Waits on a database server that stopped answering, cut short by the client.

A frozen server (a stopped VM, a failover, SIGSTOP) has its kernel acknowledge every packet, so
neither keepalives, ``tcp_user_timeout`` nor the server's own timeouts end a wait on it: only the
client can, by shutting the connection's socket, which fails the waiting call at once. One thread
watches every wait of the process (the ledger's, a journal's, the sandbox's engine), and counts only
the time the process runs: one stopped meanwhile (SIGSTOP, a closed lid) was not waiting on the
server, and cutting its healthy connection on waking would call that an outage.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["cut_after", "watch", "unwatch"]

STEP = 0.25
"""Seconds between the watcher's looks; a look later than twice this means the process was stopped."""

_waits: dict[int, list[Any]] = {}
"""id(connection) -> [connection, seconds waited so far, seconds allowed]."""
_lock = threading.Lock()
_watcher: threading.Thread | None = None


def watch(connection: Any, seconds: float) -> None:
    """Start counting a wait on ``connection`` (a DB-API connection with ``fileno()``): cut it once
    the process has run ``seconds`` without ``unwatch``."""
    global _watcher
    with _lock:
        _waits[id(connection)] = [connection, 0.0, seconds]
        if _watcher is None or not _watcher.is_alive():
            _watcher = threading.Thread(target=_watch, name="imagekit-db-watchdog", daemon=True)
            _watcher.start()


def unwatch(connection: Any) -> None:
    """The wait on ``connection`` is over (answered, or failed)."""
    with _lock:
        _waits.pop(id(connection), None)


@contextmanager
def cut_after(connection: Any, seconds: float) -> Iterator[None]:
    """Cut ``connection`` if what runs inside waits on it longer than ``seconds`` of running time."""
    watch(connection, seconds)
    try:
        yield
    finally:
        unwatch(connection)


def _watch() -> None:
    last = time.monotonic()
    while True:
        time.sleep(STEP)
        now = time.monotonic()
        ran, last = min(now - last, 2 * STEP), now  # a look that came late: the process was stopped
        with _lock:
            expired = []
            for key, wait in _waits.items():
                wait[1] += ran
                if wait[1] >= wait[2]:
                    expired.append(key)
            cut = [_waits.pop(key)[0] for key in expired]
        for connection in cut:
            _cut(connection)


def _cut(connection: Any) -> None:
    """End a connection whose server stopped answering: the call waiting on it fails at once."""
    try:
        with socket.socket(fileno=os.dup(connection.fileno())) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError, AttributeError):
        pass  # closed meanwhile
