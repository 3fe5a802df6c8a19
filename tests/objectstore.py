"""An S3-compatible server on loopback for tests: moto's standalone server (as s3fs's own tests use),
one process for the test run, each test in a bucket of its own."""

from __future__ import annotations

import re
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
    """``moto_server`` on 127.0.0.1, a port of its own choosing; ``endpoint`` once started."""

    def __init__(self) -> None:
        self.endpoint = ""
        self._log = Path(tempfile.mkdtemp(prefix="moto-")) / "server.log"
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> MotoServer:
        command = [str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", "0"]
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

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=30)

    def bucket(self) -> str:
        """A fresh bucket name (the store makes the bucket when it is first written)."""
        return f"test-{uuid.uuid4().hex[:12]}"
