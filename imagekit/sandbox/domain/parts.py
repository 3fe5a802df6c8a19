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


class _Stored(Protocol):
    """What every rule reaches: settings, database, clock and the image files."""

    settings: SandboxSettings
    db: Database
    clock: Clock
    store: ImageStore


class Seeding(_Stored, Protocol):
    """What seeding reaches: the stored parts and the built-in engine."""

    @property
    def engine(self) -> GenerationEngine:
        """The built-in engine (style thumbnails, collections)."""


class _Working(_Stored, Protocol):
    """What a request's work reaches: the stored parts, disk space and the user's slots."""

    disk: DiskSpace
    gate: ConcurrencyGate


class Drawing(_Working, Protocol):
    """What a generation reaches: a request's parts, the injected faults and each model's engine."""

    faults: Faults

    def engine_for(self, model: Model) -> GenerationEngine:
        """The engine that draws ``model``'s images."""


class Editing(_Working, Protocol):
    """What an edit reaches: a request's parts and the running jobs (cancellation)."""

    jobs: JobRegistry
