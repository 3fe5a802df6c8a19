"""A procedural image generator behind the sandbox's :class:`~..base.GenerationEngine` contract.

Pipeline: :mod:`.lexicon` reads the prompt, :mod:`.palette` picks colours, :mod:`.scene` composes
layers (:mod:`.backdrop`, :mod:`.subjects`, :mod:`.portrait`) or :mod:`.reference` varies a
reference picture, then a renderer from :mod:`.looks` applies the style. All randomness comes
from :mod:`.seeding`.
"""

from .engine import MAX_SIDE, MIN_SIDE, ProceduralEngine
from .looks import DEFAULT_LOOK, LOOKS

__all__ = ["DEFAULT_LOOK", "LOOKS", "MAX_SIDE", "MIN_SIDE", "ProceduralEngine"]
