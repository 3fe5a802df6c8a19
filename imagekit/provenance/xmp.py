"""Provenance as RDF/XMP: one ``rdf:Description`` whose ``imagekit:`` properties are the record's
text fields. JPEG and WebP carry it in an XMP packet, SVG inside its ``<metadata>`` element."""

from __future__ import annotations

from collections.abc import Mapping
from xml.etree import ElementTree
from xml.sax.saxutils import escape

__all__ = ["NAMESPACE", "RDF", "rdf", "packet", "fields_in"]

NAMESPACE = "urn:imagekit:provenance:1:"
"""The namespace of the record's properties (``imagekit:prompt``...)."""
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
_ATTRIBUTE = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}  # kept through attribute normalisation


def rdf(values: Mapping[str, str]) -> str:
    """An ``rdf:RDF`` element describing the file with ``values``."""
    properties = "".join(f'\n    imagekit:{name}="{escape(text, _ATTRIBUTE)}"' for name, text in values.items())
    return (f'<rdf:RDF xmlns:rdf="{RDF}">\n  <rdf:Description rdf:about="" xmlns:imagekit="{NAMESPACE}"'
            f"{properties}/>\n</rdf:RDF>")


def packet(values: Mapping[str, str]) -> bytes:
    """An XMP packet (UTF-8) holding ``rdf(values)``."""
    return ('<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n<x:xmpmeta xmlns:x="adobe:ns:meta/">\n'
            f'{rdf(values)}\n</x:xmpmeta>\n<?xpacket end="r"?>').encode()


def fields_in(root: ElementTree.Element) -> dict[str, str]:
    """The ``imagekit:`` properties of every ``rdf:Description`` under ``root``, as attributes or
    as child elements (a tool that rewrote the packet may have used either)."""
    found: dict[str, str] = {}
    for description in root.iter(f"{{{RDF}}}Description"):
        found.update({name[len(NAMESPACE) + 2:]: value for name, value in description.attrib.items()
                      if name.startswith(f"{{{NAMESPACE}}}")})
        found.update({child.tag[len(NAMESPACE) + 2:]: child.text or "" for child in description
                      if child.tag.startswith(f"{{{NAMESPACE}}}")})
    return found
