"""Exceptions raised by imagekit.

ImagekitError
├── ConfigError                        missing or contradictory settings
├── APIError                           the service answered with a non-2xx status
│   ├── BadRequestError (400)          InvalidRequestError, MalformedJSONError,
│   │                                  InvalidGenerationModeError, InvalidPlatformError,
│   │                                  InvalidAPITypeError, UnsupportedImageSourceError,
│   │                                  InvalidImageError, InvalidMaskError, EmptyMaskError, MaskSizeMismatchError,
│   │                                  InvalidOutpaintError, SVGNotAvailableError, InvalidRequestIdError
│   ├── AuthenticationError (401)      WrongAPIKeyError, APIKeyExpiredError
│   ├── PaymentRequiredError (402)     NotEnoughCreditError
│   ├── PermissionDeniedError (403)    NotLoggedInError, StyleNotAllowedError, PremiumRequiredError,
│   │                                  EditLimitExceededError, PromptLimitExceededError,
│   │                                  SpecialLimitExceededError, EnterpriseOnlyError,
│   │                                  ModelNotAvailableError
│   ├── NotFoundError (404)            RouteNotFoundError, ImageNotFoundError, StyleNotFoundError,
│   │                                  CollectionNotFoundError
│   ├── MethodNotAllowedError (405)
│   ├── ConflictError (409)            ImageNotReadyError, EditCancelledError, DuplicateRequestIdError
│   ├── PayloadTooLargeError (413)     ImageTooLargeError
│   ├── UnsupportedMediaTypeError (415)
│   ├── TooManyRequestsError (429)     SimultaneousLimitExceededError, RateLimitedError
│   └── ServerError (5xx)              InternalServerError (500) > EditFailedError,
│                                      ServiceUnavailableError (503)
├── APIConnectionError                 no response: connect failure, dropped connection
│   └── APITimeoutError                no response in time
├── GenerationFailedError              an image ended in the FAILED state
├── JournalMismatchError               a batch journal belongs to another account
├── BudgetExceededError                a hard budget of a tag value would be passed (nothing sent)
└── WaitTimeoutError                   an image was still PENDING when the wait ran out

The error name in the body's ``data`` picks the class; an unknown name falls back to the class of its
status. Nothing here imports httpx: ``response`` is whatever the transport layer handed over.
"""

from __future__ import annotations

import time
from typing import Any

from ._retry import parse_retry_after

ENV_BASE_URL = "IMAGEKIT_BASE_URL"
ENV_API_KEY = "IMAGEKIT_API_KEY"


def api_suffix_hint(base_url: str) -> str:
    """The advice for a base URL ending in /api ("" for any other)."""
    if not base_url.rstrip("/").endswith("/api"):
        return ""
    return (f"A base URL ending in /api is probably wrong: every path already starts with /api "
            f"(try {ENV_BASE_URL}={base_url.rstrip('/')[:-4] or '/'}).")


class ImagekitError(Exception):
    """Base class of every exception raised by imagekit."""


class ConfigError(ImagekitError, ValueError):
    """Settings are missing or contradict each other (for example no API key)."""


class APIError(ImagekitError):
    """The service answered with a non-2xx status.

    ``status`` is the HTTP status, ``data`` the spec's error name (None if the body had none),
    ``message`` the human text, ``response`` the HTTP response, ``retry_after`` the seconds from a
    Retry-After header if any.
    """

    status_code: int | None = None  # class-level: the status this class stands for
    error_name: str | None = None  # class-level: the ``data`` name this class stands for

    def __init__(
        self,
        message: str,
        *,
        status: int,
        data: str | None = None,
        response: Any = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.data = data
        self.message = message
        self.response = response
        self.retry_after = retry_after

    @property
    def request(self) -> Any:
        """The HTTP request that got this answer."""
        return None if self.response is None else self.response.request

    def __str__(self) -> str:
        name = f" {self.data}" if self.data else ""
        hint = self.hint()
        return f"{self.status}{name}: {self.message}" + (f"\n{hint}" if hint else "")

    def hint(self) -> str:
        """What to do about it, when a setup mistake is the likely cause ("" otherwise)."""
        return ""

    @property
    def service(self) -> str:
        """scheme://host[:port] of the service that answered ("the service" when unknown)."""
        request = self.request
        return f"{request.url.scheme}://{request.url.netloc.decode()}" if request is not None else "the service"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, data={self.data!r}, message={self.message!r})"


class BadRequestError(APIError):
    """400: the request breaks the interface's rules."""

    status_code = 400


class AuthenticationError(APIError):
    """401: the API key is not accepted."""

    status_code = 401


class PaymentRequiredError(APIError):
    """402: the operation needs credit the account does not have."""

    status_code = 402


class PermissionDeniedError(APIError):
    """403: the caller may not do this (login, plan or limit)."""

    status_code = 403


class NotFoundError(APIError):
    """404: the route or resource does not exist (or is not the caller's)."""

    status_code = 404


class MethodNotAllowedError(APIError):
    """405: the route exists but not for this method."""

    status_code, error_name = 405, "method_not_allowed"


