"""A sandbox served beyond loopback: its /sandbox controls need the admin token, any Host header that
names a host it does not serve is refused (DNS rebinding), and ``--no-controls`` removes them."""

from __future__ import annotations

import httpx
import pytest

from tests.helpers import TLS, assert_error

from ..serving import imagekit, serving

pytestmark = pytest.mark.slow(3)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    data = tmp_path_factory.mktemp("exposed") / "data"
    imagekit("sandbox", "init", "--data", str(data))
    return data


def test_the_token_is_made_at_init_and_shown_by_the_cli(folder):
    shown = imagekit("sandbox", "token", "--data", str(folder)).stdout.strip()
    assert shown.startswith("iksadmin_") and len(shown) > 30
    assert imagekit("sandbox", "token", "--data", str(folder)).stdout.strip() == shown


def test_controls_beyond_loopback_need_the_token(folder):
    token = imagekit("sandbox", "token", "--data", str(folder)).stdout.strip()
    with serving(folder, host="0.0.0.0") as served, httpx.Client(base_url=served.url, timeout=60, verify=TLS) as http:
        new_user = {"email": "team@x.io", "plan": "pro"}
        assert_error(http.post("/sandbox/users", json=new_user), 401, "admin_token_required")
        assert_error(http.post("/sandbox/users", json=new_user, headers={"X-Sandbox-Token": token + "x"}),
                     401, "wrong_admin_token")
        assert_error(http.post("/sandbox/users/1/credits", json={"defaultCredit": 10**6}), 401, "admin_token_required")
        assert_error(http.post("/sandbox/sessions", json={"userId": 1}), 401, "admin_token_required")
        assert_error(http.get("/sandbox/clock"), 401, "admin_token_required")
        made = http.post("/sandbox/users", json=new_user, headers={"X-Sandbox-Token": token}).raise_for_status()
        key = made.json()["apiKey"]
        assert http.get("/api/users/me", headers={"X-Api-Key": key}).json()["email"] == "team@x.io"
    assert "X-Sandbox-Token" in served.output()


def test_behind_a_proxy_on_loopback_controls_need_the_token(folder):
    """Served on 127.0.0.1 behind a TLS proxy (the README's ``--allowed-host``): a request naming the
    proxy's host, or carrying what a proxy forwards, comes from loopback but not from this machine's
    own user, and needs the token to set credits, mint keys, open sessions or move the clock; a plain
    loopback request still needs none."""
    token = imagekit("sandbox", "token", "--data", str(folder)).stdout.strip()
    with serving(folder, "--allowed-host", "sandbox.team.example") as served, \
            httpx.Client(base_url=served.url, timeout=60, verify=TLS) as http:
        port = served.url.rsplit(":", 1)[1]
        proxied = [{"Host": "sandbox.team.example"}, {"Host": f"sandbox.team.example:{port}"},
                   {"X-Forwarded-For": "203.0.113.9"}, {"X-Forwarded-Host": "sandbox.team.example"},
                   {"X-Forwarded-Proto": "https"}, {"Forwarded": "for=203.0.113.9;proto=https"},
                   {"X-Real-IP": "203.0.113.9"}]
        for headers in proxied:
            assert_error(http.post("/sandbox/users/1/credits", json={"defaultCredit": 999_999}, headers=headers),
                         401, "admin_token_required")
            assert_error(http.post("/sandbox/users/1/keys", headers=headers), 401, "admin_token_required")
            assert_error(http.post("/sandbox/sessions", json={"userId": 1}, headers=headers), 401, "admin_token_required")
            assert_error(http.post("/sandbox/clock/advance", json={"seconds": 40 * 86400}, headers=headers),
                         401, "admin_token_required")
            assert http.get("/sandbox/clock", headers={**headers, "X-Sandbox-Token": token}).status_code == 200
        assert http.get("/sandbox/clock").status_code == 200  # this machine's own request: no token
        assert http.get("/sandbox/clock", headers={"Host": f"localhost:{port}"}).status_code == 200


def test_a_foreign_host_is_refused_everywhere(folder):
    token = imagekit("sandbox", "token", "--data", str(folder)).stdout.strip()
    key = imagekit("sandbox", "user", "add", "--data", str(folder), "--email", "host@x.io").stdout.strip().splitlines()[-1]
    with serving(folder, "--allowed-host", "sandbox.team.example", host="0.0.0.0") as served, \
            httpx.Client(base_url=served.url, timeout=60, headers={"X-Api-Key": key, "X-Sandbox-Token": token}, verify=TLS) as http:
        port = served.url.rsplit(":", 1)[1]
        for host in ("attacker.example", f"attacker.example:{port}", "127.0.0.1.attacker.example"):
            assert_error(http.get("/api/users/me", headers={"Host": host}), 400, "invalid_host")
            assert_error(http.get("/sandbox/clock", headers={"Host": host}), 400, "invalid_host")
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"sandbox.team.example:{port}",
                     "SANDBOX.team.example."):
            assert http.get("/api/users/me", headers={"Host": host}).status_code == 200, host
            assert http.get("/sandbox/clock", headers={"Host": host}).status_code == 200, host


def test_openapi_documents_the_token_beside_the_api_key(sandbox):
    doc = httpx.get(sandbox.url + "/openapi.json", verify=TLS, timeout=120).json()
    schemes = doc["components"]["securitySchemes"]
    assert schemes["SandboxToken"]["name"] == "X-Sandbox-Token" and schemes["APIKeyHeader"]["name"] == "X-Api-Key"
    assert doc["paths"]["/sandbox/users"]["post"]["security"] == [{"SandboxToken": []}]
    assert doc["paths"]["/api/users/me/usage"]["get"]["security"] == [{"APIKeyHeader": []}]


def test_on_loopback_controls_need_no_token_but_hosts_are_checked(sandbox):
    assert httpx.get(f"{sandbox.url}/sandbox/clock", verify=TLS, timeout=120).status_code == 200
    assert_error(httpx.get(f"{sandbox.url}/sandbox/clock", headers={"Host": "rebound.example"}, verify=TLS, timeout=120), 400, "invalid_host")


def test_no_controls_serves_the_api_alone(folder):
    key = imagekit("sandbox", "user", "add", "--data", str(folder), "--email", "nc@x.io").stdout.strip().splitlines()[-1]
    with serving(folder, "--no-controls") as served, httpx.Client(base_url=served.url, timeout=60, verify=TLS) as http:
        assert_error(http.post("/sandbox/users", json={"email": "x@x.io"}), 404, "not_found")
        assert_error(http.get("/sandbox/clock"), 404, "not_found")
        assert http.get("/api/users/me", headers={"X-Api-Key": key}).status_code == 200
        paths = http.get("/openapi.json").json()["paths"]
        assert paths and not any(path.startswith("/sandbox") for path in paths)
