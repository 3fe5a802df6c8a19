"""What a file may ask to be sent: no more than the toolkit writes into files.

A file may come from anyone, so its record is data, never a command. Only the names the toolkit
writes are read back (a create's prompt, style, ratio, count and ``CREATE_PARAMS``; an edit's parent
and its own parameters), each held by the one validator (``imagekit.validation``) to the JSON type
and range the toolkit writes. Anything else (a local path, ``extra_body``, ``count = 1000``, a header
value with a line break) refuses the file in one line naming the field and the file, before anything
is read from the service, priced or sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..config import SANDBOX_SERVICE
from ..errors import ValidationError
from ..validation import EDIT_PARAMS, check_create, check_edit
from .record import CREATE_PARAMS, NOT_KEPT, UNKNOWN, Provenance

__all__ = ["Request", "request_of"]

_SERVICE = re.compile(rf"https?://[\x21-\x7e]{{1,2000}}|{SANDBOX_SERVICE} [0-9a-f]{{32}}")
"""The services a file names: a base URL, or an embedded sandbox by its data's id (``service_of``)."""


@dataclass(frozen=True)
class Request:
    """A request a file may have sent again: a create's prompt and options, or an edit of its parent."""

    operation: str
    """``create`` or an edit's operation (as its request's path names it)."""
    prompt: str | None
    """A create's prompt."""
    options: dict[str, Any]
    """A create's options (style, ratio, count and ``CREATE_PARAMS``), or an edit's parameters."""
    parent_id: int | None = None
    """An edit's source image."""


def request_of(record: Provenance, where: str) -> Request:
    """The request ``record`` (read from the file ``where``) asks for, checked; ValidationError when
    the file holds what the toolkit never writes, or a request that cannot be sent again."""
    def refuse(field: str, value: Any, why: str) -> ValidationError:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        return ValidationError(f"{where}: {field} = {shown}: {why}", field=field, value=value, where=where)

    if record.service is not None and not (isinstance(record.service, str) and _SERVICE.fullmatch(record.service)):
        raise refuse("service", record.service, "not a service address this toolkit writes")
    params = record.params if isinstance(record.params, dict) else None
    if params is None:
        raise refuse("params", record.params, "not the table of fields this toolkit writes")
    if record.operation == UNKNOWN:
        raise ValidationError(f"{where}: image {record.image_id} cannot be sent again: the file was saved from an image "
                              "whose request the service does not show (only its metadata)", field="operation",
                              value=record.operation, where=where)
    allowed = CREATE_PARAMS if record.operation == "create" else EDIT_PARAMS.get(record.operation)
    if allowed is None:
        raise refuse("operation", record.operation, f"one of create, {', '.join(EDIT_PARAMS)}")
    for name, value in params.items():
        if name not in allowed:
            raise refuse(f"params.{name}", value, "not a field this toolkit writes for "
                                                  f"{record.operation}; the file is refused")
    lost = sorted(name for name, value in params.items() if value == NOT_KEPT)
    if lost:
        raise ValidationError(f"{where}: image {record.image_id}: {record.describe()} cannot be sent again from its "
                              f"file: {', '.join(lost)} {'is' if len(lost) == 1 else 'are'} not kept in files",
                              field=lost[0], value=NOT_KEPT, where=where)
    if record.operation == "create":
        options = {"style": record.style, "ratio": record.ratio, "count": record.count, **params}
        options = {name: value for name, value in options.items() if value is not None}
        return Request("create", record.prompt, check_create(record.prompt, options, where, strict=True))
    parent = record.parent_id
    if isinstance(parent, bool) or not isinstance(parent, int):
        raise refuse("parent_id", parent, "an edit's file names its source image by id")
    typed = {name: tuple(value) if isinstance(value, list) else value for name, value in params.items()}
    for name, value in typed.items():
        if name in ("scale", "strength", "prompt", "negative") and value is not None and not isinstance(value, str):
            raise refuse(f"params.{name}", value, "text, as this toolkit writes it")
    return Request(record.operation, None, check_edit(record.operation, parent, typed, where), parent)