class ConflictError(APIError):
    """409: the resource is in a state that does not allow this."""

    status_code = 409


class PayloadTooLargeError(APIError):
    """413: the request body is too large."""

    status_code, error_name = 413, "payload_too_large"


class UnsupportedMediaTypeError(APIError):
    """415: the request body has a media type the endpoint does not take."""

    status_code, error_name = 415, "unsupported_media_type"


class TooManyRequestsError(APIError):
    """429: too many requests or concurrent generations; see ``retry_after``."""

    status_code = 429


class ServerError(APIError):
    """5xx: the service failed."""


class InternalServerError(ServerError):
    """500: an unexpected failure inside the service."""

    status_code, error_name = 500, "internal_error"


class EditFailedError(InternalServerError):
    """500 edit_failed: the edit engine failed; nothing was charged."""

    error_name = "edit_failed"


class ServiceUnavailableError(ServerError):
    """503: the service is temporarily unavailable; see ``retry_after``."""

    status_code, error_name = 503, "service_unavailable"


# One class per error name. Spelled out (not generated) so tools and readers can find them.
class InvalidRequestError(BadRequestError):
    """400 invalid_request: a field is missing, of the wrong type or out of range."""

    error_name = "invalid_request"


class MalformedJSONError(BadRequestError):
    """400 malformed_json: the body is not valid JSON."""

    error_name = "malformed_json"


class InvalidGenerationModeError(BadRequestError):
    """400 invalid_generation_mode: create needs exactly one of image, style or collection."""

    error_name = "invalid_generation_mode"


class InvalidPlatformError(BadRequestError):
    """400 invalid_platform: the platform tag is not one of web, app, figma, api."""

    error_name = "invalid_platform"


class InvalidAPITypeError(BadRequestError):
    """400 invalid_api_type: the API type is not one the service knows."""

    error_name = "invalid_api_type"


class UnsupportedImageSourceError(BadRequestError):
    """400 unsupported_image_source: the reference image is neither an image path nor a data URL."""

    error_name = "unsupported_image_source"


class InvalidImageError(BadRequestError):
    """400 invalid_image: the image data cannot be decoded."""

    error_name = "invalid_image"


class InvalidMaskError(BadRequestError):
    """400 invalid_mask: the mask is not a PNG or does not fit the image."""

    error_name = "invalid_mask"


class EmptyMaskError(BadRequestError):
    """400 empty_mask: the mask marks nothing."""

    error_name = "empty_mask"


class MaskSizeMismatchError(BadRequestError):
    """400 mask_size_mismatch: the mask's size differs from the image's (it is never stretched)."""

    error_name = "mask_size_mismatch"


class InvalidOutpaintError(BadRequestError):
    """400 invalid_outpaint: canvas, size and location do not describe a valid expansion."""

    error_name = "invalid_outpaint"


class SVGNotAvailableError(BadRequestError):
    """400 svg_not_available: only a vectorized image has an SVG form."""

    error_name = "svg_not_available"


class InvalidRequestIdError(BadRequestError):
    """400 invalid_request_id: the edit request id has characters the service does not accept."""

    error_name = "invalid_request_id"


class WrongAPIKeyError(AuthenticationError):
    """401 wrong_api_key: the API key is invalid."""

    error_name = "wrong_api_key"

    def hint(self) -> str:
        return f"{self.service} does not know this API key: set {ENV_API_KEY} (or api_key=) to a key it issued."


class APIKeyExpiredError(AuthenticationError):
    """401 api_key_expired: the API key has expired."""

    error_name = "api_key_expired"

    def hint(self) -> str:
        return f"The API key for {self.service} has expired: set {ENV_API_KEY} (or api_key=) to a new one."


class NotEnoughCreditError(PaymentRequiredError):
    """402 not_enough_credit: the balance does not cover the operation."""

    error_name = "not_enough_credit"


class NotLoggedInError(PermissionDeniedError):
    """403 not_logged_in: no API key or session was presented."""

    error_name = "not_logged_in"

    def hint(self) -> str:
        return f"{self.service} saw no API key: set {ENV_API_KEY} (or api_key=)."


class StyleNotAllowedError(PermissionDeniedError):
    """403 style_not_allowed: the style is not usable through the API or by this plan."""

    error_name = "style_not_allowed"


class PremiumRequiredError(PermissionDeniedError):
    """403 premium_required: the feature needs a premium plan."""

    error_name = "premium_required"


class EditLimitExceededError(PermissionDeniedError):
    """403 edit_limit_exceeded: the plan's edit count is used up."""

    error_name = "edit_limit_exceeded"


class PromptLimitExceededError(PermissionDeniedError):
    """403 prompt_limit_exceeded: the plan's text-to-prompt count is used up."""

    error_name = "prompt_limit_exceeded"


class SpecialLimitExceededError(PermissionDeniedError):
    """403 special_limit_exceeded: an enterprise per-feature limit is used up."""

    error_name = "special_limit_exceeded"


class EnterpriseOnlyError(PermissionDeniedError):
    """403 enterprise_only: the enterprise API type needs an enterprise account."""

    error_name = "enterprise_only"


