"""imagekit: a client and local sandbox for a credit-metered image generation and editing service.

    import imagekit
    ik = imagekit.connect()                 # IMAGEKIT_BASE_URL/IMAGEKIT_API_KEY, else a local sandbox
    res = ik.create("a lighthouse at dusk", style=1, count=4, ratio="16:9")
    img = res.images[0].enhance("2x")

Importing this package loads only httpx, pydantic and the standard library; Pillow and NumPy load
when pixels are touched, the sandbox when ``connect()`` needs it.
"""

from ._retry import RetryPolicy
from .client import AsyncClient, Client, connect
from .config import VERSION as __version__, Config
from .errors import (
    AdminTokenRequiredError,
    APIConnectionError,
    APIError,
    APIKeyExpiredError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
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
    StyleNotAllowedError,
    StyleNotFoundError,
    SVGNotAvailableError,
    TooManyRequestsError,
    UnknownPlanError,
    UnsupportedImageSourceError,
    UnsupportedMediaTypeError,
    UserNotFoundError,
    WaitTimeoutError,
    WrongAdminTokenError,
    WrongAPIKeyError,
)
from .images import AsyncCreateResult, AsyncImage, CreateResult, Image
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
from .ledger import Ledger
from .wire import Wire
from .workflows import Batch, Chain, chain, grid

__all__ = [
    # clients
    "connect", "Client", "AsyncClient", "Config", "Wire", "RetryPolicy",
    # workflows
    "grid", "chain", "Batch", "Chain", "Ledger",
    # handles
    "Image", "AsyncImage", "CreateResult", "AsyncCreateResult",
    # models
    "User", "Usage", "Style", "Plan", "CreateResponse", "GeneratedImage", "ImageMeta", "EditResult",
    "TextPrompt", "ImageCaption",
    # errors
    "ImagekitError", "ConfigError", "APIError", "APIConnectionError", "APITimeoutError",
    "GenerationFailedError", "JournalMismatchError", "WaitTimeoutError",
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
]
