"""A real webhook receiver on loopback for the alert tests: it records every POST, can answer the
first ones 503, and can hold its answers until told to go on."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """``with Receiver(fail_first=2) as hook:`` an HTTP server on 127.0.0.1, port 0; ``hook.url``
    takes alerts, ``hook.attempts`` counts every POST and ``hook.received`` holds the bodies answered 2xx."""

    def __init__(self, fail_first: int = 0, hold: bool = False) -> None:
        self.fail_first, self.attempts = fail_first, 0
        self.received: list[dict[str, Any]] = []
        self.released = threading.Event()
        if not hold:
            self.released.set()
        self.arrived = threading.Event()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                receiver.arrived.set()
                receiver.released.wait(60)
                with receiver._lock:
                    receiver.attempts += 1
                    failing = receiver.attempts <= receiver.fail_first
                    if not failing:
                        receiver.received.append(body)
                self.send_response(503 if failing else 204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/alerts?token=t"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()
