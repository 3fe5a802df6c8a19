"""What the interface constrains, checked in one place before anything is sent or priced.

The clients' create and edits, batch rows (``ik.batch``, ``Batch.estimate``), sweep files, the prompt
studio and ``reproduce`` all call these checks, so a mistake gets the same one-line
``ValidationError`` wherever it is made. What the interface says:

- create: a prompt of at most 1200 characters and exactly one of a style, a reference image or a
  collection; ratio one of ``RATIOS``; count 1, 2 or 4; the platform header one of ``PLATFORMS``;
- edits: enhance's scale 2x, 4x or 8x; outpaint's three pairs of numbers; retry's strength strong or
  subtle; fill's and cleanUp's mask (``EDIT_PARAMS`` names each edit's parameters);
- ids are whole numbers from 1; a style may also be given by name and is then resolved among the
  account's own styles (``resolve_style``): the interface takes ids only.

``strict`` checks hold a file to what the toolkit writes into files: JSON types exactly (no ``"2"``
for 2, no ``true`` for 1), and a reference image only as an image id.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .errors import ValidationError

__all__ = ["RATIOS", "COUNTS", "PROMPT_LIMIT", "PLATFORMS", "SCALES", "STRENGTHS", "MODES", "EDIT_PARAMS",
           "CREATE_FIELDS", "check_create", "create_mistakes", "check_edit", "check_header", "resolve_style", "style_note", "style_ref",
           "image_id_of", "all_mistakes", "misspelt"]

RATIOS = ("square", "vertical", "horizontal", "1:1", "3:4", "4:3", "9:16", "16:9")
COUNTS = (1, 2, 4)
PROMPT_LIMIT = 1200
PLATFORMS = ("web", "app", "figma", "api")
SCALES = ("2x", "4x", "8x")
"""enhance's scales (1x names the original image: nothing to make)."""
STRENGTHS = ("strong", "subtle")
MODES = ("style", "image", "collection")
"""The generation modes: a create names exactly one."""
EDIT_PARAMS: dict[str, tuple[str, ...]] = {
    "enhance": ("scale",), "outpaint": ("canvas", "size", "at"), "retry": ("strength",),
    "fill": ("mask", "prompt", "negative"), "cleanUp": ("mask",), "removeBg": (), "vectorize": (), "upsize": (),
}
"""Each edit's parameters, by its operation (as its request's path names it)."""
_TEXTS = ("initial_prompt", "enhanced_prompt", "caption_prompt", "caption_t_prompt")
CREATE_FIELDS = ("prompt", *MODES, "count", "ratio", "seed", "is_async", "group_id", "random_prompt", *_TEXTS,
                 "platform", "api_type")
"""The create's fields these checks know (the client also takes ``extra_body`` and ``timeout``)."""
_HEADER_VALUE = re.compile(r"[\x21-\x7e]{1,256}")
_BINARY_PATH = re.compile(r"/api/images/([1-9][0-9]{0,15})/binary")
_SEED_MAX = 2**31 - 1


def _fail(field: str, value: Any, allowed: str, where: str | None) -> ValidationError:
    place = f"{where}: " if where else ""
    return ValidationError(f"{place}{field} = {_shown(value)}: {allowed}", field=field, value=value, where=where)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _whole(value: Any, strict: bool) -> int | None:
    """``value`` as a whole number, or None: a JSON integer when strict; else also a whole float (a
    DataFrame's) or digits."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if strict:
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _id(field: str, value: Any, where: str | None, strict: bool = False) -> int:
    number = _whole(getattr(value, "id", value), strict)
    if number is None or not 1 <= number <= 2**53:
        raise _fail(field, value, "an id is a whole number from 1", where)
    return number


def style_ref(value: Any, where: str | None = None, strict: bool = False) -> int | str:
    """A style as the create sends it (its id: a Style gives its own), or its name, still to be
    resolved among the account's styles (``resolve_style``)."""
    value = getattr(value, "style_id", value)
    if isinstance(value, str) and not value.strip().isdigit() and not strict:
        if not value.strip():
            raise _fail("style", value, "give a style id or one of your styles' names", where)
        return value.strip()
    return _id("style", value, where, strict)