class ModelNotAvailableError(PermissionDeniedError):
    """403 model_not_available: no generation model is bound to the account."""

    error_name = "model_not_available"


class RouteNotFoundError(NotFoundError):
    """404 not_found: no such route."""

    error_name = "not_found"

    def hint(self) -> str:
        url = str(self.request.url) if self.request is not None else ""
        doubled = url.find("/api/api/")  # a base URL ending in /api, joined with an /api/... path
        return api_suffix_hint(url[:doubled + 4]) if doubled >= 0 else ""


class ImageNotFoundError(NotFoundError):
    """404 image_not_found: no such image for this caller."""

    error_name = "image_not_found"


class StyleNotFoundError(NotFoundError):
    """404 style_not_found: no such style."""

    error_name = "style_not_found"


class CollectionNotFoundError(NotFoundError):
    """404 collection_not_found: no such collection."""

    error_name = "collection_not_found"


class ImageNotReadyError(ConflictError):
    """409 image_not_ready: the image is still PENDING (or FAILED) and has no binary."""

    error_name = "image_not_ready"


class EditCancelledError(ConflictError):
    """409 edit_cancelled: the edit was cancelled through cancelEdit while it ran."""

    error_name = "edit_cancelled"


class DuplicateRequestIdError(ConflictError):
    """409 duplicate_request_id: the edit request id was used before; send a new one."""

    error_name = "duplicate_request_id"


class ImageTooLargeError(PayloadTooLargeError):
    """413 image_too_large: the image or the result would exceed the size limit."""

    error_name = "image_too_large"


class SimultaneousLimitExceededError(TooManyRequestsError):
    """429 simultaneous_limit_exceeded: the plan's concurrent generations are all running."""

    error_name = "simultaneous_limit_exceeded"


class RateLimitedError(TooManyRequestsError):
    """429 rate_limited: too many requests; wait ``retry_after`` seconds."""

    error_name = "rate_limited"


class APIConnectionError(ImagekitError):
    """No response arrived: the connection failed, dropped or timed out.

    ``may_have_executed`` tells whether the request may have reached the server (and so may have
    been charged). For an edit, ``request_id`` and ``cancel_status`` (the answer of the cancelEdit
    call the client made, or None) say what became of it.
    """

    def __init__(self, message: str, *, may_have_executed: bool, request: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.may_have_executed = may_have_executed
        self.request = request
        self.request_id: str | None = None
        self.cancel_status: str | None = None


class APITimeoutError(APIConnectionError):
    """No response arrived before the timeout."""


class GenerationFailedError(ImagekitError):
    """An image ended in the FAILED state; ``image_id`` and the service's ``message``."""

    def __init__(self, image_id: int, message: str) -> None:
        super().__init__(f"image {image_id} failed: {message}")
        self.image_id = image_id
        self.message = message


class JournalMismatchError(ImagekitError, ValueError):
    """A batch journal was written against another account (or service, or sandbox) than this run's."""


class WaitTimeoutError(ImagekitError, TimeoutError):
    """Waiting for an image to leave PENDING ran out of time."""


class BudgetExceededError(ImagekitError):
    """A hard budget of a tag value would be passed: the operation was refused before it was sent,
    so nothing was charged. ``budget`` is the budget as it stood, ``cost`` the operation's estimate."""

    def __init__(self, message: str, *, budget: Any, cost: float) -> None:
        super().__init__(message)
        self.budget = budget
        self.cost = cost


class BudgetWarning(UserWarning):
    """Spending under a tag value reached its budget's warning share (or passed a soft budget)."""


def _subclasses(cls: type[APIError]) -> list[type[APIError]]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


ERRORS_BY_NAME: dict[str, type[APIError]] = {
    c.error_name: c for c in _subclasses(APIError) if c.error_name is not None
}
"""Error name (the body's ``data``) to exception class."""

ERRORS_BY_STATUS: dict[int, type[APIError]] = {
    c.status_code: c
    for c in _subclasses(APIError)
    if c.status_code is not None and "status_code" in vars(c)
}
"""HTTP status to the class used when the error name is unknown."""


def error_for(status: int, data: str | None) -> type[APIError]:
    """The exception class for a status and error name, falling back by status."""
    cls = ERRORS_BY_NAME.get(data or "")
    if cls is not None and cls.status_code == status:
        return cls
    if status in ERRORS_BY_STATUS:
        return ERRORS_BY_STATUS[status]
    return ServerError if status >= 500 else APIError


def from_response(response: Any) -> APIError:
    """Build the exception for a non-2xx response (its body must already be read)."""
    status = response.status_code
    data, message = None, ""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        data = body["data"] if isinstance(body.get("data"), str) else None
        message = body["message"] if isinstance(body.get("message"), str) else ""
    if not message:
        message = (data or "").replace("_", " ") or response.reason_phrase or "error"
    retry_after = parse_retry_after(response.headers.get("Retry-After"), time.time())
    return error_for(status, data)(
        message, status=status, data=data, response=response, retry_after=retry_after
    )
