"""Every refusal uses the spec's error body, never a framework default."""

from __future__ import annotations

import httpx

from tests.helpers import TLS, assert_error


def test_unknown_route_and_method(sandbox, api):
    assert_error(api.get("/api/nothing"), 404, "not_found")
    assert_error(httpx.get(sandbox.url + "/nothing", verify=TLS, timeout=120), 404, "not_found")
    assert_error(api.delete("/api/users/me"), 405, "method_not_allowed")


def test_oversized_body_is_413(api):
    big = b"{" + b" " * (31 * 1024 * 1024) + b"}"
    assert_error(api.post("/api/images/create", content=big, headers={"content-type": "application/json"}),
                 413, "payload_too_large")


def test_openapi_names_the_chosen_wire_names(sandbox):
    doc = httpx.get(sandbox.url + "/openapi.json", verify=TLS, timeout=120).json()
    create = doc["paths"]["/api/images/create"]["post"]
    headers = {p["name"] for p in create["parameters"] if p["in"] == "header"}
    assert {"X-Platform", "X-Api-Type"} <= headers
    body = doc["components"]["schemas"]["CreateBody"]["properties"]
    assert {"styleId", "collectionId", "randomPrompt", "initialPrompt", "enhancedPrompt", "captionPrompt",
            "captionTPrompt", "groupId", "count", "isAsync"} <= set(body)
    binary = {p["name"] for p in doc["paths"]["/api/images/{id}/binary"]["get"]["parameters"]}
    assert {"isCollection", "watermark", "scaleSize", "type"} <= binary
    assert doc["components"]["securitySchemes"]["APIKeyHeader"]["name"] == "X-Api-Key"
    assert "ErrorBody" in doc["components"]["schemas"]
