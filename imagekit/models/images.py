"""Images: generated images, image metadata and the create response."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ._base import Number, Resource, Timestamp
from .status import COMPLETED, FAILED, PENDING

__all__ = ["COMPLETED", "FAILED", "PENDING", "CollectionInfo", "CreateResponse", "DownloadLogEntry", "GeneratedImage",
           "GenerationInfo", "ImageMeta", "ImageRef", "Reaction", "UpscaledEntry"]


class GenerationInfo(Resource):
    """How an image was generated."""

    original_prompt: str | None = None
    """The prompt as given."""
    super_: str | None = Field(None, alias="super")
    """Major category code of the style."""
    main: str | None = None
    """Middle category code of the style."""
    variation_id: int | None = None
    """Variation id (the sandbox puts the image's seed here)."""
    group_id: str | None = None
    """Group id."""
    blur_reason: str | None = None
    """Why the image is blurred, if it is."""


class DownloadLogEntry(Resource):
    """A download of an image."""

    image_id: int | None = None
    """Image id."""
    user_id: int | None = None
    """User id."""


class CollectionInfo(Resource):
    """Collection details of an image."""

    enabled: bool | None = None
    """In the collection."""
    is2x: bool | None = Field(None, alias="is2x")
    """A 2x version exists."""
    collection_en_tags: list[dict[str, Any]] | None = Field(None, alias="CollectionEnTags")
    """English tags, each ``{"title": ...}``."""
    collection_ko_tags: list[dict[str, Any]] | None = Field(None, alias="CollectionKoTags")
    """Korean tags, each ``{"title": ...}``."""
    style: dict[str, Any] | None = Field(None, alias="Style")
    """The style: ``{"main": ..., "mainText": ...}``."""
    theme: list[dict[str, Any]] | None = Field(None, alias="Theme")
    """Themes, each ``{"code": ..., "nameText": ...}``."""
    prompt_text: str | None = None
    """Prompt text."""


class ImageRef(Resource):
    """A reference to an image nested in another object."""

    image_id: int | None = None
    """Image id."""
    owner_id: int | None = None
    """Owner id."""
    download_log: list[DownloadLogEntry] | None = Field(None, alias="DownloadLog")
    """Downloads of the image."""
    collection_info: CollectionInfo | None = Field(None, alias="CollectionInfo")
    """Collection details."""


class UpscaledEntry(Resource):
    """An upscaled (or purchased) version of an image."""

    image_id: int | None = None
    """Image id."""
    type: str | None = None
    """Kind of version."""
    scale_size: str | None = None
    """Scale: ``1x``, ``2x``, ``4x`` or ``8x``."""
    image: ImageRef | None = Field(None, alias="Image")
    """The image."""


class Reaction(Resource):
    """A like or dislike; holds the caller's id if the caller reacted."""

    like_id: int | None = None
    """Like id (likes only)."""
    dislike_id: int | None = None
    """Dislike id (dislikes only)."""
    user_id: int | None = None
    """User id."""
    image_id: int | None = None
    """Image id."""
    created_at: Timestamp = None
    """When."""
    platform: str | None = None
    """Platform tag."""


class GeneratedImage(Resource):
    """An image in the create response."""

    image_id: int | None = None
    """Id."""
    created_at: Timestamp = None
    """Creation time."""
    generation_status: str | None = None
    """``PENDING``, ``COMPLETED`` or ``FAILED``."""
    generation_error: str | None = None
    """Error message when FAILED."""
    resolution: str | None = None
    """Resolution, WxH."""
    owner_id: int | None = None
    """Owner id."""
    etc: str | None = None
    """Extra data (meaning not documented)."""
    bookmarked: bool | None = None
    """Bookmarked."""
    base64: str | None = Field(None, repr=False)
    """Image data as base64 (kept out of the repr)."""
    mime_type: str | None = None
    """Media type of the image."""
    bought: list[Any] | None = Field(None, alias="Bought")
    """Purchase entries."""
    bookmarks: list[Any] | None = Field(None, alias="Bookmarks")
    """Bookmark entries."""
    upscaled: list[UpscaledEntry] | None = Field(None, alias="Upscaled")
    """Upscaled versions."""
    generation_info: GenerationInfo | None = Field(None, alias="GenerationInfo")
    """How the image was generated."""


class ImageMeta(Resource):
    """Metadata about an image (GET /api/images/{id})."""

    image_id: int | None = None
    """Id."""
    credit_cost: Number | None = None
    """Credit cost."""
    created_at: Timestamp = None
    """Creation time."""
    generation_status: str | None = None
    """``PENDING``, ``COMPLETED`` or ``FAILED``."""
    generation_error: str | None = None
    """Error message when FAILED."""
    resolution: str | None = None
    """Resolution, WxH."""
    owner_id: int | None = None
    """Owner id."""
    bookmarked: bool | None = None
    """Bookmarked."""
    owner: dict[str, Any] | None = Field(None, alias="Owner")
    """Owner: ``{"name": ..., "profileImage": ...}``."""
    upscaled: list[UpscaledEntry] | None = Field(None, alias="Upscaled")
    """Upscaled versions."""
    download_log: list[DownloadLogEntry] | None = Field(None, alias="DownloadLog")
    """Downloads."""
    collection_info: CollectionInfo | None = Field(None, alias="CollectionInfo")
    """Collection details."""
    generation_info: GenerationInfo | None = Field(None, alias="GenerationInfo")
    """Generation details (the spec lists ``blurReason``)."""
    upscale_info: UpscaledEntry | None = Field(None, alias="UpscaleInfo")
    """The image this one upscales, if any."""
    bought: list[UpscaledEntry] | None = Field(None, alias="Bought")
    """Purchases."""
    likes: list[Reaction] | None = Field(None, alias="Likes")
    """Likes."""
    dislikes: list[Reaction] | None = Field(None, alias="Dislikes")
    """Dislikes."""


class CreateResponse(Resource):
    """The create response: the images and the three balances after the charge."""

    images: list[GeneratedImage] = []
    """The generated images (PENDING when created asynchronously)."""
    default_credit: Number | None = None
    """Credit balance."""
    daily_credit: Number | None = None
    """Daily credit."""
    monthly_credit: Number | None = None
    """Monthly credit."""
