"""Prompt helpers: text to prompt and image to prompt."""

from __future__ import annotations

from ._base import Charged


class TextPrompt(Charged):
    """Response of POST /api/images/textToPrompt."""

    initial_prompt: str | None = None
    """The text as given."""
    enhanced_prompt: str | None = None
    """The enhanced prompt."""
    ttp_log_id: int | None = None
    """Id of the text-to-prompt log entry."""


class ImageCaption(Charged):
    """Response of POST /api/images/imageToPrompt."""

    caption_prompt: str | None = None
    """A prompt describing the image."""
    caption_t_prompt: str | None = None
    """The caption prompt, translated into the requested language."""
