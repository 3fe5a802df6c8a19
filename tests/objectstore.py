"""An S3-compatible server on loopback for tests: moto's standalone server (as s3fs's own tests use),
one process for the test run, each test in a bucket of its own."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import TracebackType

import httpx

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


class MotoServer:
    """``moto_server`` on 127.0.0.1; ``endpoint`` once started. It can be stopped and started again
    on the same address (an object store going away and coming back, empty: moto keeps nothing)."""

    def __init__(self) -> None:
        self.endpoint = ""
        self._log = Path(tempfile.mkdtemp(prefix="moto-")) / "server.log"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> MotoServer:
        port = self.endpoint.rsplit(":", 1)[-1] if self.endpoint else "0"  # the first start picks a port
        command = [str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", port]
        with open(self._log, "wb") as log:  # a file, not a pipe: the request log never fills a buffer
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not (found := re.search(r"Running on (http://127\.0\.0\.1:\d+)", self._log.read_text(errors="replace"))):
            assert self._process.poll() is None, self._log.read_text()
            assert time.monotonic() < deadline, "moto_server did not start within 60 s"
            time.sleep(0.05)
        self.endpoint = found.group(1)
        httpx.get(self.endpoint, timeout=10).raise_for_status()
        return self

    def stop(self, kill: bool = False) -> None:
        """Stop the server (``kill``: SIGKILL, connections in flight cut with no answer)."""
        if self._process is not None:
            self._process.kill() if kill else self._process.terminate()
            self._process.wait(timeout=30)
            self._process = None

    def __enter__(self) -> MotoServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()
        shutil.rmtree(self._log.parent, ignore_errors=True)  # its log's folder: nothing of it stays in /tmp

    def bucket(self) -> str:
        """A fresh, empty bucket (made here, as a user makes theirs: imagekit never creates buckets)."""
        return self.make_bucket(f"test-{uuid.uuid4().hex[:12]}")

    def make_bucket(self, name: str) -> str:
        httpx.put(f"{self.endpoint}/{name}", timeout=30).raise_for_status()
        return name
