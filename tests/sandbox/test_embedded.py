"""The embedded sandbox's own server: what it listens on and how it answers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

import imagekit
from imagekit.sandbox import EmbeddedSandbox
from imagekit.sandbox.service import DataDirInUse


def test_connections_are_accepted_with_nagle_off(tmp_path):
    # asyncio sets TCP_NODELAY only on sockets whose proto says TCP; with Nagle on, every response
    # written in two parts (head, then body) stalled ~40 ms on the client's delayed ACK.
    with EmbeddedSandbox(tmp_path) as box:
        listening = box._server.servers[0].sockets[0]
        assert listening.proto == socket.IPPROTO_TCP
        assert box.url.startswith("http://127.0.0.1:")


def test_a_served_folder_is_refused_to_a_second_server_and_its_work_survives(tmp_path):
    with EmbeddedSandbox(tmp_path, latency=0.5, base_size=256) as first:
        with imagekit.Client(first.url, first.api_key) as ik:
            pending = ik.images.create("a lighthouse", style=ik.styles()[0], is_async=True).images[0].id
            with pytest.raises(DataDirInUse, match=rf"served by another process \(pid {os.getpid()}\)"):
                EmbeddedSandbox(tmp_path).start()
            assert ik.images.wait(pending).generation_status == "COMPLETED"  # not failed as a leftover
    with EmbeddedSandbox(tmp_path) as again:  # the lock went with the first server
        assert again.url


def test_serve_on_a_served_folder_exits_with_the_reason(tmp_path):
    with EmbeddedSandbox(tmp_path):
        out = subprocess.run([sys.executable, "-m", "imagekit.cli", "sandbox", "serve", "--data", str(tmp_path),
                              "--port", "0"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "served by another process" in out.stderr


def test_connect_uses_a_private_sandbox_while_another_process_serves_imagekit_home(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("IMAGEKIT_")} | {"IMAGEKIT_HOME": str(tmp_path)}
    code = "import imagekit; ik = imagekit.connect(); print(ik.me().email, ik.config.base_url)"
    with EmbeddedSandbox(tmp_path / "sandbox") as shared:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "uses a temporary sandbox of its own" in out.stderr
    assert out.stdout.split()[1] != shared.url
