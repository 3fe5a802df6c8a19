"""The bases of imagekit's errors: the root, the one class per HTTP status, transport failures and the
toolkit's own failures (the hierarchy is drawn in :mod:`imagekit.errors`)."""


from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = [
    "ENV_BASE_URL",
    "ENV_API_KEY",
    "api_suffix_hint",
    "ImagekitError",
    "ConfigError",
    "ValidationError",
    "APIError",
    "BadRequestError",
    "AuthenticationError",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "NotFoundError",
    "MethodNotAllowedError",
    "ConflictError",
    "PayloadTooLargeError",
    "UnsupportedMediaTypeError",
    "TooManyRequestsError",
    "ServerError",
    "InternalServerError",
    "EditFailedError",
    "ServiceUnavailableError",
    "InsufficientStorageError",
    "APIConnectionError",
    "APITimeoutError",
    "GenerationFailedError",
    "JournalMismatchError",
    "WaitTimeoutError",
    "BudgetExceededError",
    "LedgerUnavailableError",
    "JournalUnavailableError",
    "StorageUnavailableError",
    "BudgetWarning",
]

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


class _Settled:
    """Attributes set once, by ``__init__``: an error tells what happened, and nothing rewrites it later
    (Python's own ``__cause__``, ``__traceback__`` and ``__notes__`` are left alone)."""

    _settled = False

    def __setattr__(self, name: str, value: object) -> None:
        if self._settled and not name.startswith("__"):
            raise AttributeError(f"{type(self).__name__}.{name} is read-only: errors are not changed once made")
        object.__setattr__(self, name, value)

    def _settle(self) -> None:
        object.__setattr__(self, "_settled", True)


class ConfigError(ImagekitError, ValueError):
    """Settings are missing or contradict each other (for example no API key)."""


