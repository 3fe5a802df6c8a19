"""Contracts shared by the sandbox's engines: arrays in, arrays out, a cancellation check.

Images cross engine boundaries as NumPy arrays: ``uint8`` RGB of shape (H, W, 3), or RGBA
(H, W, 4) where an engine says so. Masks are ``bool`` arrays of shape (H, W). Every long-running
engine call takes ``check``: a no-argument callable that raises
:class:`imagekit.sandbox.interface.errors.Cancelled` once the job was cancelled; engines call it inside
their loops (tiles, pyramid levels, iterations), not only between steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

CheckFn = Callable[[], None]
RGB = tuple[int, int, int]


def never_cancelled() -> None:
    """A ``check`` for callers that cannot be cancelled (CLI seeding, benchmarks)."""


@dataclass(frozen=True)
class GenerationRequest:
    """Everything an engine needs to draw one image; same request gives the same pixels."""

    prompt: str
    width: int
    height: int
    seed: int
    style: str | None = None
    """A style look key (one of the engine's ``looks()``), or None."""
    reference: np.ndarray | None = None
    """Reference image (H, W, 3) uint8 RGB for reference-image mode; the result derives from it."""
    palette: Sequence[RGB] | None = None
    """Colours a collection asks the image to be drawn with (collection mode)."""
    negative_prompt: str = ""
    """Words the image should avoid (colours or motifs named here are suppressed)."""


class GenerationEngine(Protocol):
    """What the sandbox asks of an image generator; a diffusion model could implement it."""

    name: str

    def looks(self) -> dict[str, str]:
        """Style look keys this engine draws, mapped to a human label (e.g. ``"watercolor": "Watercolor"``)."""
        ...

    def generate(self, request: GenerationRequest, check: CheckFn = never_cancelled) -> np.ndarray:
        """Draw one image: (height, width, 3) uint8 RGB, deterministic for equal requests."""
        ...


@runtime_checkable
class SubjectEngine(GenerationEngine, Protocol):
    """An engine that can also say where its image's subject is. The sandbox keeps that mask with
    the image, so that removing the background of its own images is exact; other images (uploads,
    an engine without ``draw``) go through the classical segmentation."""

    def draw(self, request: GenerationRequest,
             check: CheckFn = never_cancelled) -> tuple[np.ndarray, np.ndarray | None]:
        """The image ``generate`` draws, and a bool (height, width) mask of its subject, or None."""
        ...
