"""imagekit: a client and local sandbox for a credit-metered image generation and editing service.

    import imagekit
    ik = imagekit.connect()                 # IMAGEKIT_BASE_URL/IMAGEKIT_API_KEY, else a local sandbox
    res = ik.create("a lighthouse at dusk", style=1, count=4, ratio="16:9")
    img = res.images[0].enhance("2x")

Importing this package loads only httpx, pydantic and the standard library; the models load with
the first response, the ledger with the first client, workflows and reports when used, Pillow and
NumPy when pixels are touched, asyncio with async code, the sandbox when ``connect()`` needs it.

The packages import one another in layers, without a circle (import-linter's contracts in
pyproject.toml hold both). Two circles remain among the names used only in annotations (under
``TYPE_CHECKING``, never run), on purpose: ``Client`` is named by the resources, handles, workflows,
reports and integrations it makes and is made of, and ``config.ClientOptions`` names the ``Ledger``
a client may be given while the ledger reads the ``Config``. A Protocol for each would only repeat
those classes' signatures.
"""

from typing import TYPE_CHECKING

from . import errors as _errors
from ._retry import RetryPolicy
from .client import AsyncClient, Client
from .config import VERSION as __version__, Config  # noqa: F401  (__version__: the package version)
from .embedded import connect, reproduce
from .errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    BudgetExceededError,
    BudgetWarning,
    ConfigError,
    ConflictError,
    GenerationFailedError,
    ImagekitError,
    InsufficientStorageError,
    InternalServerError,
    JournalMismatchError,
    JournalUnavailableError,
    LedgerUnavailableError,
    MethodNotAllowedError,
    NotEnoughCreditError,
    NotFoundError,
    PayloadTooLargeError,
    PaymentRequiredError,
    PermissionDeniedError,
    RateLimitedError,
    ServerError,
    ServiceUnavailableError,
    SimultaneousLimitExceededError,
    StorageUnavailableError,
    TooManyRequestsError,
    UnsupportedMediaTypeError,
    ValidationError,
    WaitTimeoutError,
)
from .images import AsyncCreateResult, AsyncImage, CreateResult, Image
from .tags import tags
from .wire import Wire

if TYPE_CHECKING:
    from .desk import Desk, review
    from .ledger import Alert, Budget, Ledger
    from .models import (
        CreateResponse,
        EditResult,
        GeneratedImage,
        ImageCaption,
        ImageMeta,
        Plan,
        Style,
        TextPrompt,
        Usage,
        User,
    )
    from .provenance import Provenance, read_provenance
    from .signals import edit_leak, quality
    from .workflows.batches.batch import Batch
    from .workflows.batches.rows import grid
    from .workflows.chain import Chain, chain

__all__ = [
    # clients
    "connect", "Client", "AsyncClient", "Config", "Wire", "RetryPolicy",
    # workflows
    "grid", "chain", "Batch", "Chain", "Ledger", "tags", "Budget", "Alert",
    # quality signals, offline
    "quality", "edit_leak",
    # people in the loop
    "review", "Desk",
    # files: how each was made
    "Provenance", "read_provenance", "reproduce",
    # handles
    "Image", "AsyncImage", "CreateResult", "AsyncCreateResult",
    # models
    "User", "Usage", "Style", "Plan", "CreateResponse", "GeneratedImage", "ImageMeta", "EditResult",
    "TextPrompt", "ImageCaption",
    # errors: the toolkit's own, one class per HTTP status, credits and rate limits (the class of
    # each error name the service sends is in imagekit.errors, and read here too)
    "ImagekitError", "ConfigError", "ValidationError", "APIError", "APIConnectionError", "APITimeoutError",
    "GenerationFailedError", "JournalMismatchError", "WaitTimeoutError", "BudgetExceededError", "BudgetWarning",
    "LedgerUnavailableError", "JournalUnavailableError", "StorageUnavailableError",
    "BadRequestError", "AuthenticationError", "PaymentRequiredError", "NotEnoughCreditError", "PermissionDeniedError",
    "NotFoundError", "MethodNotAllowedError", "ConflictError", "PayloadTooLargeError", "UnsupportedMediaTypeError",
    "TooManyRequestsError", "SimultaneousLimitExceededError", "RateLimitedError",
    "ServerError", "InternalServerError", "ServiceUnavailableError", "InsufficientStorageError",
]

_LAZY = {
    "Ledger": "ledger",
    "Budget": "ledger",
    "Alert": "ledger",
    **dict.fromkeys(("CreateResponse", "EditResult", "GeneratedImage", "ImageCaption", "ImageMeta", "Plan", "Style",
                     "TextPrompt", "Usage", "User"), "models"),
    **dict.fromkeys(("Batch", "Chain", "chain", "grid"), "workflows"),
    **dict.fromkeys(("Provenance", "read_provenance"), "provenance"),
    **dict.fromkeys(("quality", "edit_leak"), "signals"),
    **dict.fromkeys(("review", "Desk"), "desk"),
}


def __getattr__(name: str) -> object:
    # PEP 562: the heavier public names load on first use, so `import imagekit` stays light; the class
    # of each error name (imagekit.errors) is read here too, as it was before it left __all__.
    home = _LAZY.get(name) or ("errors" if name in _errors.__all__ else None)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
