"""Prompt helpers: text to an enhanced prompt, image to caption prompts."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from .. import models  # the model classes load on the first response (see imagekit.models)
from .._http import Call, Response, charge_of
from ..config import Config
from ..media import ImageSource, image_source
from ._common import AsyncNamespace, Namespace, compact, parse, platform_headers

if TYPE_CHECKING:
    from ..models import Charged, ImageCaption, Style, TextPrompt

C = TypeVar("C", bound="Charged")


def text_call(config: Config, text: str, style: Style | int | None) -> Call:
    """POST /api/images/textToPrompt."""
    body = compact({"text": text, "styleId": getattr(style, "style_id", style)})
    return Call("POST", "/api/images/textToPrompt", json=body, headers=platform_headers(config),
                operation="textToPrompt")


def image_call(config: Config, image: ImageSource, language: str | None) -> Call:
    """POST /api/images/imageToPrompt."""
    headers = platform_headers(config) | ({"Accept-Language": language} if language else {})
    return Call("POST", "/api/images/imageToPrompt", json={"image": image_source(image)}, headers=headers,
                operation="imageToPrompt")


def _charged(model: type[C], response: Response, config: Config) -> C:
    result = parse(model, response)
    result._charge = charge_of(response, config)
    return result


class Prompts(Namespace):
    """Writing prompts."""

    def text_to_prompt(self, text: str, *, style: Style | int | None = None) -> TextPrompt:
        """An enhanced prompt from ``text``, optionally for a style."""
        return _charged(models.TextPrompt, self._http.send(text_call(self._config, text, style)), self._config)

    def image_to_prompt(self, image: ImageSource, *, language: str | None = "en") -> ImageCaption:
        """Caption prompts describing ``image`` (handle, id, path, bytes, PIL image, URL or data URL)."""
        response = self._http.send(image_call(self._config, image, language))
        return _charged(models.ImageCaption, response, self._config)


class AsyncPrompts(AsyncNamespace):
    """Writing prompts (awaitable)."""

    async def text_to_prompt(self, text: str, *, style: Style | int | None = None) -> TextPrompt:
        """An enhanced prompt from ``text``, optionally for a style."""
        response = await self._http.send(text_call(self._config, text, style))
        return _charged(models.TextPrompt, response, self._config)

    async def image_to_prompt(self, image: ImageSource, *, language: str | None = "en") -> ImageCaption:
        """Caption prompts describing ``image`` (handle, id, path, bytes, PIL image, URL or data URL)."""
        response = await self._http.send(image_call(self._config, image, language))
        return _charged(models.ImageCaption, response, self._config)