def resolve_style(value: Any, styles: Iterable[Any], where: str | None = None) -> int:
    """The id of a style given by id or by name (``mainText``, else ``main``, case aside) among
    ``styles``, the account's own; a name that matches none, or several, is refused naming those there are."""
    ref = style_ref(value, where)
    if isinstance(ref, int):
        return ref
    styles = [s for s in styles if getattr(s, "style_id", None) is not None]
    for exact in (True, False):
        found = sorted({s.style_id for s in styles if any(_same(ref, name, exact) for name in (s.main_text, s.main))})
        if len(found) == 1:
            return int(found[0])
        if len(found) > 1:
            raise _fail("style", ref, f"several of your styles have this name ({', '.join(map(str, found))}): "
                                      "give its id", where)
    if (label := _STYLE_LABEL.fullmatch(ref.strip())) is not None:  # as reports name it: "Oil paint #3", "style 3"
        named, number = label.group("name"), int(label.group("id") or label.group("bare"))
        if named is None or any(s.style_id == number and any(_same(named, name, False) for name in (s.main_text, s.main))
                                for s in styles):
            return number
    known = ", ".join(f"{s.style_id} {s.main_text or s.main!r}" for s in styles) or "none"
    raise _fail("style", ref, f"no style of yours has this name (yours: {known}); a public style is given by its id",
                where)


def style_note(name: str, style_id: int, styles: Iterable[Any]) -> str:
    """What a style given by name turned out to be, as the log tells it: one of the account's own
    styles, or a public one (``style 1``, which is no style of the account's)."""
    if any(s.style_id == style_id for s in styles):
        return f"style {name!r} is style {style_id} of this account"
    return f"style {name!r} is public style {style_id} (not one of this account's own)"


_STYLE_LABEL = re.compile(r"(?P<name>.+?) #(?P<id>\d+)|style (?P<bare>\d+)", re.IGNORECASE)
"""How every table, chart and sheet names a style (``reports.style_label``)."""


def _same(wanted: str, name: Any, exact: bool) -> bool:
    return isinstance(name, str) and (name == wanted if exact else name.strip().casefold() == wanted.casefold())


def image_id_of(value: Any, where: str | None = None) -> int:
    """The image id a file's reference image names (an id or ``/api/images/<id>/binary``): files keep
    nothing else (a local path, a URL or pixels are not kept), so nothing else is read from them."""
    if isinstance(value, str) and (match := _BINARY_PATH.fullmatch(value)):
        return int(match.group(1))
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise _fail("image", value, "a file names a reference image by its image id only", where)


def check_header(field: str, value: Any, where: str | None = None) -> str:
    """A value sent as a header: visible ASCII, no spaces or line breaks, at most 256 characters."""
    if not isinstance(value, str) or not _HEADER_VALUE.fullmatch(value):
        raise _fail(field, value, "a header value is visible ASCII without spaces or line breaks", where)
    return value


def _text(field: str, value: Any, where: str | None, limit: int | None = PROMPT_LIMIT) -> str:
    if not isinstance(value, str):
        raise _fail(field, value, "give text", where)
    if limit is not None and len(value) > limit:
        raise _fail(field, value, f"at most {limit} characters (this has {len(value)})", where)
    return value


def _count(value: Any, where: str | None, strict: bool) -> int:
    count = _whole(value, strict)
    if count not in COUNTS:
        raise _fail("count", value, "the interface makes 1, 2 or 4 images a request", where)
    return count


def _seed(value: Any, where: str | None, strict: bool) -> int:
    seed = _whole(value, strict)
    if seed is None or not 0 <= seed <= _SEED_MAX:
        raise _fail("seed", value, f"a whole number from 0 to {_SEED_MAX}", where)
    return seed


