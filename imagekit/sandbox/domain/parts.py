"""What each of the service's rules reaches in a running sandbox: the types of their ``sandbox`` argument.

The running sandbox (``imagekit.sandbox.service.Sandbox``) is built above this layer, from the parts
below it. A rule names only the parts it uses, by one of these Protocols: it is typed without
importing upward, and mypy refuses a rule that reaches for a part its Protocol does not name.
"""

from __future__ import annotations

from typing import Protocol

from ..engines.base import GenerationEngine
from ..settings import SandboxSettings
from ..store.db import Database
from ..store.disk import DiskSpace
from ..store.files import ImageStore
from ..store.tables import Model
from .clock import Clock
from .faults import Faults
from .jobs import JobRegistry
from .slots import ConcurrencyGate


class Seeding(Protocol):
    """What seeding reaches: settings, database, clock, files and the built-in engine's drawings."""

    settings: SandboxSettings
    db: Database
    clock: Clock
    store: ImageStore

    @property
    def engine(self) -> GenerationEngine:
        """The built-in engine (style thumbnails, collections)."""


class Drawing(Protocol):
    """What a generation reaches: settings, database, clock, files, disk space, the user's slots, the
    injected faults and the engine of each model."""

    settings: SandboxSettings
    db: Database
    clock: Clock
    disk: DiskSpace
    store: ImageStore
    gate: ConcurrencyGate
    faults: Faults

    def engine_for(self, model: Model) -> GenerationEngine:
        """The engine that draws ``model``'s images."""


class Editing(Protocol):
    """What an edit reaches: settings, database, clock, files, disk space, the user's slots and the
    running jobs (cancellation)."""

    settings: SandboxSettings
    db: Database
    clock: Clock
    disk: DiskSpace
    store: ImageStore
    gate: ConcurrencyGate
    jobs: JobRegistry
