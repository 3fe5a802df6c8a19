"""The fast request path: the caller is read afresh each request, and what is kept stays true.

The caller's row is read on the event loop over a connection of its own, and GET /api/users/me
answers a document rendered earlier while the row reads the same. These tests change the database
from outside the sandbox (a connection of another process would do the same) and check that the
next request sees it. On PostgreSQL the caller is read in the statement that reads the shared
clock and faults (``Callers.refresh_shared``): the same rules hold there.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime
from typing import Any

import httpx
import psycopg
import pytest

from tests.helpers import TLS, assert_error, on_both_databases
from tests.utils.users import make_user

pytestmark = on_both_databases


class Outside:
    """The sandbox's database through a connection of the test's own (autocommit), SQLite or PostgreSQL."""

    def __init__(self, connection: sqlite3.Connection | psycopg.Connection) -> None:
        self.connection = connection

    def execute(self, sql: str, params: tuple[Any, ...]) -> None:
        if isinstance(self.connection, psycopg.Connection):
            sql = sql.replace("?", "%s")
        self.connection.execute(sql, params)


@pytest.fixture
def database(own_sandbox) -> Iterator[Outside]:
    url = own_sandbox.sandbox.settings.database_url
    with closing(psycopg.connect(url, autocommit=True) if url else
                 sqlite3.connect(own_sandbox.data_dir / "sandbox.db", isolation_level=None, timeout=30)) as db:
        yield Outside(db)


def me(box, key: str) -> httpx.Response:
    return httpx.get(box.url + "/api/users/me", headers={"X-Api-Key": key}, verify=TLS, timeout=120)


def test_a_balance_changed_elsewhere_shows_on_the_next_request(own_sandbox, database):
    user_id, key = make_user(own_sandbox)
    first = me(own_sandbox, key).json()
    assert me(own_sandbox, key).json() == first  # the kept document, while nothing changed
    database.execute("update users set default_credit = default_credit + 7 where user_id = ?", (user_id,))
    second = me(own_sandbox, key).json()
    assert second["defaultCredit"] == first["defaultCredit"] + 7
    assert {k: v for k, v in second.items() if k != "defaultCredit"} == \
        {k: v for k, v in first.items() if k != "defaultCredit"}


def test_a_key_removed_elsewhere_is_refused_at_once(own_sandbox, database):
    user_id, key = make_user(own_sandbox)
    other = httpx.post(f"{own_sandbox.url}/sandbox/users/{user_id}/keys", json={}, verify=TLS, timeout=120).json()["apiKey"]
    assert me(own_sandbox, key).status_code == me(own_sandbox, other).status_code == 200
    database.execute("delete from api_keys where key_hash = (select key_hash from api_keys "
                     "where user_id = ? order by key_id desc limit 1)", (user_id,))
    assert_error(me(own_sandbox, other), 401, "wrong_api_key")
    assert me(own_sandbox, key).json()["userId"] == user_id


def test_a_key_given_an_expiry_elsewhere_expires_on_time(own_sandbox, database):
    user_id, key = make_user(own_sandbox)
    assert me(own_sandbox, key).status_code == 200
    now = datetime.fromisoformat(httpx.get(f"{own_sandbox.url}/sandbox/clock", verify=TLS, timeout=120).json()["now"].removesuffix("Z"))
    database.execute("update api_keys set expires_at = ? where user_id = ?",
                     (now.strftime("%Y-%m-%d %H:%M:%S.%f"), user_id))
    assert_error(me(own_sandbox, key), 401, "api_key_expired")
    assert_error(httpx.get(own_sandbox.url + "/api/users/me/usage", headers={"X-Api-Key": key}, verify=TLS, timeout=120), 401, "api_key_expired")


def test_grants_fall_due_on_the_fast_path_too(own_sandbox):
    user_id, key = make_user(own_sandbox, "free")  # a daily grant of 20
    httpx.post(f"{own_sandbox.url}/sandbox/users/{user_id}/credits", json={"dailyCredit": 0}, verify=TLS, timeout=120).raise_for_status()
    drained = me(own_sandbox, key).json()
    assert drained["dailyCredit"] == 0
    httpx.post(f"{own_sandbox.url}/sandbox/clock/advance", json={"seconds": 86400}, verify=TLS, timeout=120).raise_for_status()
    granted = me(own_sandbox, key).json()
    assert granted["dailyCredit"] == granted["Plan"]["dailyCredit"] > 0
    assert me(own_sandbox, key).json() == granted  # granted once: the second read changes nothing


def test_an_enterprise_flag_changed_elsewhere_shows(own_sandbox, database):
    user_id, key = make_user(own_sandbox, "enterprise")
    assert me(own_sandbox, key).json()["Enterprise"]["canUseOwnOnly"] is False
    database.execute("update enterprises set can_use_own_only = true where user_id = ?", (user_id,))
    assert me(own_sandbox, key).json()["Enterprise"]["canUseOwnOnly"] is True


def test_a_login_cookie_works_once_made_and_after_a_restart(tmp_path, new_database):
    from imagekit.sandbox import EmbeddedSandbox

    url = new_database()
    for _ in range(2):  # the first session makes the cookie secret, the second reads it
        with EmbeddedSandbox(tmp_path / "box", database_url=url) as box:
            user_id, _ = make_user(box)
            forged = httpx.get(box.url + "/api/users/me", cookies={"connect.sid": "s:abc.def"}, verify=TLS, timeout=120)
            assert_error(forged, 403, "not_logged_in")
            cookie = httpx.post(f"{box.url}/sandbox/sessions", json={"userId": user_id}, verify=TLS, timeout=120).json()["cookie"]
            answer = httpx.get(box.url + "/api/users/me", cookies={"connect.sid": cookie}, verify=TLS, timeout=120)
            assert answer.json()["userId"] == user_id


def test_me_declares_the_key_or_the_cookie(sandbox):
    doc = httpx.get(sandbox.url + "/openapi.json", verify=TLS, timeout=120).json()
    assert doc["paths"]["/api/users/me"]["get"]["security"] == [{"APIKeyHeader": []}, {"APIKeyCookie": []}]
    assert doc["components"]["securitySchemes"]["APIKeyCookie"] == {
        "type": "apiKey", "in": "cookie", "name": "connect.sid",
        "description": "Login session (accepted on GET /api/users/me only)."}
