"""Lenient models of the service's resources, one module per resource family.

The model classes load on first use (``imagekit.models.User``, or the first response parsed into
one): building some forty pydantic classes is most of what importing them costs, and a script that
never reads a response should not pay it. The status values load at once.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .status import COMPLETED, FAILED, PENDING

if TYPE_CHECKING:
    from ._base import Charged, Resource
    from .edits import EditedImage, EditInfo, EditResult
    from .images import (
        CollectionInfo,
        CreateResponse,
        DownloadLogEntry,
        GeneratedImage,
        GenerationInfo,
        ImageMeta,
        ImageRef,
        Reaction,
        UpscaledEntry,
    )
    from .plans import (
        AuthUserEnterprise,
        AuthUserPlan,
        CreditCostInfo,
        Enterprise,
        GenerationModel,
        Plan,
        PriceProperty,
    )
    from .prompts import ImageCaption, TextPrompt
    from .users import EnterpriseDownload, Style, Usage, User

__all__ = [
    "AuthUserEnterprise", "AuthUserPlan", "COMPLETED", "CollectionInfo", "CreateResponse",
    "CreditCostInfo", "DownloadLogEntry", "EditInfo", "EditResult", "EditedImage", "Enterprise",
    "EnterpriseDownload", "FAILED", "GeneratedImage", "GenerationInfo", "GenerationModel",
    "ImageCaption", "ImageMeta", "ImageRef", "PENDING", "Plan", "PriceProperty", "Reaction",
    "Charged", "Resource", "Style", "TextPrompt", "UpscaledEntry", "Usage", "User",
]

_HOMES = {
    "_base": ("Charged", "Resource"),
    "edits": ("EditedImage", "EditInfo", "EditResult"),
    "images": ("CollectionInfo", "CreateResponse", "DownloadLogEntry", "GeneratedImage", "GenerationInfo",
               "ImageMeta", "ImageRef", "Reaction", "UpscaledEntry"),
    "plans": ("AuthUserEnterprise", "AuthUserPlan", "CreditCostInfo", "Enterprise", "GenerationModel", "Plan",
              "PriceProperty"),
    "prompts": ("ImageCaption", "TextPrompt"),
    "users": ("EnterpriseDownload", "Style", "Usage", "User"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> type:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    model: type = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = model  # later lookups skip this function
    return model


def __dir__() -> list[str]:
    return sorted(__all__)
