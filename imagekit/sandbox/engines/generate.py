"""The sandbox's image generator: the procedural engine and its style looks.

This is the import point the sandbox uses; the implementation lives in :mod:`.procedural`.
Swap in another :class:`~.base.GenerationEngine` (a diffusion model, say) without touching callers.
"""

from .procedural import DEFAULT_LOOK, LOOKS, ProceduralEngine

__all__ = ["DEFAULT_LOOK", "LOOKS", "ProceduralEngine"]
