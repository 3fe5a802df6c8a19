"""Error mapping: one class per error name, fallback by status, the spec's body shape."""

from __future__ import annotations

import httpx
import pytest

import imagekit
from imagekit import errors

CATALOGUE = [
    (400, "invalid_request", imagekit.InvalidRequestError),
    (400, "malformed_json", imagekit.MalformedJSONError),
    (400, "invalid_generation_mode", imagekit.InvalidGenerationModeError),
    (400, "invalid_platform", imagekit.InvalidPlatformError),
    (400, "invalid_api_type", imagekit.InvalidAPITypeError),
    (400, "unsupported_image_source", imagekit.UnsupportedImageSourceError),
    (400, "invalid_image", imagekit.InvalidImageError),
    (400, "invalid_mask", imagekit.InvalidMaskError),
    (400, "empty_mask", imagekit.EmptyMaskError),
    (400, "mask_size_mismatch", imagekit.MaskSizeMismatchError),
    (400, "invalid_outpaint", imagekit.InvalidOutpaintError),
    (400, "svg_not_available", imagekit.SVGNotAvailableError),
    (400, "invalid_request_id", imagekit.InvalidRequestIdError),
    (400, "invalid_host", imagekit.InvalidHostError),
    (400, "invalid_scale_size", imagekit.InvalidScaleSizeError),
    (400, "invalid_strength", imagekit.InvalidStrengthError),
    (400, "invalid_type", imagekit.InvalidTypeError),
    (400, "invalid_quality", imagekit.InvalidQualityError),
    (400, "unknown_plan", imagekit.UnknownPlanError),
    (401, "wrong_api_key", imagekit.WrongAPIKeyError),
    (401, "api_key_expired", imagekit.APIKeyExpiredError),
    (401, "admin_token_required", imagekit.AdminTokenRequiredError),
    (401, "wrong_admin_token", imagekit.WrongAdminTokenError),
    (402, "not_enough_credit", imagekit.NotEnoughCreditError),
    (403, "not_logged_in", imagekit.NotLoggedInError),
    (403, "style_not_allowed", imagekit.StyleNotAllowedError),
    (403, "premium_required", imagekit.PremiumRequiredError),
    (403, "edit_limit_exceeded", imagekit.EditLimitExceededError),
    (403, "prompt_limit_exceeded", imagekit.PromptLimitExceededError),
    (403, "special_limit_exceeded", imagekit.SpecialLimitExceededError),
    (403, "enterprise_only", imagekit.EnterpriseOnlyError),
    (403, "model_not_available", imagekit.ModelNotAvailableError),
    (404, "not_found", imagekit.RouteNotFoundError),
    (404, "image_not_found", imagekit.ImageNotFoundError),
    (404, "style_not_found", imagekit.StyleNotFoundError),
    (404, "collection_not_found", imagekit.CollectionNotFoundError),
    (404, "user_not_found", imagekit.UserNotFoundError),
    (405, "method_not_allowed", imagekit.MethodNotAllowedError),
    (409, "image_not_ready", imagekit.ImageNotReadyError),
    (409, "edit_cancelled", imagekit.EditCancelledError),
    (409, "duplicate_request_id", imagekit.DuplicateRequestIdError),
    (409, "email_taken", imagekit.EmailTakenError),
    (409, "not_enterprise", imagekit.NotEnterpriseError),
    (413, "payload_too_large", imagekit.PayloadTooLargeError),
    (413, "image_too_large", imagekit.ImageTooLargeError),
    (415, "unsupported_media_type", imagekit.UnsupportedMediaTypeError),
    (429, "simultaneous_limit_exceeded", imagekit.SimultaneousLimitExceededError),
    (429, "rate_limited", imagekit.RateLimitedError),
    (500, "internal_error", imagekit.InternalServerError),
    (500, "edit_failed", imagekit.EditFailedError),
    (503, "service_unavailable", imagekit.ServiceUnavailableError),
    (507, "insufficient_storage", imagekit.InsufficientStorageError),
]

STATUS_BASES = {
    400: imagekit.BadRequestError, 401: imagekit.AuthenticationError, 402: imagekit.PaymentRequiredError,
    403: imagekit.PermissionDeniedError, 404: imagekit.NotFoundError, 405: imagekit.MethodNotAllowedError,
    409: imagekit.ConflictError, 413: imagekit.PayloadTooLargeError, 415: imagekit.UnsupportedMediaTypeError,
    429: imagekit.TooManyRequestsError, 500: imagekit.InternalServerError, 503: imagekit.ServiceUnavailableError,
    507: imagekit.InsufficientStorageError,
}


def response(status: int, body=None, headers=None, content: bytes | None = None) -> httpx.Response:
    request = httpx.Request("GET", "http://service.test/api/users/me")
    if content is not None:
        return httpx.Response(status, content=content, headers=headers, request=request)
    return httpx.Response(status, json=body, headers=headers, request=request)


def spec_body(status: int, name: str, message: str = "human text") -> dict:
    return {"success": False, "code": status, "data": name, "message": message}


