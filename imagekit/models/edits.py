"""The result every edit operation returns."""

from __future__ import annotations

from pydantic import Field

from ._base import Resource
from .images import GenerationInfo


class EditInfo(GenerationInfo):
    """How an edited image came about (same fields as GenerationInfo)."""


class EditedImage(Resource):
    """The image an edit produced."""

    image_id: int | None = None
    """Id of the new image."""
    resolution: str | None = None
    """Resolution, WxH."""
    scale_size: str | None = None
    """Scale: ``1x`` (the original size), ``2x``, ``4x`` or ``8x``."""
    owner_id: int | None = None
    """Owner id."""
    edit_info: EditInfo | None = Field(None, alias="EditInfo")
    """Edit details."""


class EditResult(Resource):
    """Response of every edit endpoint."""

    image: EditedImage | None = None
    """The new image."""
