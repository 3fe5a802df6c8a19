"""``serve --workers N``: a listening socket per worker, so the kernel spreads connections over the
workers, and a worker that dies is replaced on its socket without a connection being refused.

The spreading is Linux's (``SO_REUSEPORT``), and the suite runs on Linux. Elsewhere the workers share
one socket, and these tests fail, as they should: the feature is not there."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from imagekit.sandbox.serving.sockets import listening_sockets

from . import Served, imagekit, serving


@pytest.fixture(scope="module")
def two_workers(postgres, tmp_path_factory) -> Iterator[Served]:
    url, folder = postgres.new_database(), tmp_path_factory.mktemp("worker-sockets")
    imagekit("sandbox", "init", "--data", str(folder), "--db", url)
    with serving(folder, "--db", url, "--workers", "2", "--worker-header") as served:
        yield served


def answering_workers(served: Served, connections: int = 16) -> list[str]:
    """The worker that answered on each of ``connections`` connections, all opened before any request
    (as a client opening its pool at once): a shared socket's first worker to wake takes them all."""
    host, port = served.url.removeprefix("http://").split(":")
    opened = [http.client.HTTPConnection(host, int(port), timeout=60) for _ in range(connections)]
    try:
        for connection in opened:
            connection.connect()
        workers = []
        for connection in opened:
            connection.request("GET", "/api/users/me")
            answer = connection.getresponse()
            answer.read()
            assert answer.status == 403  # no key: answered by the app, not refused by the server
            workers.append(answer.headers["X-Sandbox-Worker"])
        return workers
    finally:
        for connection in opened:
            connection.close()


@pytest.mark.slow
def test_connections_opened_at_once_are_spread_over_both_workers(two_workers):
    for _ in range(2):
        assert len(set(answering_workers(two_workers))) == 2


@pytest.mark.slow(10)
def test_a_worker_that_dies_is_replaced_on_its_socket(two_workers):
    for _ in range(2):  # kill one, and then the other of the two that serve afterwards
        before = set(answering_workers(two_workers))
        assert len(before) == 2
        victim = int(min(before))
        os.kill(victim, signal.SIGKILL)
        wait_gone(victim)
        seen: set[str] = set()
        deadline = time.monotonic() + 60
        while len(seen) < 2:  # meanwhile, connections the kernel gives the dead worker's socket wait there
            assert time.monotonic() < deadline, f"no worker replaced {victim}: {seen}"
            seen |= set(answering_workers(two_workers, 4))
        assert str(victim) not in seen and len(seen) == 2 and seen & before == before - {str(victim)}


def wait_gone(pid: int) -> None:
    """Until ``pid`` runs no more (a zombie until its parent reaps it): no event tells another process."""
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists() and "\nState:\tZ" not in _status(pid):
        assert time.monotonic() < deadline, f"{pid} still runs"
        time.sleep(0.01)


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ""


def test_the_group_binds_the_port_that_0_picked_and_a_taken_port_is_refused():
    group = listening_sockets("127.0.0.1", 0, 3)
    try:
        assert len({sock.fileno() for sock in group}) == 3
        assert len({sock.getsockname() for sock in group}) == 1
        # the port is taken, even for a group that would also say SO_REUSEPORT
        with pytest.raises(OSError):
            listening_sockets("127.0.0.1", group[0].getsockname()[1], 2)
    finally:
        for sock in group:
            sock.close()
    with socket.socket() as plain:
        plain.bind(("127.0.0.1", 0))
        plain.listen()
        with pytest.raises(OSError):
            listening_sockets("127.0.0.1", plain.getsockname()[1], 2)


def test_serve_with_workers_on_a_busy_port_fails_before_serving(postgres, tmp_path):
    url = postgres.new_database()
    imagekit("sandbox", "init", "--data", str(tmp_path), "--db", url)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = imagekit("sandbox", "serve", "--data", str(tmp_path), "--db", url, "--workers", "2",
                          "--port", str(port), check=False)
    assert result.returncode == 2 and f"127.0.0.1:{port}" in result.stderr and "in use" in result.stderr
    assert "Serving" not in result.stdout