def _one_of(field: str, allowed: tuple[str, ...]) -> Callable[[Any, str | None, bool], Any]:
    def check(value: Any, where: str | None, strict: bool) -> Any:
        if value not in allowed:
            raise _fail(field, value, f"one of {', '.join(allowed)}", where)
        return value
    return check


def _flag(field: str, text_too: bool = False) -> Callable[[Any, str | None, bool], Any]:
    def check(value: Any, where: str | None, strict: bool) -> Any:
        if not isinstance(value, (bool, str) if text_too else bool):
            raise _fail(field, value, "true or false", where)
        return value
    return check


def _texts(field: str) -> Callable[[Any, str | None, bool], Any]:
    return lambda value, where, strict: _text(field, value, where)


_CREATE_CHECKS: dict[str, Callable[[Any, str | None, bool], Any]] = {
    "style": lambda value, where, strict: style_ref(value, where, strict),
    "collection": lambda value, where, strict: _id("collection", value, where, strict),
    "image": lambda value, where, strict: image_id_of(value, where) if strict else value,
    "count": _count,
    "ratio": _one_of("ratio", RATIOS),
    "seed": _seed,
    **{name: _texts(name) for name in _TEXTS},
    "group_id": lambda value, where, strict: _text("group_id", value, where, 64),
    "random_prompt": _flag("random_prompt", text_too=True),
    "is_async": _flag("is_async"),
    "platform": _one_of("platform", PLATFORMS),
    "api_type": lambda value, where, strict: check_header("api_type", value, where),
}


def misspelt(name: str, known: Iterable[str], where: str | None = None) -> ValidationError | None:
    """A field ``name`` one slip away from one of ``known`` (a letter wrong, missing, extra or two
    swapped: ``sead``, ``cont``, ``styel``), refused naming it; None for any other name (a label of
    the caller's own: ``variant``, ``prompt_id``)."""
    for option in known:
        if name != option and one_slip(name, option):
            place = f"{where}: " if where else ""
            return ValidationError(f"{place}{name} is not an option: did you mean {option}? (a label of your own "
                                   "needs a name unlike the options')", field=name, value=name, where=where)
    return None


