"""Every error name the sandbox can produce, raised as its own class by both clients.

Not here: ``malformed_json`` (the client only sends JSON it encoded), ``internal_error`` and
``edit_failed`` (the sandbox has no trigger for an unexpected failure) and ``model_not_available``
(every seeded account has a model); ``tests/client/test_errors.py`` covers their mapping. The fault-injected ones (``rate_limited``, ``service_unavailable``) and the concurrency
one (``simultaneous_limit_exceeded``) are in ``test_sandbox_faults.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pytest

import imagekit
from imagekit._http import Call
from imagekit.media import mask_png
from tests.helpers import control


@dataclass
class Env:
    """What a trigger needs: clients of this test's kind and the sandbox behind them."""

    user_client: Callable[..., Any]
    clients: Callable[..., Any]
    box: Any

    @cached_property
    def client(self) -> Any:
        return self.user_client()

    @cached_property
    def image(self) -> Any:
        return self.client.create("a red apple", style=self.client.styles()[0], seed=3).images[0]

    def with_key(self, key: str, **options: Any) -> Any:
        return self.clients(self.box.url, key, **options)

    def send(self, method: str, path: str, **call: Any) -> Any:
        """A request no public method makes (unknown route, wrong method, a mask the client would
        refuse), through the client's HTTP layer."""
        http = getattr(self.client, "unwrapped", self.client)._http
        if hasattr(self.client, "unwrapped"):
            return self.client._portal.call(http.send, Call(method, path, **call))
        return http.send(Call(method, path, **call))

    def create_as_sent(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        """A create of the first style with ``body`` over it, sent as it is (no client-side check)."""
        style = self.client.styles()[0].style_id
        return self.send("POST", "/api/images/create", json={"prompt": "x", "styleId": style, **body}, headers=headers)

    def blank_mask(self) -> np.ndarray:
        """An all-False mask at the image's size."""
        width, height = map(int, self.image.resolution.split("x"))
        return np.zeros((height, width), dtype=bool)


def _expired(env: Env) -> None:
    key = control(env.box, "POST", f"users/{env.client.user_id}/keys", {"expiresInSeconds": 0})["apiKey"]
    env.with_key(key).me()


def _broke(env: Env) -> None:
    control(env.box, "POST", f"users/{env.client.user_id}/credits", {"defaultCredit": 0, "monthlyCredit": 0})
    env.client.create("x", style=env.client.styles()[0])


def _own_styles_only(env: Env) -> None:
    client = env.user_client("enterprise")
    control(env.box, "PATCH", f"users/{client.user_id}/enterprise", {"canUseOwnOnly": True})
    public = 1 if client.styles()[0].style_id != 1 else 2
    client.create("x", style=public)


def _edit_limit(env: Env) -> None:
    client = env.user_client("enterprise")
    control(env.box, "PATCH", f"users/{client.user_id}/enterprise", {"maxEditNumber": 0})
    client.create("x", style=client.styles()[0]).images[0].remove_bg()


def _prompt_limit(env: Env) -> None:
    client = env.user_client("free")
    cap = client.usage().max_ttp_count
    for _ in range(cap + 1):
        client.text_to_prompt("a cat")


def _not_ready(env: Env) -> None:
    control(env.box, "POST", "faults", {"fail_generation_rate": 1.0})
    try:
        failed = env.client.create("x", style=env.client.styles()[0]).images[0]
    finally:
        control(env.box, "DELETE", "faults")
    assert failed.status == "FAILED"
    failed.read()


def _cancelled(env: Env) -> None:
    assert env.client.cancel_edit("cancel-first-1") == "cancelled"
    env.image.upsize(request_id="cancel-first-1")


def _huge_data_url(env: Env) -> None:
    env.client.create("x", image=b"\x89PNG\r\n\x1a\n" + os.urandom(32 * 1024 * 1024))


def _special_limit(env: Env) -> None:
    client = env.user_client("enterprise")
    control(env.box, "PATCH", f"users/{client.user_id}/enterprise",
            {"hasSpecialLimits": True, "specialLimits": {"upsize": 0}})
    client.create("x", style=client.styles()[0]).images[0].upsize()


def _duplicate(env: Env) -> None:
    env.image.upsize(request_id="twice-1")
    env.image.upsize(request_id="twice-1")


def _mismatched_mask(env: Env) -> None:
    """Sent past the client's own check, which refuses it before sending (test_edits.py)."""
    mask = np.ones((16, 16), dtype=bool)
    env.send("POST", f"/api/images/{env.image.id}/cleanUp", files={"mask": ("m.png", mask_png(mask), "image/png")})


def _too_large(env: Env) -> None:
    env.image.enhance("4x").enhance("8x")  # 32 times the side: past 8192 px


CASES: list[tuple[str, type, Callable[[Env], Any]]] = [
    # What the client's own checks refuse before sending (imagekit.validation), sent as it is: the
    # service's answer must still raise its class.
    ("invalid_request", imagekit.InvalidRequestError, lambda env: env.create_as_sent({"count": 3})),
    ("invalid_generation_mode", imagekit.InvalidGenerationModeError,
     lambda env: env.send("POST", "/api/images/create", json={"prompt": "x"})),
    ("invalid_platform", imagekit.InvalidPlatformError, lambda env: env.create_as_sent({}, {"X-Platform": "desktop"})),
    ("invalid_api_type", imagekit.InvalidAPITypeError,
     lambda env: env.client.create("x", style=env.client.styles()[0], api_type="turbo")),
    ("unsupported_image_source", imagekit.UnsupportedImageSourceError,
     lambda env: env.client.create("x", image="http://example.com/cat.png")),
    ("invalid_image", imagekit.InvalidImageError,
     lambda env: env.client.create("x", image="data:image/png;base64,not-base64!")),
    ("invalid_mask", imagekit.InvalidMaskError, lambda env: env.image.clean_up(b"\x89PNG\r\n\x1a\n")),
    ("empty_mask", imagekit.EmptyMaskError, lambda env: env.image.fill(env.blank_mask(), "a bird")),
    ("mask_size_mismatch", imagekit.MaskSizeMismatchError, _mismatched_mask),
    ("invalid_outpaint", imagekit.InvalidOutpaintError,
     lambda env: env.image.outpaint(canvas=(1024, 1024), size=(512, 512), at=(2000, 0))),
    ("svg_not_available", imagekit.SVGNotAvailableError, lambda env: env.image.read("svg")),
    ("invalid_request_id", imagekit.InvalidRequestIdError,
     lambda env: env.send("POST", f"/api/images/{env.image.id}/upsize", headers={"X-Request-Id": "bad id with spaces"})),
    ("wrong_api_key", imagekit.WrongAPIKeyError, lambda env: env.with_key("sk-not-a-real-key").me()),
    ("api_key_expired", imagekit.APIKeyExpiredError, _expired),
    ("not_enough_credit", imagekit.NotEnoughCreditError, _broke),
    ("not_logged_in", imagekit.NotLoggedInError,
     lambda env: env.with_key("unused", wire=imagekit.Wire(api_key_header="X-Not-The-Key")).me()),
    ("style_not_allowed", imagekit.StyleNotAllowedError, _own_styles_only),
    ("premium_required", imagekit.PremiumRequiredError, lambda env: env.client.create("x", collection=3)),
    ("edit_limit_exceeded", imagekit.EditLimitExceededError, _edit_limit),
    ("prompt_limit_exceeded", imagekit.PromptLimitExceededError, _prompt_limit),
    ("special_limit_exceeded", imagekit.SpecialLimitExceededError, _special_limit),
    ("enterprise_only", imagekit.EnterpriseOnlyError,
     lambda env: env.client.create("x", style=env.client.styles()[0], api_type="enterprise")),
    ("not_found", imagekit.RouteNotFoundError, lambda env: env.send("GET", "/api/nothing")),
    ("image_not_found", imagekit.ImageNotFoundError, lambda env: env.client.image(999_999_999).meta()),
    ("style_not_found", imagekit.StyleNotFoundError, lambda env: env.client.create("x", style=10**9)),
    ("collection_not_found", imagekit.CollectionNotFoundError, lambda env: env.client.create("x", collection=10**9)),
    ("method_not_allowed", imagekit.MethodNotAllowedError, lambda env: env.send("DELETE", "/api/users/me")),
    ("image_not_ready", imagekit.ImageNotReadyError, _not_ready),
    ("edit_cancelled", imagekit.EditCancelledError, _cancelled),
    ("duplicate_request_id", imagekit.DuplicateRequestIdError, _duplicate),
    ("payload_too_large", imagekit.PayloadTooLargeError, _huge_data_url),
    ("image_too_large", imagekit.ImageTooLargeError, _too_large),
    ("unsupported_media_type", imagekit.UnsupportedMediaTypeError,
     lambda env: env.client.create("x", image="data:image/png;base64,aGVsbG8=")),
]


@pytest.mark.parametrize(("name", "cls", "trigger"), CASES, ids=[case[0] for case in CASES])
def test_each_error_name_raises_its_class(user_client, clients, sandbox, name, cls, trigger):
    env = Env(user_client, clients, sandbox)
    with pytest.raises(imagekit.APIError) as info:
        trigger(env)
    assert type(info.value) is cls, (info.value.status, info.value.data, info.value.message)
    assert info.value.data == name and info.value.status == cls.status
    assert info.value.message and info.value.response.status_code == cls.status


def test_refusals_cost_nothing(ik):
    before = ik.usage()
    # count 3 past the client's own check (extra_body is sent as given): the service refuses it too
    for trigger in (lambda: ik.create("x", style=ik.styles()[0], extra_body={"count": 3}), lambda: ik.create("x", style=10**9)):
        with pytest.raises(imagekit.APIError):
            trigger()
    assert ik.usage() == before


def test_a_user_cannot_see_another_users_image(user_client):
    owner = user_client()
    theirs = owner.create("x", style=owner.styles()[0]).images[0].id
    with pytest.raises(imagekit.ImageNotFoundError):
        user_client().image(theirs).read()
