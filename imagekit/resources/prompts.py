"""Prompt helpers: text to an enhanced prompt, image to caption prompts."""

from __future__ import annotations

from typing import Any

from .._http import Call, Response, charge_of
from ..config import Config
from ..models import ImageCaption, TextPrompt
from ._common import Namespace, compact, parse, platform_headers
from ._media import image_source


def text_call(config: Config, text: str, style: Any) -> Call:
    """POST /api/images/textToPrompt."""
    body = compact({"text": text, "styleId": getattr(style, "style_id", style)})
    return Call("POST", "/api/images/textToPrompt", json=body, headers=platform_headers(config),
                operation="textToPrompt")


def image_call(config: Config, image: Any, language: str | None) -> Call:
    """POST /api/images/imageToPrompt."""
    headers = platform_headers(config) | ({"Accept-Language": language} if language else {})
    return Call("POST", "/api/images/imageToPrompt", json={"image": image_source(image)}, headers=headers,
                operation="imageToPrompt")


def _charged(model: type, response: Response, config: Config) -> Any:
    result = parse(model, response)
    result._charge = charge_of(response, config)
    return result


class Prompts(Namespace):
    """Writing prompts."""

    def text_to_prompt(self, text: str, *, style: Any = None) -> TextPrompt:
        """An enhanced prompt from ``text``, optionally for a style."""
        return _charged(TextPrompt, self._http.send(text_call(self._config, text, style)), self._config)

    def image_to_prompt(self, image: Any, *, language: str | None = "en") -> ImageCaption:
        """Caption prompts describing ``image`` (handle, id, path, bytes, PIL image, URL or data URL)."""
        response = self._http.send(image_call(self._config, image, language))
        return _charged(ImageCaption, response, self._config)


class AsyncPrompts(Namespace):
    """Writing prompts (awaitable)."""

    async def text_to_prompt(self, text: str, *, style: Any = None) -> TextPrompt:
        """An enhanced prompt from ``text``, optionally for a style."""
        return _charged(TextPrompt, await self._http.send(text_call(self._config, text, style)), self._config)

    async def image_to_prompt(self, image: Any, *, language: str | None = "en") -> ImageCaption:
        """Caption prompts describing ``image`` (handle, id, path, bytes, PIL image, URL or data URL)."""
        response = await self._http.send(image_call(self._config, image, language))
        return _charged(ImageCaption, response, self._config)
