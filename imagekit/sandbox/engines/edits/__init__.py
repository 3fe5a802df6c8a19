"""The eight edits as pure functions on arrays, plus the codecs and limits they share.

Images are uint8 RGB (H, W, 3) arrays and masks bool (H, W). Each long-running function takes
``check`` and calls it inside its loops (tiles, pyramid levels, iterations), so a cancelled edit
stops promptly (see ``engines/base.py``). Input errors raise ``SandboxError`` with a 4xx status.

Modules: ``codecs`` (bytes, limits), ``upscale`` (enhance, upsize), ``outpaint``, ``inpaint``
(fill, cleanUp), ``segment`` (removeBg), ``vectorize``, ``reimagine``; shared helpers live in
``masks``, ``filters``, ``synthesis`` (coarse-to-fine hole filling) and ``texture`` (seeded grain).
"""

from .codecs import (
    MAX_OUTPUT_SIDE,
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_PIXELS,
    OUTPUT_TYPES,
    check_output_size,
    decode_image,
    decode_mask,
    encode_image,
)
from .inpaint import clean_up, cleanup_radius, fill
from .outpaint import outpaint, validate as validate_outpaint
from .reimagine import STRENGTHS, reimagine
from .segment import remove_background
from .upscale import ENHANCE_FACTORS, enhance, upsize
from .vectorize import VectorResult, vectorize

__all__ = [
    "ENHANCE_FACTORS",
    "MAX_OUTPUT_SIDE",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_PIXELS",
    "OUTPUT_TYPES",
    "STRENGTHS",
    "VectorResult",
    "check_output_size",
    "clean_up",
    "cleanup_radius",
    "decode_image",
    "decode_mask",
    "encode_image",
    "enhance",
    "fill",
    "outpaint",
    "reimagine",
    "remove_background",
    "upsize",
    "validate_outpaint",
    "vectorize",
]
