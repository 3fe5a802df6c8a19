"""Every file the toolkit writes says how its image was made (batch outputs, ``Image.save``, exports).

- ``record``: ``Provenance``, the request (prompt, style, ratio, count; an edit's parent and
  operation), image and request ids, credits and the service's base URL (never a key);
- ``xmp``: the record as RDF, for XMP packets and SVG metadata;
- ``embed``: writing it into PNG (text chunks), JPEG and WebP (XMP) and SVG (``<metadata>``) files
  as they are copied, the pixels untouched;
- ``read``: ``read_provenance``, with Pillow's and an XML parser's readers;
- ``trust``: a record read back, held to what the toolkit writes.

It sends nothing: ``imagekit.reproduce`` (``workflows/reproduce.py``) re-sends a file's request.
"""

from .read import read_provenance
from .record import Provenance

__all__ = ["Provenance", "read_provenance"]