def one_slip(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by one edit: a letter changed, added, removed, or two neighbours swapped."""
    if abs(len(a) - len(b)) > 1 or min(len(a), len(b)) < 3:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def create_mistakes(prompt: Any, options: Mapping[str, Any], where: str | None = None, *, strict: bool = False,
                    names: bool = False) -> tuple[dict[str, Any], list[ValidationError]]:
    """Every mistake of a create (see ``check_create``), and its options as they are sent."""
    mistakes: list[ValidationError] = []
    if prompt is None or (isinstance(prompt, str) and not prompt.strip()):
        mistakes.append(_fail("prompt", prompt, "a prompt is needed", where))
    else:
        try:
            _text("prompt", prompt, where)
        except ValidationError as exc:
            mistakes.append(exc)
    out = dict(options)
    given = [mode for mode in MODES if out.get(mode) is not None]
    if len(given) != 1:
        said = " and ".join(given) + " both given" if given else "no style, image or collection"
        mistakes.append(ValidationError(f"{where + ': ' if where else ''}{said}: a create names exactly one of a "
                                        "style, a reference image or a collection", field="mode",
                                        value=given or None, where=where))
    for name, check in _CREATE_CHECKS.items():
        if out.get(name) is not None:
            try:
                out[name] = check(out[name], where, strict)
            except ValidationError as exc:
                mistakes.append(exc)
    if isinstance(out.get("style"), str) and not names:
        mistakes.append(_fail("style", out["style"], "a style name is resolved among your styles first", where))
    return out, mistakes


def check_create(prompt: Any, options: Mapping[str, Any], where: str | None = None, *, strict: bool = False,
                 names: bool = False) -> dict[str, Any]:
    """A create's options checked against the interface and returned as they are sent (ids as whole
    numbers, a count as 1, 2 or 4); every mistake in one ValidationError. ``names``: leave a style
    given by name for ``resolve_style`` (otherwise it is refused); ``strict``: as a file must hold
    them (see the module)."""
    out, mistakes = create_mistakes(prompt, options, where, strict=strict, names=names)
    if len(mistakes) > 1:
        first = mistakes[0]
        place = f"{where}: " if where else ""
        raise ValidationError(place + "; ".join(_unplaced(m) for m in mistakes), field=first.field,
                              value=first.value, where=where)
    if mistakes:
        raise mistakes[0]
    return out


def _unplaced(error: ValidationError) -> str:
    return str(error)[len(error.where) + 2:] if error.where else str(error)


def _pair(field: str, value: Any, where: str | None, positive: bool) -> tuple[float, float]:
    numbers = list(value) if isinstance(value, (list, tuple)) else []
    if len(numbers) != 2 or not all(isinstance(n, (int, float)) and not isinstance(n, bool) and n == n
                                    and abs(n) < 1e6 and (n > 0 or not positive) for n in numbers):
        raise _fail(field, value, "two numbers" + (" above 0 (width, height)" if positive else " (x, y)"), where)
    return numbers[0], numbers[1]


def check_edit(operation: str, image: Any, params: Mapping[str, Any], where: str | None = None) -> dict[str, Any]:
    """An edit's parameters checked against the interface (``operation`` as its request's path names
    it; ``image``: the source image's id or handle, None while not known yet, as in a chain being
    built). Returns them as they are sent."""
    if operation not in EDIT_PARAMS:
        raise _fail("operation", operation, f"an edit is one of {', '.join(EDIT_PARAMS)}", where)
    if image is not None:
        _id("image", image, where)
    unknown = sorted(set(params) - set(EDIT_PARAMS[operation]))
    if unknown:
        raise _fail(unknown[0], params[unknown[0]], f"{operation} takes {', '.join(EDIT_PARAMS[operation]) or 'nothing'}",
                    where)
    out = dict(params)
    if operation == "enhance" and out.get("scale", "2x") not in SCALES:
        raise _fail("scale", out["scale"], f"one of {', '.join(SCALES)} (1x is the original)", where)
    if operation == "outpaint":
        out["canvas"], out["size"] = (_pair(name, out.get(name), where, True) for name in ("canvas", "size"))
        out["at"] = _pair("at", out.get("at"), where, False)
    if operation == "retry" and out.get("strength") is not None and out["strength"] not in STRENGTHS:
        raise _fail("strength", out["strength"], f"one of {', '.join(STRENGTHS)}", where)
    if operation == "fill":
        _text("prompt", out.get("prompt"), where)
        _text("negative", out.get("negative", ""), where)
    if operation in ("fill", "cleanUp") and out.get("mask") is None:
        raise _fail("mask", None, "a mask is needed", where)
    return out


def all_mistakes(mistakes: Iterable[tuple[str, ValidationError]], where: str | None = None) -> ValidationError | None:
    """One error telling every mistake of many rows (each ``(row, error)``): the same mistake of
    several rows once, naming the rows; None when there are none."""
    grouped: dict[tuple[str | None, str], list[str]] = {}
    first: ValidationError | None = None
    for row, error in mistakes:
        first = first or error
        said = _unplaced(error)
        grouped.setdefault((error.field, said), []).append(row)
    if first is None:
        return None
    parts = [f"{_rows(rows)}: {said}" for (_, said), rows in grouped.items()]
    head = f"{where}: " if where else ""
    rows = len({row for row_list in grouped.values() for row in row_list})
    text = f"{head}{rows} row{'s' if rows > 1 else ''} cannot be sent: " + "; ".join(parts)
    return ValidationError(text, field=first.field, value=first.value, where=where)


def _rows(rows: list[str]) -> str:
    if len(rows) == 1:
        return rows[0]
    numbers = [row.removeprefix("row ") for row in rows]
    return "rows " + ", ".join(numbers[:8]) + (f" and {len(numbers) - 8} more" if len(numbers) > 8 else "")
