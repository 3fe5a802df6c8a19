"""A web server in a subprocess on a loopback port (JupyterLab, marimo), started and waited for
through its health URL, stopped at the end, with its log kept for the failure message."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx

from tests.helpers import TLS


class Served:
    """``argv`` run with ``env``, answering on ``url``; ``health`` is the path that says it is up."""

    name = "the server"
    health = "/"

    def __init__(self, argv: list[str], env: dict[str, str], url: str, log: Path) -> None:
        self._argv, self._env, self.url, self.log = argv, env, url, log
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 300.0) -> None:
        """Start it and wait until it answers: patiently, since on a loaded machine (two cores, a
        whole suite beside it) JupyterLab has taken over 60 s to link its extensions and listen."""
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(self._argv, env=self._env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{self.tail()}")
            try:
                if httpx.get(f"{self.url}{self.health}", timeout=2, verify=TLS).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} did not answer within {timeout} s:\n{self.tail()}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
