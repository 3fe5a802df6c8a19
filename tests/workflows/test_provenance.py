"""Every file the toolkit writes says how its image was made, against both faces of the sandbox;
read back with Pillow and an XML parser, and made again with ``reproduce``."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest
from PIL import Image

import imagekit
from tests.helpers import balance

NS = "urn:imagekit:provenance:1:"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"


def xmp_fields(xmp: bytes | str | ElementTree.Element) -> dict[str, str]:
    root = xmp if isinstance(xmp, ElementTree.Element) else ElementTree.fromstring(xmp)
    description = root.find(f".//{{{RDF}}}Description")
    return {name.removeprefix(f"{{{NS}}}"): value for name, value in description.attrib.items() if NS in name}


def test_a_created_image_saved_names_its_request(connect, box, tmp_path):
    ik = connect()
    style = ik.styles()[0]
    image = ik.create("a lighthouse at dusk", style=style, ratio="16:9", count=2).images[1]
    path = image.save(tmp_path / "lighthouse.png")
    with Image.open(path) as picture:
        text = picture.text
    assert (text["prompt"], text["style"], text["ratio"], text["count"]) == (
        "a lighthouse at dusk", str(style.style_id), "16:9", "2")
    assert text["image_id"] == str(image.id) and float(text["credits"]) == style.credit_cost
    assert text["service"] == box.url and text["operation"] == "create"
    assert ik.config.api_key.encode() not in path.read_bytes()  # never the key


@pytest.mark.parametrize("suffix", [".jpg", ".webp"])
def test_an_edit_saved_names_its_parent_and_operation(connect, tmp_path, suffix):
    ik = connect()
    source = ik.create("a red fox", style=ik.styles()[0]).images[0]
    bigger = source.enhance("2x")
    path = bigger.save(tmp_path / f"fox{suffix}")
    with Image.open(path) as picture:
        fields = xmp_fields(picture.info["xmp"])
    assert (fields["image_id"], fields["parent_id"], fields["operation"]) == (str(bigger.id), str(source.id), "enhance")
    assert json.loads(fields["params"]) == {"scale": "2x"} and fields["request_id"] == bigger.request_id
    assert float(fields["credits"]) == bigger.credits > 0


def test_a_vectorized_image_saved_as_svg_has_a_metadata_element(connect, tmp_path):
    ik = connect()
    source = ik.create("a red robot", style=ik.styles()[0]).images[0]
    vector = source.remove_bg().vectorize()
    root = ElementTree.parse(vector.save(tmp_path / "robot.svg")).getroot()
    metadata = root.find("{http://www.w3.org/2000/svg}metadata")
    fields = xmp_fields(metadata)
    assert (fields["operation"], fields["image_id"]) == ("vectorize", str(vector.id))
    assert root.findall(".//{http://www.w3.org/2000/svg}path")


def test_each_chain_step_saved_names_the_step_before(connect, tmp_path):
    ik = connect()
    source = ik.create("a kite", style=ik.styles()[0]).images[0]
    result = imagekit.chain(ik).enhance("2x").remove_bg().upsize().run(source)
    parents = []
    for number, image in enumerate(result.images):
        with Image.open(image.save(tmp_path / f"step-{number}.png")) as picture:
            parents.append(int(picture.text["parent_id"]))
            assert picture.text["operation"] == ["enhance", "removeBg", "upsize"][number]
    assert parents == [source.id, *(image.id for image in result.images[:-1])]
    assert list(result.lineage["credits"]) == [image.credits for image in result.images]


def test_a_batch_output_names_its_row(connect, box, tmp_path):
    ik = connect()
    style = ik.styles()[0]
    batch = ik.batch([{"prompt": "a castle", "ratio": "3:4", "seed": 5}], style=style).run(
        out_dir=tmp_path / "out", progress=False)
    line = batch.to_pandas().iloc[0]
    with Image.open(line["file"]) as picture:
        text = picture.text
    assert (text["prompt"], text["ratio"], text["style"], json.loads(text["params"])) == (
        "a castle", "3:4", str(style.style_id), {"seed": 5})
    assert (text["image_id"], float(text["credits"]), text["service"]) == (str(line["image_id"]), line["credits"], box.url)


def test_reproduce_shows_the_price_then_makes_the_image_again(connect, tmp_path, capsys):
    ik = connect()
    style = ik.styles()[0]
    first = ik.create("a fox in the snow", style=style, ratio="4:3").images[0]
    path = first.save(tmp_path / "fox.png")
    before = balance(ik)
    again = imagekit.reproduce(path, ik)
    shown = capsys.readouterr().out
    assert f"create('a fox in the snow', style={style.style_id}, ratio='4:3', count=1)" in shown
    assert f"about {style.credit_cost:g} credits" in shown and before - balance(ik) == style.credit_cost
    made = again.images[0].info.generation_info  # the service's answer: what it was asked for
    assert made.original_prompt == "a fox in the snow" and len(again.images) == 1
    assert again.images[0].resolution == first.resolution  # the same ratio

    edited = again.images[0].enhance("2x").save(tmp_path / "bigger.png")
    remade = imagekit.reproduce(edited, ik)
    assert isinstance(remade, imagekit.Image) and remade.provenance.parent_id == again.images[0].id
    assert "enhance(#" in capsys.readouterr().out


def test_a_request_whose_mask_is_not_kept_is_not_sent(connect, tmp_path):
    ik = connect()
    source = ik.create("a beach", style=ik.styles()[0]).images[0]
    mask = Image.new("L", tuple(int(v) for v in source.meta().resolution.split("x")), 0)
    mask.paste(255, (0, 0, 20, 20))
    path = source.clean_up(mask).save(tmp_path / "clean.png")
    before = balance(ik)
    with pytest.raises(ValueError, match="mask is not kept"):
        imagekit.reproduce(path, ik)
    assert balance(ik) == before
