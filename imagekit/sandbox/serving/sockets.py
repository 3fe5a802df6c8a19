"""Listening sockets for the sandbox's servers: one, or one per worker process on a shared port."""

from __future__ import annotations

import socket
import sys

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