def test_the_catalogue_is_complete():
    assert {name: cls for _, name, cls in CATALOGUE} == errors.ERRORS_BY_NAME


@pytest.mark.parametrize(("status", "name", "cls"), CATALOGUE)
def test_each_error_name_has_its_class(status, name, cls):
    exc = errors.from_response(response(status, spec_body(status, name)))
    assert type(exc) is cls
    assert isinstance(exc, STATUS_BASES[status]) and isinstance(exc, imagekit.APIError)
    assert (exc.status, exc.data, exc.message) == (status, name, "human text")
    assert exc.response.status_code == status and exc.request.url.path == "/api/users/me"
    first, *advice = str(exc).splitlines()
    assert first == f"{status} {name}: human text"
    # Setup mistakes say what to do about them, naming the service and the variable to set.
    setup = name in ("wrong_api_key", "api_key_expired", "not_logged_in")
    assert advice == ([exc.hint()] if setup else [])
    assert not setup or ("http://service.test" in exc.hint() and "IMAGEKIT_API_KEY" in exc.hint())


@pytest.mark.parametrize(("status", "base"), sorted(STATUS_BASES.items()))
def test_unknown_names_fall_back_by_status(status, base):
    exc = errors.from_response(response(status, spec_body(status, "brand_new_error")))
    assert type(exc) is base and exc.data == "brand_new_error"


@pytest.mark.parametrize(
    ("status", "cls"),
    [(418, imagekit.APIError), (422, imagekit.APIError), (502, imagekit.ServerError), (504, imagekit.ServerError)],
)
def test_unknown_statuses_fall_back_to_the_family(status, cls):
    assert type(errors.from_response(response(status, spec_body(status, "whatever")))) is cls


def test_a_known_name_under_an_unexpected_status_follows_the_status():
    exc = errors.from_response(response(400, spec_body(400, "image_not_found")))
    assert type(exc) is imagekit.BadRequestError and exc.data == "image_not_found"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"<html>Bad Gateway</html>", "Bad Gateway"),
        (b"", "Bad Gateway"),
        (b'"just a string"', "Bad Gateway"),
        (b'{"success": false, "code": 502, "data": 7}', "Bad Gateway"),
    ],
)
def test_bodies_without_the_spec_shape_still_map(content, message):
    exc = errors.from_response(response(502, content=content))
    assert type(exc) is imagekit.ServerError and exc.data is None and exc.message == message


def test_missing_message_is_derived_from_the_name():
    exc = errors.from_response(response(402, {"success": False, "code": 402, "data": "not_enough_credit"}))
    assert exc.message == "not enough credit"


@pytest.mark.parametrize(("header", "expected"), [("3", 3.0), ("0.5", 0.5), (None, None), ("later", None)])
def test_retry_after_is_exposed(header, expected):
    headers = {"Retry-After": header} if header else {}
    exc = errors.from_response(response(429, spec_body(429, "rate_limited"), headers))
    assert exc.retry_after == expected


def test_transport_errors_are_their_own_branch():
    assert not issubclass(imagekit.APIConnectionError, imagekit.APIError)
    assert issubclass(imagekit.APITimeoutError, imagekit.APIConnectionError)
    exc = imagekit.APITimeoutError("POST /x: no response", may_have_executed=True)
    assert exc.may_have_executed and exc.request_id is None and exc.cancel_status is None
    assert issubclass(imagekit.WaitTimeoutError, TimeoutError)
    assert issubclass(imagekit.ConfigError, ValueError)


def test_every_error_class_is_documented_and_exported():
    for cls in (*errors.ERRORS_BY_NAME.values(), *STATUS_BASES.values()):
        # the status-level classes are imagekit's own names; every class is read from imagekit and imagekit.errors
        assert cls.__doc__ and cls.__name__ in errors.__all__ and getattr(imagekit, cls.__name__) is cls
        assert cls not in STATUS_BASES.values() or cls.__name__ in imagekit.__all__


def test_one_status_attribute_on_classes_and_errors():
    for status, name, cls in CATALOGUE:
        assert cls.status == status and errors.from_response(response(status, spec_body(status, name))).status == status
    assert not hasattr(imagekit.APIError, "status_code")
    unknown = errors.from_response(response(418, spec_body(418, "teapot")))
    assert type(unknown) is imagekit.APIError and unknown.status == 418 and imagekit.APIError.status == 0


def test_errors_are_not_changed_once_made():
    exc = errors.from_response(response(402, spec_body(402, "not_enough_credit")))
    cut = imagekit.APITimeoutError("POST /x: no response", may_have_executed=True)
    for error, field in ((exc, "status"), (exc, "message"), (exc, "data"), (cut, "request_id"), (cut, "cancel_status")):
        before = getattr(error, field)
        with pytest.raises(AttributeError, match="read-only"):
            setattr(error, field, "changed")
        assert getattr(error, field) == before
    exc.add_note("Python's own notes still attach")
    told = cut.for_edit("rid-1", "cancelled")
    assert type(told) is imagekit.APITimeoutError and (told.request_id, told.cancel_status) == ("rid-1", "cancelled")
    assert told.may_have_executed and cut.request_id is None
