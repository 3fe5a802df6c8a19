"""The sandbox's extensions to the interface, in one place, and the switch that turns them off.

By default the sandbox answers with a few things the interface does not show (see docs/reference/wire-names.md,
the names table): the credit headers on charged answers, ``groupId`` in image metadata, ``sourceImageId``
in EditInfo, and it honours a ``seed`` in the create body. ``SandboxSettings(spec_exact=True)``
answers exactly as the interface shows; the toolkit works fully against both.
"""

from __future__ import annotations

from typing import Any

from .errors import SandboxError

CHARGED_HEADER = "X-Credits-Consumed"
REMAINING_HEADER = "X-Remaining-Credits"
HEADERS = (CHARGED_HEADER, REMAINING_HEADER)
"""Response headers only the extended sandbox sends."""
FIELDS = {"ImageMeta.GenerationInfo": "groupId", "EditInfo": "sourceImageId"}
"""Response fields only the extended sandbox shows (where: name)."""
REQUEST_FIELDS = {"create": "seed"}
"""Request fields only the extended sandbox reads; a spec-exact one ignores them as unknown."""
_SEED_MAX = 2**31 - 1


def charge_headers(settings: Any, charged: int, remaining: int) -> dict[str, str]:
    """The credit headers of a charged 2xx: what it cost (after refunds) and the balance left."""
    if settings.spec_exact:
        return {}
    return {CHARGED_HEADER: str(charged), REMAINING_HEADER: str(remaining)}


def create_seed(settings: Any, value: Any) -> int | None:
    """The ``seed`` of a create body, checked; None in spec-exact mode, where it is an unknown field."""
    if settings.spec_exact or value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _SEED_MAX:
        raise SandboxError("invalid_request", f"seed: an integer from 0 to {_SEED_MAX}")
    return value


def spec_openapi(schema: dict) -> dict:
    """``schema`` without the extensions, for a spec-exact sandbox's ``/openapi.json``."""
    components = schema.get("components", {}).get("schemas", {})
    components.get("CreateBody", {}).get("properties", {}).pop("seed", None)
    components.get("EditInfoOut", {}).get("properties", {}).pop("sourceImageId", None)
    meta = components.get("ImageMetaOut", {}).get("properties", {}).get("GenerationInfo")
    if meta is not None:
        meta["description"] = "blurReason"
    return schema
