"""What each column of an entry means, and how a value is held to it at the ledger's edge.

On the way in (``checked``), a value that is not what its column means is stored as null (an
integer column never holds ``'My Photo'``); a text column keeps a number as its text. On the way out
(``entry_of``), a row an earlier version wrote with such a value is read as far as it can be, and
says what could not be read (``Entry.unreadable``): a report shows it, and never stops on it.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Any

from .entries import Entry, Source, Status

__all__ = ["COLUMNS", "checked", "row_of", "entry_of", "warn_unreadable", "integer", "number", "text"]

COLUMNS = ("time", "account", "operation", "source_id", "image_ids", "request_id", "group_id", "style_id",
           "credits", "balance", "daily_credit", "monthly_credit", "default_credit", "status", "http_status",
           "error", "latency", "source", "tags", "uid")
"""The entries table's columns, in the order statements name them (``seq`` is the database's)."""
log = logging.getLogger("imagekit")


class Unfit(ValueError):
    """A value is not what its column means (``args[0]``, when given: what of it is)."""


def integer(value: Any) -> int | None:
    """An id or a status code: an int, an integral float, or the digits of one as text."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise Unfit
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise Unfit


def number(value: Any) -> float | None:
    """Credits, a balance, seconds: a finite number, or one written as text."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise Unfit
    try:
        found = float(value)
    except (TypeError, ValueError):
        raise Unfit from None
    if not math.isfinite(found):
        raise Unfit
    return found


def text(value: Any) -> str | None:
    """Free text: a number is kept as its text; anything else is not text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise Unfit


def _required_text(value: Any) -> str:
    found = text(value)
    if found is None:
        raise Unfit
    return found


def _time(value: Any) -> str:
    stamp = _required_text(value)
    try:
        datetime.fromisoformat(stamp)
    except ValueError:
        raise Unfit(stamp) from None  # kept as it is: the column cannot be null, and reads it as no time
    return stamp


def _image_ids(value: Any) -> list[int]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise Unfit from None
    if not isinstance(value, list):
        raise Unfit
    ids = []
    for each in value:
        try:
            ids.append(integer(each))
        except Unfit:
            ids.append(None)
    kept = [each for each in ids if each is not None]
    if len(kept) != len(value):
        raise Unfit(kept)
    return kept


def _tags(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value or "{}")
        except ValueError:
            raise Unfit from None
    if not isinstance(value, dict):
        raise Unfit
    return {str(name): _required_text(each) for name, each in value.items()}


def _status(value: Any) -> Status:
    try:
        return Status(value)
    except ValueError:
        raise Unfit from None


def _source(value: Any) -> Source | None:
    try:
        return None if value is None else Source(value)
    except ValueError:
        raise Unfit from None


_KINDS: dict[str, tuple[Callable[[Any], Any], Any]] = {
    **{name: (integer, None) for name in ("source_id", "style_id", "http_status")},
    **{name: (number, None) for name in ("credits", "balance", "daily_credit", "monthly_credit",
                                         "default_credit", "latency")},
    **{name: (text, None) for name in ("request_id", "group_id", "error", "uid")},
    **{name: (_required_text, "") for name in ("account", "operation")},
    "time": (_time, None),
    "image_ids": (_image_ids, []),
    "tags": (_tags, {}),
    "status": (_status, Status.NO_RESPONSE),
    "source": (_source, None),
}
"""Column -> how a value is held to it, and what stands in for a value that is not (unless the
refusal says what of it is kept)."""


_MEANING = {"style_id": "a style id", "source_id": "an image id", "http_status": "an HTTP status",
            "image_ids": "a list of image ids", "time": "a time", "status": "a status", "source": "a credit source",
            "tags": "a set of tags", **{name: "a number" for name in ("credits", "balance", "daily_credit",
                                                                      "monthly_credit", "default_credit", "latency")}}


def _held(values: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``values`` held to their columns, and a note for each value that was not what its column means."""
    held, notes = dict(values), []
    for name, (kind, instead) in _KINDS.items():
        if name not in values:
            continue
        try:
            held[name] = kind(values[name])
        except Unfit as exc:
            held[name] = exc.args[0] if exc.args else instead
            notes.append(f"{name} {values[name]!r} is not {_MEANING.get(name, 'what the column holds')}")
    return held, notes


def checked(entry: Entry) -> list[str]:
    """Hold ``entry``'s values to their columns, in place (see the module); what was dropped."""
    values, notes = _held({name: getattr(entry, name) for name in COLUMNS})
    for name in COLUMNS:
        setattr(entry, name, values[name])
    return notes


def row_of(entry: Entry, json_columns: bool = True) -> dict[str, Any]:
    """``entry`` as a row: names as text, and (for the database) lists and tags as JSON."""
    row = {**asdict(entry), "status": Status(entry.status).value,
           "source": Source(entry.source).value if entry.source else None}
    if json_columns:
        row.update(image_ids=json.dumps(entry.image_ids), tags=json.dumps(entry.tags, sort_keys=True))
        del row["unreadable"]
    return row


def entry_of(row: tuple[Any, ...]) -> Entry:
    """An entry read back from its row (``COLUMNS`` then ``seq``): what could not be read is left out,
    and ``unreadable`` says what it was."""
    values = dict(zip((*COLUMNS, "seq"), row, strict=True))
    held, notes = _held(values)
    return Entry(**held, unreadable="; ".join(notes) or None)


_warned: set[tuple[str, int | None]] = set()


def warn_unreadable(location: str, entries: list[Entry]) -> None:
    """Say once per ledger and row which rows could not be read in full (they are shown as far as
    they could be read; ``unreadable`` says what was left out)."""
    new = [entry for entry in entries if (location, entry.seq) not in _warned]
    if new:
        _warned.update((location, entry.seq) for entry in new)
        log.warning("%d entr%s of the ledger at %s could not be read in full (an earlier version wrote "
                    "them): shown without what could not be read; first, entry %s: %s", len(new),
                    "y" if len(new) == 1 else "ies", location, new[0].seq, new[0].unreadable)
