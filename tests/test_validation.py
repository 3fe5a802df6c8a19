"""The one validator: what the interface constrains, each mistake one line naming the field and the
value, every mistake of many rows in one answer. Pure logic, no server (the entry points that call it
are tested against the sandbox in tests/client/test_validation_api.py and the workflow tests)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from imagekit.errors import ValidationError
from imagekit.validation import all_mistakes, check_create, check_edit, check_header, resolve_style

STYLES = [SimpleNamespace(style_id=11, main_text="My Photo", main="photo"),
          SimpleNamespace(style_id=12, main_text="My Watercolor", main="watercolor")]


@pytest.mark.parametrize(("prompt", "options", "message"), [
    ("a fox", {"style": 1, "ratio": "3:2"}, r"^ratio = '3:2': one of square, vertical, horizontal, 1:1, 3:4"),
    ("a fox", {"style": 1, "count": 3}, r"^count = 3: the interface makes 1, 2 or 4 images a request$"),
    ("a fox", {"style": 1, "count": True}, r"^count = True: "),
    ("a fox", {}, r"^no style, image or collection: a create names exactly one"),
    ("a fox", {"style": 1, "collection": 2}, r"^style and collection both given: "),
    ("", {"style": 1}, r"^prompt = '': a prompt is needed$"),
    (None, {"style": 1}, r"^prompt = None: a prompt is needed$"),
    ("x" * 1201, {"style": 1}, r"^prompt = 'xxx.*: at most 1200 characters \(this has 1201\)$"),
    ("a fox", {"style": 0}, r"^style = 0: an id is a whole number from 1$"),
    ("a fox", {"collection": -3}, r"^collection = -3: an id is a whole number from 1$"),
    ("a fox", {"style": "My Photo"}, r"^style = 'My Photo': a style name is resolved among your styles first$"),
    ("a fox", {"style": 1, "seed": -1}, r"^seed = -1: a whole number from 0 to 2147483647$"),
    ("a fox", {"style": 1, "platform": "tv"}, r"^platform = 'tv': one of web, app, figma, api$"),
    ("a fox", {"style": 1, "api_type": "standard\r\nX-Evil: 1"}, r"^api_type = .*: a header value is visible ASCII"),
    ("a fox", {"style": 1, "is_async": "yes"}, r"^is_async = 'yes': true or false$"),
])
def test_each_mistake_is_one_line_naming_the_field_and_the_value(prompt, options, message):
    with pytest.raises(ValidationError, match=message) as refused:
        check_create(prompt, options)
    assert "\n" not in str(refused.value) and isinstance(refused.value, ValueError)


def test_every_mistake_of_a_create_is_told_at_once_and_where():
    with pytest.raises(ValidationError) as refused:
        check_create("a fox", {"style": 1, "ratio": "3:2", "count": 3}, "sweep.toml")
    assert str(refused.value) == ("sweep.toml: count = 3: the interface makes 1, 2 or 4 images a request; "
                                  "ratio = '3:2': one of square, vertical, horizontal, 1:1, 3:4, 4:3, 9:16, 16:9")
    assert (refused.value.field, refused.value.where) == ("count", "sweep.toml")


def test_what_is_sent_is_normalised():
    assert check_create("a fox", {"style": SimpleNamespace(style_id=4), "count": 2.0, "seed": "7"}) == {
        "style": 4, "count": 2, "seed": 7}
    assert check_create("a fox", {"style": "My Photo"}, names=True) == {"style": "My Photo"}


def test_a_file_is_held_to_what_the_toolkit_writes():
    """strict: JSON types exactly, and a reference image only as an image id (never a path, never a URL)."""
    assert check_create("a fox", {"image": "/api/images/12/binary"}, strict=True) == {"image": 12}
    for value, field in [("/home/me/.aws/credentials", "image"), ("https://x.test/a.png", "image"),
                         ("2", "count"), (2.0, "count"), ("3", "style"), ("My Photo", "style")]:
        options = {field: value} if field != "count" else {"style": 1, "count": value}
        with pytest.raises(ValidationError) as refused:
            check_create("a fox", options, "fox.png", strict=True)
        assert refused.value.field == field and str(refused.value).startswith(f"fox.png: {field} = ")


def test_a_style_name_becomes_its_id_or_is_refused_naming_the_account_styles():
    assert resolve_style("My Photo", STYLES) == 11
    assert resolve_style("my watercolor ", STYLES) == 12  # case and spaces aside
    assert resolve_style("photo", STYLES) == 11  # the category code too
    assert resolve_style(7, STYLES) == 7  # an id is the interface's: not looked up
    with pytest.raises(ValidationError) as refused:
        resolve_style("My Fotos", STYLES)
    assert str(refused.value) == ("style = 'My Fotos': no style of yours has this name (yours: 11 'My Photo', "
                                  "12 'My Watercolor'); a public style is given by its id")
    # As every report names a style: "My Photo #11", and "style 13" for one whose name it does not know.
    assert resolve_style("My Photo #11", STYLES) == 11 and resolve_style("my watercolor #12", STYLES) == 12
    assert resolve_style("style 13", STYLES) == 13
    with pytest.raises(ValidationError, match=r"^style = 'My Photo #12': no style of yours has this name"):
        resolve_style("My Photo #12", STYLES)  # a name and an id that are not one style
    twins = [*STYLES, SimpleNamespace(style_id=13, main_text="My Photo", main="photo")]
    with pytest.raises(ValidationError, match=r"several of your styles have this name \(11, 13\)"):
        resolve_style("My Photo", twins)


@pytest.mark.parametrize(("operation", "params", "message"), [
    ("enhance", {"scale": "1x"}, r"^scale = '1x': one of 2x, 4x, 8x \(1x is the original\)$"),
    ("enhance", {"scale": "3x"}, r"^scale = '3x'"),
    ("outpaint", {"canvas": (0, 10), "size": (5, 5), "at": (0, 0)}, r"^canvas = \(0, 10\): two numbers above 0"),
    ("outpaint", {"canvas": (10, 10), "size": (5, 5), "at": (0,)}, r"^at = \(0,\): two numbers \(x, y\)$"),
    ("retry", {"strength": "wild"}, r"^strength = 'wild': one of strong, subtle$"),
    ("fill", {"mask": None, "prompt": "a kite", "negative": ""}, r"^mask = None: a mask is needed$"),
    ("removeBg", {"scale": "2x"}, r"^scale = '2x': removeBg takes nothing$"),
    ("resize", {}, r"^operation = 'resize': an edit is one of enhance, outpaint"),
])
def test_each_edit_is_checked_against_its_own_parameters(operation, params, message):
    with pytest.raises(ValidationError, match=message):
        check_edit(operation, 5, params)


def test_an_edit_within_the_interface_passes():
    assert check_edit("outpaint", 5, {"canvas": [20, 10], "size": (10, 10), "at": (-2, 0)}) == {
        "canvas": (20, 10), "size": (10, 10), "at": (-2, 0)}
    assert check_edit("retry", 5, {"strength": None}) == {"strength": None}
    with pytest.raises(ValidationError, match=r"^image = 0: an id is a whole number from 1$"):
        check_edit("upsize", 0, {})


@pytest.mark.parametrize("value", ["abc\r\nX-Evil: 1", "has space", "", "é", "x" * 257])
def test_a_header_value_is_visible_ascii(value):
    with pytest.raises(ValidationError, match=r"^request_id = .*: a header value is visible ASCII"):
        check_header("request_id", value)


def test_many_rows_mistakes_are_one_answer_grouped_by_mistake():
    mistakes = []
    for index, ratio in enumerate(["1:1", "3:2", "1:1", "3:2"]):
        try:
            check_create("a fox", {"style": 1, "ratio": ratio, "count": 3})
        except ValidationError as exc:
            for part in str(exc).split("; "):
                field = part.split(" = ")[0]
                mistakes.append((f"row {index}", ValidationError(part, field=field)))
    error = all_mistakes(mistakes, "sweep.toml")
    assert str(error) == ("sweep.toml: 4 rows cannot be sent: rows 0, 1, 2, 3: count = 3: the interface makes 1, 2 "
                          "or 4 images a request; rows 1, 3: ratio = '3:2': one of square, vertical, horizontal, 1:1, "
                          "3:4, 4:3, 9:16, 16:9")
    assert all_mistakes([]) is None
