"""Engines behind the sandbox: generation (pluggable), edits, captions, prompt enhancement.

A generation engine is found by the name a Model row carries: ``procedural`` is built in; any
installed package may add one under the entry-point group ``imagekit.engines`` (for example a
diffusion model implementing :class:`~imagekit.sandbox.engines.base.GenerationEngine`).
"""

from __future__ import annotations

from importlib.metadata import entry_points

from .base import GenerationEngine


def load_engine(name: str) -> GenerationEngine:
    """The generation engine registered under ``name``."""
    if name == "procedural":
        from .generate import ProceduralEngine

        return ProceduralEngine()
    for entry in entry_points(group="imagekit.engines"):
        if entry.name == name:
            return entry.load()()
    raise LookupError(f"No generation engine named {name!r} is installed.")
