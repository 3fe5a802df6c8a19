"""Provenance inside files, read back with each format's own readers (Pillow's, an XML parser's),
never through ours: written into PNG, JPEG, WebP and SVG as they are copied, the pixels untouched."""

from __future__ import annotations

import io
import json
from xml.etree import ElementTree

import pytest
from PIL import Image

from imagekit.provenance import Provenance
from imagekit.provenance.embed import embed

NS = "urn:imagekit:provenance:1:"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RECORD = Provenance.of_create(12, 'a "lighthouse"\nat <dusk> & fog — été', {"style": 3, "ratio": "16:9", "seed": 7},
                              request_id="k1.1", credits=2.5, service="https://ana:secret@api.example:8443/v1?key=k")
EDIT = Provenance.of_edit(13, "enhance", 12, {"scale": "2x"}, request_id="r-1", credits=1.0,
                          service="http://127.0.0.1:5000")


def exif() -> bytes:
    tags = Image.Exif()
    tags[0x010E] = "a description"  # ImageDescription
    return tags.tobytes()


def encoded(kind: str, mode: str = "RGB", **options) -> bytes:
    picture = Image.new(mode, (37, 21), (10, 200, 30, 128)[:len(mode)])
    picture.putpixel((3, 4), (250, 0, 0, 255)[:len(mode)])
    out = io.BytesIO()
    picture.save(out, kind, **options)
    return out.getvalue()


def embedded(data: bytes, record: Provenance = RECORD) -> bytes:
    out = io.BytesIO()
    embed(io.BytesIO(data), out, record.text_fields())
    return out.getvalue()


def xmp_properties(xmp: bytes | str) -> dict[str, str]:
    description = ElementTree.fromstring(xmp).find(f".//{{{RDF}}}Description")
    return {name.removeprefix(f"{{{NS}}}"): value for name, value in description.attrib.items() if NS in name}


def same_pixels(a: bytes, b: bytes) -> bool:
    with Image.open(io.BytesIO(a)) as first, Image.open(io.BytesIO(b)) as second:
        return first.mode == second.mode and first.tobytes() == second.tobytes()


def test_png_text_chunks_hold_every_field():
    data = embedded(encoded("PNG"))
    with Image.open(io.BytesIO(data)) as picture:
        text = picture.text
    assert text["prompt"] == RECORD.prompt and text["image_id"] == "12" and text["style"] == "3"
    assert (text["ratio"], text["count"], text["credits"], text["request_id"]) == ("16:9", "1", "2.5", "k1.1")
    assert json.loads(text["params"]) == {"seed": 7} and text["operation"] == "create"
    assert same_pixels(data, encoded("PNG"))


def test_the_service_is_shown_without_key_user_or_query():
    text = RECORD.text_fields()
    assert text["service"] == "https://api.example:8443/v1"
    assert not any(secret in value for value in text.values() for secret in ("secret", "ana", "key="))


@pytest.mark.parametrize(("kind", "mode", "options"), [
    ("JPEG", "RGB", {}), ("JPEG", "RGB", {"exif": exif()}),
    ("WEBP", "RGB", {"quality": 80}), ("WEBP", "RGBA", {"quality": 80}),
    ("WEBP", "RGB", {"lossless": True}), ("WEBP", "RGBA", {"lossless": True})])
def test_jpeg_and_webp_carry_an_xmp_packet(kind, mode, options):
    original = encoded(kind, mode, **options)
    data = embedded(original, EDIT)
    with Image.open(io.BytesIO(data)) as picture:
        xmp = picture.info["xmp"]
    fields = xmp_properties(xmp)
    assert (fields["image_id"], fields["operation"], fields["parent_id"]) == ("13", "enhance", "12")
    assert json.loads(fields["params"]) == {"scale": "2x"} and fields["request_id"] == "r-1"
    assert same_pixels(data, original)  # spliced, not re-encoded: a lossy image stays as it was
    if "exif" in options:  # Exif keeps its place at the front, and its content
        assert data.index(b"Exif\0\0") < data.index(b"http://ns.adobe.com/xap/1.0/\0")
        assert Image.open(io.BytesIO(data)).getexif()[0x010E] == "a description"


