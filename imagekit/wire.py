"""Names on the wire that the interface spec leaves unshown, in one place.

The spec hides some header, body and query names. The defaults here are the ones the sandbox
implements; a service that spells them differently is reached by overriding them::

    wire = imagekit.Wire(platform_header="X-Client-Platform")
    ik = imagekit.Client(base_url=..., api_key=..., wire=wire)

Names the spec does show (``prompt``, ``canvasSize``, ``mask``...) are written where they are used.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Wire", "DEFAULT_WIRE"]


@dataclass(frozen=True, slots=True)
class Wire:
    """Header, body-field and query-parameter names used on requests and responses."""

    # Headers.
    api_key_header: str = "X-Api-Key"
    platform_header: str = "X-Platform"
    request_id_header: str = "X-Request-Id"
    api_type_header: str = "X-Api-Type"
    credits_charged_header: str = "X-Credits-Consumed"
    credits_remaining_header: str = "X-Remaining-Credits"

    # POST /api/images/create body.
    style_id: str = "styleId"
    collection_id: str = "collectionId"
    random_prompt: str = "randomPrompt"
    initial_prompt: str = "initialPrompt"
    enhanced_prompt: str = "enhancedPrompt"
    caption_prompt: str = "captionPrompt"
    caption_t_prompt: str = "captionTPrompt"
    group_id: str = "groupId"
    count: str = "count"
    is_async: str = "isAsync"
    seed: str = "seed"  # sandbox extension: image i of a request uses seed + i

    # GET /api/images/{id}/binary query.
    is_collection: str = "isCollection"
    watermark: str = "watermark"
    scale_size: str = "scaleSize"
    image_type: str = "type"

    # Edit bodies.
    retry_strength: str = "strength"
    enhance_scale: str = "scaleSize"

    # POST /api/images/cancelEdit/{requestId}: the JSON string answered.
    cancelled: str = "cancelled"
    not_running: str = "not_running"


DEFAULT_WIRE = Wire()
"""The names the sandbox implements."""
