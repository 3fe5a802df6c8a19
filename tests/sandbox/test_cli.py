"""The command-line contract: init and user add print the key last; serve answers on its port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest


def imagekit(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "imagekit.cli", *args], capture_output=True, text=True,
                          timeout=120, check=True, **kwargs)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cli")


def test_init_then_user_add_then_serve_with_latency(data_dir):
    demo_key = imagekit("sandbox", "init", "--data", str(data_dir)).stdout.strip().splitlines()[-1]
    assert demo_key.startswith("iks_")
    pro_key = imagekit("sandbox", "user", "add", "--data", str(data_dir), "--email", "p@x.io",
                       "--plan", "pro").stdout.strip().splitlines()[-1]
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "imagekit.cli", "sandbox", "serve", "--data", str(data_dir),
                               "--host", "127.0.0.1", "--port", str(port), "--latency", "0.5",
                               "--log-level", "warning"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.stdout.read().decode()
            try:
                if httpx.get(url + "/openapi.json").status_code == 200:
                    break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        with httpx.Client(base_url=url, timeout=30) as client:
            assert client.get("/api/users/me", headers={"X-Api-Key": demo_key}).json()["email"] == "demo@imagekit.local"
            me = client.get("/api/users/me", headers={"X-Api-Key": pro_key}).json()
            assert me["Plan"]["grade"] == "pro"
            style = client.get("/api/users/me/styles", headers={"X-Api-Key": pro_key}).json()[0]["styleId"]
            started = time.monotonic()
            made = client.post("/api/images/create", headers={"X-Api-Key": pro_key},
                               json={"prompt": "slow", "styleId": style})
            assert made.status_code == 200 and time.monotonic() - started >= 0.5
    finally:
        server.terminate()
        server.wait(30)


def test_user_add_refuses_unknown_plan_and_uninitialised_dir(data_dir, tmp_path):
    for args in (["--data", str(data_dir), "--email", "q@x.io", "--plan", "platinum"],
                 ["--data", str(tmp_path / "empty"), "--email", "q@x.io"]):
        result = subprocess.run([sys.executable, "-m", "imagekit.cli", "sandbox", "user", "add", *args],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 2 and "error:" in result.stderr
