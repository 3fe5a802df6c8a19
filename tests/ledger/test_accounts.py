"""One user on one service is one account in the ledger, whatever key they use: from the first time
the service says whose a key is (``me()``), what the ledger held under the key's id is the user's, in
this process and every other one on the ledger (both sandbox faces; SQLite and PostgreSQL ledgers)."""

from __future__ import annotations

import pytest

import imagekit
from imagekit.ledger import Entry, Ledger, Status, account_of
from imagekit.ledger.entries import service_of, user_account
from tests.helpers import balance, control
from tests.utils.service import public_style


@pytest.fixture
def ledger_location(either_ledger) -> str:
    return either_ledger


@pytest.mark.parametrize(("url", "same"), [
    ("http://Example.org", "http://example.org:80/"),
    ("https://example.org/api/", "https://example.org:443/api"),
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000/"),
])
def test_a_service_is_its_scheme_host_port_and_path_spelt_one_way(url, same):
    assert service_of(url) == service_of(same) != service_of(url.replace("http", "gopher", 1))
    assert user_account(service_of(url), 7) != user_account(service_of(url), 8)


def test_every_key_of_a_user_is_one_account_from_when_the_service_says_whose_it_is(connect, box, ledger_location):
    ik = connect()
    style = public_style(box)
    first_key = ik.config.api_key
    before = balance(box, first_key)  # over raw HTTP: no me() through the client yet
    late = imagekit.Client(box.url, first_key, ledger=ledger_location)  # opened before anyone asked me()
    ik.budget(limit=100, warn_at=None)  # the account's budget, set under the key's id
    assert ik.ledger.account == account_of(box.url, first_key)
    ik.create("one", style=style)  # the budget's hold reads the plan's prices first (me), which names the user
    ik.ledger.entries()  # a shared ledger records on its writer's thread: a read waits for it
    mine = user_account(service_of(box.url), ik.user_id)
    assert ik.ledger.account == mine
    second = imagekit.Client(box.url, control(box, "POST", f"users/{ik.user_id}/keys", {})["apiKey"],
                             ledger=ledger_location)
    second.create("two", style=style)  # under the second key's id, until its me() below
    late.create("three", style=style)  # a process that never asked: its entry is the user's as it is written
    second.me()
    try:
        creates = [entry for entry in Ledger(ledger_location).entries("") if entry.operation == "create"]
        assert {entry.account for entry in creates} == {mine} and len(creates) == 3
        if not box.spec_exact:  # (the spec's answers do not say what a create cost: a report reconciles first)
            assert ik.ledger.total() == pytest.approx(before - balance(box, first_key))  # all the user spent
        assert [(budget.value, budget.spent) for budget in ik.ledger.budgets("")] == [(mine, ik.ledger.total())]
        assert len(late.ledger.entries()) == 3 and late.ledger.account == mine  # a read learns the name
        reopened = imagekit.Client(box.url, first_key, ledger=ledger_location)  # knows it, never asking the service:
        if "://" in ledger_location:  # at once from what this machine saw of the shared database
            assert reopened.ledger.account == mine
        assert len(reopened.ledger.entries()) == 3 and reopened.ledger.account == mine  # a file, once read
        reopened.close()
    finally:
        late.close()
        second.close()


def test_an_account_given_is_kept_and_an_old_ledgers_key_entries_are_brought_forward(connect, box, tmp_path):
    path = tmp_path / "ledger.sqlite"
    ik = connect(ledger=str(path), account="team-a")
    ik.me()
    assert ik.ledger.account == "team-a"  # named by its user: never renamed
    key_id = account_of(box.url, ik.config.api_key)
    Ledger(path, account=key_id).record(Entry(operation="create", status=Status.ANSWERED, credits=2, image_ids=[1]))
    plain = imagekit.Client(box.url, ik.config.api_key, ledger=str(path))
    try:
        assert plain.ledger.account == key_id and plain.ledger.total() == 2  # an entry from before
        mine = user_account(service_of(box.url), plain.me().user_id)
        assert plain.ledger.total() == 2 and plain.ledger.account == mine and plain.ledger.total() == 2 and not Ledger(path).entries(key_id)
    finally:
        plain.close()
