"""The eight edits as pure functions on arrays, plus the codecs and limits they share.

Each long-running function takes ``check`` and calls it inside its loops, so a cancelled edit
stops promptly (see ``engines/base.py``).
"""

from .codecs import MAX_OUTPUT_SIDE, MAX_UPLOAD_BYTES, MAX_UPLOAD_PIXELS, check_output_size, decode_image, decode_mask, encode_image
from .inpaint import clean_up, fill
from .outpaint import outpaint
from .outpaint import validate as validate_outpaint
from .reimagine import reimagine
from .segment import remove_background
from .upscale import enhance, upsize
from .vectorize import VectorResult, vectorize

__all__ = [
    "MAX_OUTPUT_SIDE", "MAX_UPLOAD_BYTES", "MAX_UPLOAD_PIXELS", "VectorResult", "check_output_size", "clean_up",
    "decode_image", "decode_mask", "encode_image", "enhance", "fill", "outpaint", "reimagine", "remove_background",
    "upsize", "validate_outpaint", "vectorize",
]
