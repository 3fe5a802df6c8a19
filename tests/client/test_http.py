"""The HTTP layer through both clients, with httpx.MockTransport for what a live server cannot show."""

from __future__ import annotations

import logging

import httpx
import pytest

import imagekit
from tests.utils.scripted_http import SECRET, Script, error, reply

ME = {"userId": 1, "email": "ada@example.com"}
CREATED = {"images": [{"imageId": 1, "generationStatus": "COMPLETED"}], "defaultCredit": 9, "dailyCredit": 0,
           "monthlyCredit": 0}


def test_auth_and_identity_headers(mock):
    script = Script(reply(200, ME))
    mock(script).me()
    headers = script.requests[0].headers
    assert headers["X-Api-Key"] == SECRET and headers["User-Agent"].startswith("imagekit-python/")
    assert "X-Platform" not in headers  # the platform tag goes only where the spec takes it


def test_create_sends_platform_and_api_type(mock):
    script = Script(reply(200, CREATED))
    mock(script, api_type="enterprise").create("a cat", style=3, platform="figma")
    headers = script.requests[0].headers
    assert headers["X-Platform"] == "figma" and headers["X-Api-Type"] == "enterprise"


def test_no_api_type_by_default_and_platform_api(mock):
    script = Script(reply(200, CREATED))
    mock(script).create("a cat", style=3)
    assert "X-Api-Type" not in script.requests[0].headers and script.requests[0].headers["X-Platform"] == "api"


def test_create_body_uses_the_wire_names(mock):
    script = Script(reply(200, CREATED))
    mock(script).create("a cat", style=3, count=4, ratio="16:9", seed=11, is_async=True, group_id="g",
                        initial_prompt="cat", enhanced_prompt="a cat", extra_body={"custom": 1})
    assert script.body() == {"prompt": "a cat", "ratio": "16:9", "styleId": 3, "count": 4, "isAsync": True,
                             "seed": 11, "groupId": "g", "initialPrompt": "cat", "enhancedPrompt": "a cat",
                             "custom": 1}


def test_wire_names_can_be_overridden(mock):
    wire = imagekit.Wire(platform_header="X-Client", style_id="style", count="n", api_key_header="Authorization-Key")
    script = Script(reply(200, CREATED))
    mock(script, wire=wire).create("a cat", style=3, count=2)
    request = script.requests[0]
    assert request.headers["X-Client"] == "api" and request.headers["Authorization-Key"] == SECRET
    assert script.body() == {"prompt": "a cat", "style": 3, "n": 2}


def test_unknown_create_options_are_refused(mock):
    with pytest.raises(TypeError, match="stlye"):
        mock(Script(reply(200, CREATED))).create("a cat", stlye=3)


def test_credit_headers_reach_the_result(mock):
    headers = {"X-Credits-Consumed": "4", "X-Remaining-Credits": "95.5"}
    res = mock(Script(reply(200, CREATED, headers))).create("a cat", style=1)
    assert (res.credits_charged, res.credits_remaining, res.default_credit) == (4, 95.5, 9)
    assert len(res) == 1 and res[0].id == 1 and [image.id for image in res] == [1]


def test_non_2xx_becomes_the_named_error(mock):
    with pytest.raises(imagekit.WrongAPIKeyError) as info:
        mock(Script(error(401, "wrong_api_key"))).me()
    assert info.value.status == 401 and info.value.response.status_code == 401


def test_503_is_retried_honouring_retry_after(mock):
    script = Script(error(503, "service_unavailable", {"Retry-After": "0"}), reply(200, CREATED))
    assert mock(script).create("a cat", style=1).images[0].id == 1
    assert len(script.requests) == 2  # refused before any work: safe to send again


def test_429_retries_give_up_after_max_retries(mock):
    script = Script(error(429, "rate_limited", {"Retry-After": "0"}))
    with pytest.raises(imagekit.RateLimitedError) as info:
        mock(script).me()
    assert len(script.requests) == 3 and info.value.retry_after == 0.0


