"""Tags: labels such as ``experiment="grid-a"`` that every ledger entry made inside them carries.

    with imagekit.tags(experiment="grid-a", person="ana"):
        ik.create(...)                       # its entry, and any refund of it, is tagged
        with imagekit.tags(step="upscale"):  # nesting merges; an inner value wins; None removes a key
            img.enhance("2x")

Tags live in a context variable, so they follow the code that set them: a thread sees only its own,
and an asyncio task those in effect where it was started. Workflows that hand work to other
threads (a batch's event loop, ``Chain.map``'s pool) carry the caller's tags across themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from .errors import ConfigError

__all__ = ["tags", "current_tags", "checked_tags"]

_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_MAX_VALUE = 200
_current: ContextVar[dict[str, str]] = ContextVar("imagekit_tags", default={})  # noqa: B039 (never mutated)


def current_tags() -> dict[str, str]:
    """The tags in effect here (a copy)."""
    return dict(_current.get())


def checked_tags(values: Mapping[str, object]) -> dict[str, str | None]:
    """``values`` as tags: keys of letters, digits and ``_.-`` (at most 64), values text (numbers are
    written as text; at most 200 characters, without the spaces at their ends) or None (removes the
    key). ConfigError otherwise."""
    checked: dict[str, str | None] = {}
    for key, value in values.items():
        if not isinstance(key, str) or not _KEY.match(key):
            raise ConfigError(f"tag name {key!r}: use 1 to 64 letters, digits, '_', '.' or '-'")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int, float))):
            raise ConfigError(f"tag {key}={value!r}: a tag's value is text (or a number)")
        text = None if value is None else str(value).strip()  # "grid-a " is grid-a, in reports and budgets alike
        if text is not None and not 0 < len(text) <= _MAX_VALUE:
            raise ConfigError(f"tag {key}: a value has 1 to {_MAX_VALUE} characters, not {len(text)}")
        checked[key] = text
    return checked


def merged(outer: Mapping[str, str], inner: Mapping[str, object]) -> dict[str, str]:
    """``outer`` with ``inner`` applied over it (None removes a key)."""
    result = dict(outer)
    for key, value in checked_tags(inner).items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


@contextmanager
def tags(mapping: Mapping[str, object] | None = None, /, **values: object) -> Iterator[dict[str, str]]:
    """Tag every operation inside the block (any client, sync or async); yields the tags in effect.
    Takes keywords, or a mapping for names that are not Python identifiers (``{"team.name": ...}``)."""
    token = _current.set(merged(_current.get(), {**(mapping or {}), **values}))
    try:
        yield dict(_current.get())
    finally:
        _current.reset(token)
