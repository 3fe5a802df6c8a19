"""imagekit: a client and local sandbox for a credit-metered image generation and editing service.

    import imagekit
    ik = imagekit.connect()                 # IMAGEKIT_BASE_URL/IMAGEKIT_API_KEY, else a local sandbox
    res = ik.create("a lighthouse at dusk", style=1, count=4, ratio="16:9")
    img = res.images[0].enhance("2x")

Importing this package loads only httpx, pydantic and the standard library; the models load with
the first response, the ledger with the first client, workflows and reports when used, Pillow and
NumPy when pixels are touched, asyncio with async code, the sandbox when ``connect()`` needs it.
"""

from typing import TYPE_CHECKING

from ._retry import RetryPolicy
from .client import AsyncClient, Client
from .config import VERSION as __version__, Config  # noqa: F401  (__version__: the package version)
from .embedded import connect
from .errors import (
    AdminTokenRequiredError,
    APIConnectionError,
    APIError,
    APIKeyExpiredError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    BudgetExceededError,
    BudgetWarning,
    CollectionNotFoundError,
    ConfigError,
    ConflictError,
    DuplicateRequestIdError,
    EditCancelledError,
    EditFailedError,
    EditLimitExceededError,
    EmailTakenError,
    EmptyMaskError,
    EnterpriseOnlyError,
    GenerationFailedError,
    ImagekitError,
    ImageNotFoundError,
    ImageNotReadyError,
    ImageTooLargeError,
    InsufficientStorageError,
    InternalServerError,
    InvalidAPITypeError,
    InvalidGenerationModeError,
    InvalidHostError,
    InvalidImageError,
    InvalidMaskError,
    InvalidOutpaintError,
    InvalidPlatformError,
    InvalidQualityError,
    InvalidRequestError,
    InvalidRequestIdError,
    InvalidScaleSizeError,
    InvalidStrengthError,
    InvalidTypeError,
    JournalMismatchError,
    JournalUnavailableError,
    LedgerUnavailableError,
    MalformedJSONError,
    MaskSizeMismatchError,
    MethodNotAllowedError,
    ModelNotAvailableError,
    NotEnoughCreditError,
    NotEnterpriseError,
    NotFoundError,
    NotLoggedInError,
    PayloadTooLargeError,
    PaymentRequiredError,
    PermissionDeniedError,
    PremiumRequiredError,
    PromptLimitExceededError,
    RateLimitedError,
    RouteNotFoundError,
    ServerError,
    ServiceUnavailableError,
    SimultaneousLimitExceededError,
    SpecialLimitExceededError,
    StorageUnavailableError,
    StyleNotAllowedError,
    StyleNotFoundError,
    SVGNotAvailableError,
    TooManyRequestsError,
    UnknownPlanError,
    UnsupportedImageSourceError,
    UnsupportedMediaTypeError,
    UserNotFoundError,
    ValidationError,
    WaitTimeoutError,
    WrongAdminTokenError,
    WrongAPIKeyError,
)
from .images import AsyncCreateResult, AsyncImage, CreateResult, Image
from .tags import tags
from .wire import Wire

if TYPE_CHECKING:
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
    from .review import Desk, review
    from .workflows.batch import Batch
    from .workflows.chain import Chain, chain
    from .workflows.reproduce import reproduce
    from .workflows.rows import grid

__all__ = [
    # clients
    "connect", "Client", "AsyncClient", "Config", "Wire", "RetryPolicy",
    # workflows
    "grid", "chain", "Batch", "Chain", "Ledger", "tags", "Budget", "Alert",
    # people in the loop
    "review", "Desk",
    # files: how each was made
    "Provenance", "read_provenance", "reproduce",
    # handles
    "Image", "AsyncImage", "CreateResult", "AsyncCreateResult",
    # models
    "User", "Usage", "Style", "Plan", "CreateResponse", "GeneratedImage", "ImageMeta", "EditResult",
    "TextPrompt", "ImageCaption",
    # errors
    "ImagekitError", "ConfigError", "ValidationError", "APIError", "APIConnectionError", "APITimeoutError",
    "GenerationFailedError", "JournalMismatchError", "WaitTimeoutError", "BudgetExceededError", "BudgetWarning",
    "LedgerUnavailableError", "JournalUnavailableError", "StorageUnavailableError",
    "BadRequestError", "InvalidRequestError", "MalformedJSONError", "InvalidGenerationModeError",
    "InvalidPlatformError", "InvalidAPITypeError", "UnsupportedImageSourceError", "InvalidImageError",
    "InvalidMaskError", "EmptyMaskError", "MaskSizeMismatchError", "InvalidOutpaintError", "SVGNotAvailableError", "InvalidRequestIdError",
    "InvalidHostError", "InvalidScaleSizeError", "InvalidStrengthError", "InvalidTypeError", "InvalidQualityError",
    "UnknownPlanError",
    "AuthenticationError", "WrongAPIKeyError", "APIKeyExpiredError", "AdminTokenRequiredError", "WrongAdminTokenError",
    "PaymentRequiredError", "NotEnoughCreditError",
    "PermissionDeniedError", "NotLoggedInError", "StyleNotAllowedError", "PremiumRequiredError",
    "EditLimitExceededError", "PromptLimitExceededError", "SpecialLimitExceededError", "EnterpriseOnlyError",
    "ModelNotAvailableError",
    "NotFoundError", "RouteNotFoundError", "ImageNotFoundError", "StyleNotFoundError",
    "CollectionNotFoundError", "UserNotFoundError",
    "MethodNotAllowedError",
    "ConflictError", "ImageNotReadyError", "EditCancelledError", "DuplicateRequestIdError", "EmailTakenError",
    "NotEnterpriseError",
    "PayloadTooLargeError", "ImageTooLargeError",
    "UnsupportedMediaTypeError",
    "TooManyRequestsError", "SimultaneousLimitExceededError", "RateLimitedError",
    "ServerError", "InternalServerError", "EditFailedError", "ServiceUnavailableError",
    "InsufficientStorageError",
]

_LAZY = {
    "Ledger": "ledger",
    "Budget": "ledger",
    "Alert": "ledger",
    **dict.fromkeys(("CreateResponse", "EditResult", "GeneratedImage", "ImageCaption", "ImageMeta", "Plan", "Style",
                     "TextPrompt", "Usage", "User"), "models"),
    **dict.fromkeys(("Batch", "Chain", "chain", "grid"), "workflows"),
    **dict.fromkeys(("Provenance", "read_provenance"), "provenance"),
    "reproduce": "workflows.reproduce",
    **dict.fromkeys(("review", "Desk"), "review"),
}


def __getattr__(name: str) -> object:
    # PEP 562: the heavier public names load on first use, so `import imagekit` stays light.
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
