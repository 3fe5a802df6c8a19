"""Exceptions raised by imagekit.

ImagekitError
├── ConfigError                        missing or contradictory settings
├── ValidationError                    a request the interface does not allow, refused before sending
├── APIError                           the service answered with a non-2xx status
│   ├── BadRequestError (400)          InvalidRequestError, MalformedJSONError,
│   │                                  InvalidGenerationModeError, InvalidPlatformError,
│   │                                  InvalidAPITypeError, UnsupportedImageSourceError,
│   │                                  InvalidImageError, InvalidMaskError, EmptyMaskError, MaskSizeMismatchError,
│   │                                  InvalidOutpaintError, SVGNotAvailableError, InvalidRequestIdError,
│   │                                  InvalidHostError, InvalidScaleSizeError, InvalidStrengthError,
│   │                                  InvalidTypeError, InvalidQualityError, UnknownPlanError
│   ├── AuthenticationError (401)      WrongAPIKeyError, APIKeyExpiredError, AdminTokenRequiredError,
│   │                                  WrongAdminTokenError
│   ├── PaymentRequiredError (402)     NotEnoughCreditError
│   ├── PermissionDeniedError (403)    NotLoggedInError, StyleNotAllowedError, PremiumRequiredError,
│   │                                  EditLimitExceededError, PromptLimitExceededError,
│   │                                  SpecialLimitExceededError, EnterpriseOnlyError,
│   │                                  ModelNotAvailableError
│   ├── NotFoundError (404)            RouteNotFoundError, ImageNotFoundError, StyleNotFoundError,
│   │                                  CollectionNotFoundError, UserNotFoundError
│   ├── MethodNotAllowedError (405)
│   ├── ConflictError (409)            ImageNotReadyError, EditCancelledError, DuplicateRequestIdError,
│   │                                  EmailTakenError, NotEnterpriseError
│   ├── PayloadTooLargeError (413)     ImageTooLargeError
│   ├── UnsupportedMediaTypeError (415)
│   ├── TooManyRequestsError (429)     SimultaneousLimitExceededError, RateLimitedError
│   └── ServerError (5xx)              InternalServerError (500) > EditFailedError,
│                                      ServiceUnavailableError (503), InsufficientStorageError (507)
├── APIConnectionError                 no response: connect failure, dropped connection
│   └── APITimeoutError                no response in time
├── GenerationFailedError              an image ended in the FAILED state
├── JournalMismatchError               a batch journal belongs to another account
├── BudgetExceededError                a hard budget of a tag value would be passed (nothing sent)
├── LedgerUnavailableError             a shared ledger's database cannot be reached now
├── JournalUnavailableError            a sweep's shared journal was out of reach longer than its leases
├── StorageUnavailableError            a run's store or journal disk is full, unreachable or missing
└── WaitTimeoutError                   an image was still PENDING when the wait ran out

The error name in the body's ``data`` picks the class; an unknown name falls back to the class of its
status. ``status`` is the HTTP status, on a class the one it stands for (0 on the generic classes).
An error is settled when made: its attributes cannot be changed afterwards. Nothing here imports
httpx: ``response`` is whatever the transport layer handed over.

This module maps answers to errors; the classes live in ``_error_base`` (the bases) and
``_error_names`` (one per error name).
"""

from __future__ import annotations

import time
from typing import Any

from . import _error_base, _error_names
from ._error_base import *  # noqa: F403  (re-exported: imagekit.errors is where the classes are imported from)
from ._error_base import APIError, ServerError
from ._error_names import *  # noqa: F403
from ._retry import parse_retry_after

__all__ = [*_error_base.__all__, *_error_names.__all__, "ERRORS_BY_NAME", "ERRORS_BY_STATUS", "error_for",
           "from_response"]


# A traceback names each class where it is imported from, not the private module it lives in.
for _class in (globals()[name] for name in (*_error_base.__all__, *_error_names.__all__)):
    if isinstance(_class, type):
        _class.__module__ = __name__


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
    c.status: c for c in _subclasses(APIError) if "status" in vars(c) and c.status
}
"""HTTP status to the class used when the error name is unknown."""


def error_for(status: int, data: str | None) -> type[APIError]:
    """The exception class for a status and error name, falling back by status."""
    cls = ERRORS_BY_NAME.get(data or "")
    if cls is not None and cls.status == status:
        return cls
    if status in ERRORS_BY_STATUS:
        return ERRORS_BY_STATUS[status]
    return ServerError if status >= 500 else APIError


def from_response(response: Any) -> APIError:
    """Build the exception for a non-2xx response (its body must already be read)."""
    status = response.status_code
    data: str | None = None
    message = ""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        said, text = body.get("data"), body.get("message")
        data = said if isinstance(said, str) else None
        message = text if isinstance(text, str) else ""
    if not message:
        message = (data or "").replace("_", " ") or response.reason_phrase or "error"
    retry_after = parse_retry_after(response.headers.get("Retry-After"), time.time())
    return error_for(status, data)(
        message, status=status, data=data, response=response, retry_after=retry_after
    )
