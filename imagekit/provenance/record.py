"""What a file says about how its image was made: the request (a create's prompt, style, ratio and
count; an edit's parent and operation), the image and request ids, the credits and the service.

Stored as flat text fields (name -> text), the form every container holds: PNG text chunks, XMP
properties. The service is its lasting name: a base URL without user, password or query (never a
key), or the embedded sandbox's data id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from ..config import SANDBOX_SERVICE, VERSION, service_of_url
from ..validation import image_id_of

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["Provenance", "SOFTWARE", "file_service", "service_of", "CREATE_PARAMS", "NOT_KEPT", "UNKNOWN"]

SOFTWARE = f"imagekit {VERSION}"
CREATE_PARAMS = ("collection", "image", "seed", "random_prompt", "initial_prompt", "enhanced_prompt",
                 "caption_prompt", "caption_t_prompt", "platform", "api_type")
"""Create options kept in ``params`` (prompt, style, ratio and count have fields of their own)."""
NOT_KEPT = "<not kept>"
"""What stands in a record for a value too large or too private to write into a file (a mask, a
local reference image): such a request cannot be sent again from the file."""
UNKNOWN = "unknown"
"""The operation of an image whose request the service does not show (a file saved from ``ik.image(id)``)."""
_RATIOS = {(1, 1): "1:1", (3, 4): "3:4", (4, 3): "4:3", (9, 16): "9:16", (16, 9): "16:9"}


def file_service(config: Config) -> str:
    """The service a file names for a client's images: the embedded sandbox by its data's id (its
    port is new each session), any other by its base URL (``Config.service`` may be a name people
    chose, which says nothing to another machine)."""
    return config.service if config.service.startswith(f"{SANDBOX_SERVICE} ") else config.base_url


def service_of(service: str) -> str:
    """A service as a file may show it: its lasting name (``Config.service``: an embedded sandbox's
    ``imagekit sandbox <its data's id>``, whose port is new each session), or a base URL's scheme,
    host, port and path only (never a user, password or query)."""
    if service.startswith(f"{SANDBOX_SERVICE} "):
        return service
    return service_of_url(service)


@dataclass(frozen=True)
class Provenance:
    """How one image was made, as the files the toolkit writes carry it (``read_provenance``)."""

    image_id: int
    """The image's id on its service."""
    operation: str = "create"
    """``create``, or the edit that made it, as its request names it (enhance, removeBg...)."""
    prompt: str | None = None
    """A create's prompt."""
    style: int | None = None
    """A create's style id."""
    ratio: str | None = None
    """A create's ratio."""
    count: int | None = None
    """Images the create asked for."""
    parent_id: int | None = None
    """An edit's source image."""
    params: dict[str, Any] = field(default_factory=dict)
    """The rest of the request: other create options (seed, collection...), an edit's parameters."""
    request_id: str | None = None
    """An edit's request id; a batch create's group id."""
    credits: float | None = None
    """Credits the image cost (a create's share per image), when known."""
    service: str | None = None
    """The service that made it (``service_of``)."""
    software: str = SOFTWARE
    """What wrote the file."""

    @classmethod
    def of_create(cls, image_id: int, prompt: str, options: Mapping[str, Any], *, request_id: str | None = None,
                  credits: float | None = None, service: str | None = None) -> Provenance:
        """The record of an image made by a create with these options (``Images.create``'s or a
        batch row's)."""
        style = options.get("style")
        style = getattr(style, "style_id", style)
        params = {name: _kept(name, options[name]) for name in CREATE_PARAMS if options.get(name) is not None}
        return cls(int(image_id), "create", prompt, None if style is None else int(style), options.get("ratio"),
                   int(options.get("count") or 1), params=params, request_id=request_id or options.get("group_id"),
                   credits=credits, service=service_of(service) if service else None)

    @classmethod
    def of_meta(cls, image_id: int, meta: Any, *, service: str | None = None) -> Provenance:
        """The record of an image known only by its metadata (``GET /api/images/{id}``): what the
        service shows (its credits, a collection image's prompt, the ratio of its resolution, a group
        id), the request that made it not (so it cannot be sent again from the file)."""
        collection = getattr(meta, "collection_info", None)
        generation = getattr(meta, "generation_info", None)
        credits = getattr(meta, "credit_cost", None)
        return cls(int(image_id), UNKNOWN, getattr(collection, "prompt_text", None) or None,
                   ratio=_ratio_of(getattr(meta, "resolution", None)),
                   request_id=getattr(generation, "group_id", None) or None,
                   credits=None if credits is None else float(credits),
                   service=service_of(service) if service else None)

    @classmethod
    def of_edit(cls, image_id: int, operation: str, parent_id: int | None, params: Mapping[str, Any], *,
                request_id: str | None = None, credits: float | None = None,
                service: str | None = None) -> Provenance:
        """The record of an image made by an edit of ``parent_id``."""
        return cls(int(image_id), operation, parent_id=parent_id, request_id=request_id, credits=credits,
                   params={name: _kept(name, value) for name, value in params.items()},
                   service=service_of(service) if service else None)

    def completed(self, **known: Any) -> Provenance:
        """This record with the values it lacks taken from ``known`` (credits, service...)."""
        missing = {name: value for name, value in known.items() if getattr(self, name) is None and value is not None}
        if "service" in missing:
            missing["service"] = service_of(missing["service"])
        return replace(self, **missing)

    def text_fields(self) -> dict[str, str]:
        """The record as name -> text (empty values left out), the form files hold it in."""
        values = {name: value for name, value in asdict(self).items() if value not in (None, {})}
        return {name: value if isinstance(value, str) else json.dumps(value, sort_keys=True)
                for name, value in values.items()}

    @classmethod
    def from_text_fields(cls, values: Mapping[str, str]) -> Provenance:
        """A record from ``text_fields``' form (unknown names ignored)."""
        known = {f.name: f.type for f in fields(cls)}
        parsed: dict[str, Any] = {}
        for name, text in values.items():
            if name in known:
                try:
                    parsed[name] = text if known[name] in ("str", "str | None") else json.loads(text)
                except ValueError as exc:
                    raise ValueError(f"{name} = {text[:40]!r}: not the JSON this toolkit writes") from exc
        if not isinstance(parsed.get("image_id"), int):
            raise ValueError("no image id: not an imagekit provenance record")
        return cls(**parsed)

    def describe(self) -> str:
        """The request as a call: ``create('a fox', style=3, ratio='16:9', count=1)``, ``enhance(#12, scale='2x')``."""
        if self.operation == UNKNOWN:
            shown = {"prompt": self.prompt, "ratio": self.ratio, "credits": self.credits}
            known = ", ".join(f"{k}={v!r}" for k, v in shown.items() if v is not None)
            return f"image #{self.image_id}, made by a request the service does not show" + (f" ({known})" if known else "")
        if self.operation == "create":
            shown = {"style": self.style, "ratio": self.ratio, "count": self.count, **self.params}
            args = [repr(self.prompt)] + [f"{k}={v!r}" for k, v in shown.items() if v is not None]
        else:
            args = [f"#{self.parent_id}"] + [f"{k}={v!r}" for k, v in self.params.items()]
        return f"{self.operation}({', '.join(args)})"


def _ratio_of(resolution: Any) -> str | None:
    """The ratio a ``WxH`` resolution is drawn at, when it is one the interface names."""
    width, _, height = str(resolution or "").partition("x")
    if not (width.isdigit() and height.isdigit() and int(width) and int(height)):
        return None
    w, h = int(width), int(height)
    return next((ratio for (a, b), ratio in _RATIOS.items() if w * b == h * a), None)


def _kept(name: str, value: Any) -> Any:
    """A request value as a file keeps it: ids and plain values; pixels and masks are not kept, nor a
    reference image other than by its id (a local path or a URL is private to whoever sent it)."""
    value = getattr(value, "id", value)  # an image handle: its id
    if value is None:
        return None
    if name == "image":
        try:
            return image_id_of(value)
        except ValueError:
            return NOT_KEPT
    if isinstance(value, (str, int, float, bool)) and not (isinstance(value, str) and value.startswith("data:")):
        return value
    if isinstance(value, (tuple, list)) and all(isinstance(v, (int, float)) for v in value):
        return list(value)
    return NOT_KEPT