def test_svg_gets_a_metadata_element():
    svg = (b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4" data-x="a>b">'
           b'<path d="M0 0L4 4"/></svg>')
    root = ElementTree.fromstring(embedded(svg))
    metadata = root.find("{http://www.w3.org/2000/svg}metadata")
    assert metadata is not None and list(root)[0] is metadata and root.get("data-x") == "a>b"
    fields = {name.removeprefix(f"{{{NS}}}"): value
              for name, value in metadata.find(f".//{{{RDF}}}Description").attrib.items() if NS in name}
    assert fields["prompt"] == RECORD.prompt and fields["style"] == "3"
    assert root.find("{http://www.w3.org/2000/svg}path") is not None


@pytest.mark.parametrize("kind", ["PNG", "JPEG", "WEBP", "SVG"])
def test_writing_again_replaces_the_record(kind):
    data = (b'<svg xmlns="http://www.w3.org/2000/svg"/>' if kind == "SVG" else encoded(kind))
    twice = embedded(embedded(data), EDIT)
    assert twice.count(b"k1.1") == 0 and twice.count(b"r-1") == 1
    if kind == "SVG":
        assert ElementTree.fromstring(twice).tag == "{http://www.w3.org/2000/svg}svg"
    else:
        assert same_pixels(twice, data)


def test_other_formats_are_copied_as_they_are():
    gif = encoded("GIF")
    assert embedded(gif) == gif


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, encoded("PNG")[:60],
                                  encoded("JPEG")[:40], b"<svg but never closed"])
def test_a_file_that_does_not_parse_is_kept_as_sent(data):
    """The image is never lost for its record: bytes its format's rules do not parse are copied whole."""
    assert embedded(data) == data


def test_a_record_reads_back_from_its_text_fields():
    assert Provenance.from_text_fields(RECORD.text_fields()) == RECORD
    assert Provenance.from_text_fields(EDIT.text_fields()) == EDIT
    assert RECORD.describe() == "create('a \"lighthouse\"\\nat <dusk> & fog — été', style=3, ratio='16:9', count=1, seed=7)"
    assert EDIT.describe() == "enhance(#12, scale='2x')"


def test_pixels_and_masks_are_not_kept():
    record = Provenance.of_edit(5, "fill", 4, {"mask": Image.new("L", (2, 2)), "prompt": "a kite", "negative": ""})
    assert record.params == {"mask": "<not kept>", "prompt": "a kite", "negative": ""}
    reference = Provenance.of_create(6, "a fox", {"image": "data:image/png;base64,AAAA", "count": 2})
    assert reference.params == {"image": "<not kept>"} and reference.count == 2


def test_a_reference_image_is_kept_by_its_id_only():
    """A local path or a URL is private to whoever sent it (a signed URL is a key): never written."""
    from types import SimpleNamespace

    for given, kept in [(7, 7), (SimpleNamespace(id=8), 8), ("/api/images/9/binary", 9),
                        ("/home/me/photo.png", "<not kept>"), ("https://bucket.test/a.png?X-Amz-Signature=s", "<not kept>")]:
        assert Provenance.of_create(6, "a fox", {"image": given}).params == {"image": kept}, given


def test_a_record_from_metadata_says_what_the_service_shows_and_no_request():
    from types import SimpleNamespace

    meta = SimpleNamespace(credit_cost=2, resolution="1024x768", collection_info=SimpleNamespace(prompt_text="a kite"),
                           generation_info=SimpleNamespace(group_id="g-1"))
    record = Provenance.of_meta(5, meta, service="http://user:pw@127.0.0.1:8000/?k=v")
    assert (record.operation, record.prompt, record.ratio, record.credits, record.request_id, record.service) == (
        "unknown", "a kite", "4:3", 2.0, "g-1", "http://127.0.0.1:8000")
    assert Provenance.from_text_fields(record.text_fields()) == record
    assert Provenance.of_meta(5, None).describe() == "image #5, made by a request the service does not show"
