"""The embedded sandbox's own server: what it listens on and how it answers."""

from __future__ import annotations

import socket

from imagekit.sandbox import EmbeddedSandbox


def test_connections_are_accepted_with_nagle_off(tmp_path):
    # asyncio sets TCP_NODELAY only on sockets whose proto says TCP; with Nagle on, every response
    # written in two parts (head, then body) stalled ~40 ms on the client's delayed ACK.
    with EmbeddedSandbox(tmp_path) as box:
        listening = box._server.servers[0].sockets[0]
        assert listening.proto == socket.IPPROTO_TCP
        assert box.url.startswith("http://127.0.0.1:")
