"""One class per error name the service answers (the body's ``data``); spelled out, not generated, so
tools and readers can find them. :mod:`imagekit.errors` maps names to them."""

from __future__ import annotations

from ._error_base import (
    ENV_API_KEY,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    NotFoundError,
    PayloadTooLargeError,
    PaymentRequiredError,
    PermissionDeniedError,
    TooManyRequestsError,
    api_suffix_hint,
)

__all__ = [
    "InvalidRequestError",
    "MalformedJSONError",
    "InvalidGenerationModeError",
    "InvalidPlatformError",
    "InvalidAPITypeError",
    "UnsupportedImageSourceError",
    "InvalidImageError",
    "InvalidMaskError",
    "EmptyMaskError",
    "MaskSizeMismatchError",
    "InvalidOutpaintError",
    "SVGNotAvailableError",
    "InvalidRequestIdError",
    "InvalidHostError",
    "InvalidScaleSizeError",
    "InvalidStrengthError",
    "InvalidTypeError",
    "InvalidQualityError",
    "UnknownPlanError",
    "WrongAPIKeyError",
    "APIKeyExpiredError",
    "AdminTokenRequiredError",
    "WrongAdminTokenError",
    "NotEnoughCreditError",
    "NotLoggedInError",
    "StyleNotAllowedError",
    "PremiumRequiredError",
    "EditLimitExceededError",
    "PromptLimitExceededError",
    "SpecialLimitExceededError",
    "EnterpriseOnlyError",
    "ModelNotAvailableError",
    "RouteNotFoundError",
    "ImageNotFoundError",
    "StyleNotFoundError",
    "CollectionNotFoundError",
    "UserNotFoundError",
    "ImageNotReadyError",
    "EditCancelledError",
    "DuplicateRequestIdError",
    "EmailTakenError",
    "NotEnterpriseError",
    "ImageTooLargeError",
    "SimultaneousLimitExceededError",
    "RateLimitedError",
]


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


class InvalidHostError(BadRequestError):
    """400 invalid_host: the Host header names a host the service does not serve."""

    error_name = "invalid_host"


class InvalidScaleSizeError(BadRequestError):
    """400 invalid_scale_size: a scale the edit engine does not take."""

    error_name = "invalid_scale_size"


class InvalidStrengthError(BadRequestError):
    """400 invalid_strength: a reimagine strength other than strong or subtle."""

    error_name = "invalid_strength"


class InvalidTypeError(BadRequestError):
    """400 invalid_type: an image type other than jpeg, png, webp or svg."""

    error_name = "invalid_type"


class InvalidQualityError(BadRequestError):
    """400 invalid_quality: an encoding quality outside 1..100."""

    error_name = "invalid_quality"


class UnknownPlanError(BadRequestError):
    """400 unknown_plan: a sandbox control named a plan grade the sandbox does not have."""

    error_name = "unknown_plan"


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


class AdminTokenRequiredError(AuthenticationError):
    """401 admin_token_required: a /sandbox control asked through a proxy or beyond loopback without X-Sandbox-Token."""

    error_name = "admin_token_required"


class WrongAdminTokenError(AuthenticationError):
    """401 wrong_admin_token: the X-Sandbox-Token is not the sandbox's admin token."""

    error_name = "wrong_admin_token"


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


class UserNotFoundError(NotFoundError):
    """404 user_not_found: a sandbox control named no existing user."""

    error_name = "user_not_found"


class ImageNotReadyError(ConflictError):
    """409 image_not_ready: the image is still PENDING (or FAILED) and has no binary."""

    error_name = "image_not_ready"


class EditCancelledError(ConflictError):
    """409 edit_cancelled: the edit was cancelled through cancelEdit while it ran."""

    error_name = "edit_cancelled"


class DuplicateRequestIdError(ConflictError):
    """409 duplicate_request_id: the edit request id was used before; send a new one."""

    error_name = "duplicate_request_id"


class EmailTakenError(ConflictError):
    """409 email_taken: a sandbox user with that e-mail exists already."""

    error_name = "email_taken"


class NotEnterpriseError(ConflictError):
    """409 not_enterprise: an enterprise setting for a user without an enterprise account."""

    error_name = "not_enterprise"


class ImageTooLargeError(PayloadTooLargeError):
    """413 image_too_large: the image or the result would exceed the size limit."""

    error_name = "image_too_large"


class SimultaneousLimitExceededError(TooManyRequestsError):
    """429 simultaneous_limit_exceeded: the plan's concurrent generations are all running."""

    error_name = "simultaneous_limit_exceeded"


class RateLimitedError(TooManyRequestsError):
    """429 rate_limited: too many requests; wait ``retry_after`` seconds."""

    error_name = "rate_limited"


