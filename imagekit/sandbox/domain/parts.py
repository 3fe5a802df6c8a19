"""What the service's rules reach in a running sandbox: the type of their ``sandbox`` argument.

The running sandbox (``imagekit.sandbox.service.Sandbox``) is built above this layer, from the parts
below it; a rule names it by this Protocol so that it is typed without importing upward.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from ..engines.base import GenerationEngine
from ..settings import SandboxSettings
from ..store.db import Database
from ..store.disk import DiskSpace
from ..store.files import ImageStore
from ..store.tables import Model, Plan
from .clock import Clock
from .faults import Faults
from .jobs import JobRegistry
from .rendering import Renderer
from .slots import ConcurrencyGate


class Parts(Protocol):
    """A running sandbox as the rules see it: its settings, database, clock, files and running work."""

    settings: SandboxSettings
    db: Database
    clock: Clock
    disk: DiskSpace
    store: ImageStore
    renderer: Renderer
    gate: ConcurrencyGate
    jobs: JobRegistry
    faults: Faults
    executor: ThreadPoolExecutor

    @property
    def engine(self) -> GenerationEngine:
        """The built-in engine (seeding, edits that draw content)."""

    def engine_for(self, model: Model) -> GenerationEngine:
        """The engine that draws ``model``'s images."""

    def plan(self, plan_id: int) -> Plan:
        """A plan with its costs and models."""