def test_retry_after_beyond_the_cap_is_not_waited_for(mock):
    script = Script(error(429, "simultaneous_limit_exceeded", {"Retry-After": "3600"}))
    with pytest.raises(imagekit.SimultaneousLimitExceededError) as info:
        mock(script).create("a cat", style=1)
    assert len(script.requests) == 1 and info.value.retry_after == 3600


def test_a_get_is_retried_on_500_but_a_post_is_not(mock):
    script = Script(error(500, "internal_error"), reply(200, ME))
    assert mock(script).me().user_id == 1 and len(script.requests) == 2
    script = Script(error(500, "internal_error"), reply(200, CREATED))
    with pytest.raises(imagekit.InternalServerError):
        mock(script).create("a cat", style=1)
    assert len(script.requests) == 1


@pytest.mark.parametrize(
    "failure",
    [httpx.ReadTimeout("timed out"), httpx.RemoteProtocolError("Server disconnected"), httpx.ReadError("reset"),
     httpx.WriteTimeout("timed out")],
)
def test_a_post_that_may_have_arrived_is_sent_once(mock, failure):
    script = Script(failure, reply(200, CREATED))
    with pytest.raises(imagekit.APIConnectionError) as info:
        mock(script).create("a cat", style=1)
    assert len(script.requests) == 1
    assert info.value.may_have_executed is True and "not sent again" in str(info.value)
    assert isinstance(info.value, imagekit.APITimeoutError) == isinstance(failure, httpx.TimeoutException)


def test_a_get_that_may_have_arrived_is_retried(mock):
    script = Script(httpx.ReadTimeout("timed out"), httpx.RemoteProtocolError("dropped"), reply(200, ME))
    assert mock(script).me().user_id == 1 and len(script.requests) == 3


@pytest.mark.parametrize("failure", [httpx.ConnectError("refused"), httpx.ConnectTimeout("slow"), httpx.PoolTimeout("busy")])
def test_a_post_that_never_left_is_retried(mock, failure):
    script = Script(failure, reply(200, CREATED))
    assert mock(script).create("a cat", style=1).images[0].id == 1 and len(script.requests) == 2


def test_connect_failures_give_up_with_a_transport_error(mock):
    script = Script(httpx.ConnectError("refused"))
    with pytest.raises(imagekit.APIConnectionError) as info:
        mock(script).me()
    assert len(script.requests) == 3 and info.value.may_have_executed is False
    assert not isinstance(info.value, imagekit.APIError)


def test_max_retries_zero_sends_once(mock):
    script = Script(error(503, "service_unavailable"))
    with pytest.raises(imagekit.ServiceUnavailableError):
        mock(script, retry_policy=imagekit.RetryPolicy(max_retries=0)).me()
    assert len(script.requests) == 1


def test_bare_json_answers(mock):
    client = mock(Script(reply(200, 12)))
    assert client.collection_count() == 12
    assert mock(Script(reply(200, [{"styleId": 1, "apiEnabled": True}]))).styles()[0].api_enabled is True


def test_the_key_never_shows_in_reprs_or_logs(mock, caplog):
    caplog.set_level(logging.DEBUG)
    script = Script(error(503, "service_unavailable", {"Retry-After": "0"}), error(401, "wrong_api_key"))
    client = mock(script)
    with pytest.raises(imagekit.WrongAPIKeyError) as info:
        client.me()
    texts = [repr(client), str(client), repr(client.config), str(client.config), repr(info.value), str(info.value),
             caplog.text, repr(info.value.response), repr(info.value.request), repr(info.value.request.headers),
             str(info.value.request.headers)]
    assert "retrying GET /api/users/me" in caplog.text
    assert "x-api-key" in repr(info.value.request.headers).lower()  # named, its value masked
    for text in texts:
        assert SECRET not in text


def test_protocol_errors_are_not_retried(mock):
    script = Script(httpx.UnsupportedProtocol("ftp is not http"))
    with pytest.raises(imagekit.APIConnectionError) as info:
        mock(script).me()
    assert len(script.requests) == 1 and info.value.may_have_executed is False