class ValidationError(ImagekitError, ValueError):
    """A request breaks what the interface allows (a ratio, a count, the generation mode, an edit's
    parameter, a style the account does not have) or a file asks for what the toolkit never writes:
    refused before anything was sent or priced, so nothing was charged. ``field`` and ``value`` name
    the first mistake, ``where`` the row or file it is in (None when it was a call's argument)."""

    def __init__(self, message: str, *, field: str | None = None, value: Any = None, where: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.value = value
        self.where = where


class APIError(_Settled, ImagekitError):
    """The service answered with a non-2xx status.

    ``status`` is the HTTP status, ``data`` the spec's error name (None if the body had none),
    ``message`` the human text, ``response`` the HTTP response, ``retry_after`` the seconds from a
    Retry-After header if any.
    """

    status: int = 0
    """The HTTP status; on a class, the status it stands for (0: any, on the generic classes)."""
    error_name: str | None = None
    """On a class, the ``data`` name it stands for."""

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
        self._settle()

    @property
    def request(self) -> Any:
        """The HTTP request that got this answer."""
        return None if self.response is None else self.response.request

    def __str__(self) -> str:
        name = f" {self.data}" if self.data else ""
        hint = self.hint()
        return f"{self.status}{name}: {self.message}" + (f"\n{hint}" if hint else "")

    def hint(self) -> str:
        """What to do about it, when a setup mistake is the likely cause ("" otherwise): here, a 404
        or 405 without the interface's error body, from a server that is not the service."""
        if self.data is None and self.status in (404, 405) and self.request is not None:
            return (f"{self.service} answered {self.request.method} {self.request.url.path} without the interface's "
                    f"error body: it is probably not the service; check {ENV_BASE_URL} (or base_url=).")
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

    status = 400


class AuthenticationError(APIError):
    """401: the API key is not accepted."""

    status = 401


class PaymentRequiredError(APIError):
    """402: the operation needs credit the account does not have."""

    status = 402


class PermissionDeniedError(APIError):
    """403: the caller may not do this (login, plan or limit)."""

    status = 403


class NotFoundError(APIError):
    """404: the route or resource does not exist (or is not the caller's)."""

    status = 404


class MethodNotAllowedError(APIError):
    """405: the route exists but not for this method."""

    status, error_name = 405, "method_not_allowed"


class ConflictError(APIError):
    """409: the resource is in a state that does not allow this."""

    status = 409


class PayloadTooLargeError(APIError):
    """413: the request body is too large."""

    status, error_name = 413, "payload_too_large"


class UnsupportedMediaTypeError(APIError):
    """415: the request body has a media type the endpoint does not take."""

    status, error_name = 415, "unsupported_media_type"


class TooManyRequestsError(APIError):
    """429: too many requests or concurrent generations; see ``retry_after``."""

    status = 429


class ServerError(APIError):
    """5xx: the service failed."""


class InternalServerError(ServerError):
    """500: an unexpected failure inside the service."""

    status, error_name = 500, "internal_error"


class EditFailedError(InternalServerError):
    """500 edit_failed: the edit engine failed; nothing was charged."""

    error_name = "edit_failed"


class ServiceUnavailableError(ServerError):
    """503: the service is temporarily unavailable; see ``retry_after``."""

    status, error_name = 503, "service_unavailable"


class InsufficientStorageError(ServerError):
    """507 insufficient_storage: the service has no room to store the result; nothing was charged for
    what it could not store. Not retried: it lasts until space is freed on the service's side."""

    status, error_name = 507, "insufficient_storage"


class APIConnectionError(_Settled, ImagekitError):
    """No response arrived: the connection failed, dropped or timed out.

    ``may_have_executed`` tells whether the request may have reached the server (and so may have
    been charged). For an edit, ``request_id`` and ``cancel_status`` (the answer of the cancelEdit
    call the client made, or None) say what became of it.
    """

    def __init__(self, message: str, *, may_have_executed: bool, request: Any = None,
                 request_id: str | None = None, cancel_status: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.may_have_executed = may_have_executed
        self.request = request
        self.request_id = request_id
        self.cancel_status = cancel_status
        self._settle()

    def for_edit(self, request_id: str, cancel_status: str | None) -> APIConnectionError:
        """The same failure (same class) told of an edit: its request id and what its cancel answered."""
        return type(self)(self.message, may_have_executed=self.may_have_executed, request=self.request,
                          request_id=request_id, cancel_status=cancel_status)


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


class LedgerUnavailableError(ImagekitError):
    """A shared ledger's database cannot be reached now (stopped, restarting, or the network is
    down). Work goes on and its entries wait in a local spool; this is raised only by what needs the
    database itself: reading the entries back, or setting a budget."""


class JournalUnavailableError(ImagekitError):
    """A sweep's shared journal could not be reached for as long as this process's leases last (its
    database stopped, or the network is down): the run stops here, and its rows go to the other
    processes once their leases run out. Running it again when the database is back goes on."""


class StorageUnavailableError(ImagekitError):
    """Where the toolkit keeps files (a run's ``out_dir``, a local folder or an object store, or a
    journal's disk) cannot take one now: the disk is full, the store cannot be reached, or the bucket
    does not exist. A run stops its new work here (``Batch.stopped`` says why); what was made stays on
    the service, and running again once the store is back stores it without paying again."""


class BudgetWarning(UserWarning):
    """Spending under a tag value reached its budget's warning share (or passed a soft budget)."""


_caller_site: ContextVar[tuple[str, int, dict[str, Any]] | None] = ContextVar("imagekit_caller_site", default=None)
"""Where the user's code made the call being served (``working_for_caller``): file, line and module
globals. A context variable, so the tasks and threads the call runs on (a batch's event loop, its
worker threads) see it."""


def _user_frame() -> Any:
    """The innermost frame of this thread that is neither imagekit's nor contextlib's (a context
    manager's plumbing): the user's code. None when there is none."""
    import contextlib
    import os
    import sys

    ours = (os.path.dirname(os.path.abspath(__file__)) + os.sep, os.path.abspath(contextlib.__file__))
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(ours):
        frame = frame.f_back  # type: ignore[assignment]
    return frame


@contextmanager
def working_for_caller() -> Iterator[None]:
    """Warnings raised by what runs inside the block, in whichever thread or task it goes on (a
    batch's event loop), point at the user's line that entered it."""
    frame = _user_frame()
    token = _caller_site.set((frame.f_code.co_filename, frame.f_lineno, frame.f_globals) if frame is not None else None)
    try:
        yield
    finally:
        _caller_site.reset(token)


def warn_caller(message: str, category: type[Warning]) -> None:
    """Warn with the line of the user's code that called into imagekit, not ours: the one that made
    the call being served (``working_for_caller``), else the innermost on this thread's stack."""
    import sys
    import warnings

    site = _caller_site.get()
    if site is not None:
        filename, lineno, module_globals = site
        warnings.warn_explicit(message, category, filename, lineno, module=module_globals.get("__name__", "__main__"),
                               registry=module_globals.setdefault("__warningregistry__", {}),
                               module_globals=module_globals)
        return
    frame, level, below = _user_frame(), 1, sys._getframe(0)  # stacklevel 1: this function
    while below is not None and below is not frame:
        level, below = level + 1, below.f_back  # type: ignore[assignment]
    warnings.warn(message, category, stacklevel=level)
