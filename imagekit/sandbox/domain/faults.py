"""Fault injection for testing clients: latency, 503s, 429s with Retry-After, dropped connections.

Faults apply to ``/api/`` paths only, as an ASGI middleware in front of the whole app. A dropped
connection starts a response and then aborts it, so the client sees the connection die with no
usable answer. ``drop_phase="after"`` runs (and charges) the operation first: the case a client
must never blindly retry.
"""

from __future__ import annotations

import json
import logging
import random
import threading
from dataclasses import asdict, dataclass
from typing import Literal

from ..store.db import Database
from ..store.tables import State

FAULTS_KEY = "faults"


@dataclass(frozen=True)
class FaultConfig:
    rate_503: float = 0.0
    rate_429: float = 0.0
    retry_after: float = 1.0
    drop_rate: float = 0.0
    drop_phase: Literal["before", "after"] = "before"
    latency: float = 0.0
    fail_generation_rate: float = 0.0
    seed: int | None = None

    def as_dict(self) -> dict:
        return asdict(self)


class Faults:
    """The current fault configuration and its random source (seeded for repeatable runs).

    The configuration is kept in the database, so every worker of a shared database applies it;
    each worker draws from its own source, seeded alike."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._use(FaultConfig())

    def set(self, config: FaultConfig) -> None:
        with self._db.write() as session:
            session.merge(State(key=FAULTS_KEY, value=json.dumps(config.as_dict())))
        self._use(config)

    def load(self, kept: str | None) -> None:
        """Take the configuration as the database keeps it (another worker may have changed it)."""
        config = FaultConfig(**json.loads(kept)) if kept else FaultConfig()
        if config != self.config:
            self._use(config)

    def _use(self, config: FaultConfig) -> None:
        with self._lock:
            self.config = config
            self._rng = random.Random(config.seed)

    def roll(self, rate: float) -> bool:
        if rate <= 0:
            return False
        with self._lock:
            return self._rng.random() < rate


class InjectedFailure(Exception):
    """A generation failed on purpose (``fail_generation_rate``): its image ends FAILED with ``message``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class DroppedConnection(Exception):
    """Raised after a response has started, so the server closes the connection mid-response."""


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], DroppedConnection))


def quiet_dropped_connections() -> None:
    """Keep deliberate drops out of the server's error log."""
    logging.getLogger("uvicorn.error").addFilter(_QuietDrops())
