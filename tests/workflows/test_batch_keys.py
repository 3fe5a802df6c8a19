"""A batch spread over several keys: an account that runs out of credit leaves its rows to the others,
and the run stops only when no account can pay. On both faces, with a local and a shared journal."""

from __future__ import annotations

import pytest

import imagekit
from tests.helpers import balance, control
from tests.utils.service import public_style, server_images

ROWS = [f"a harbour, take {n}" for n in range(8)]


def funded(connect, box, credits: float) -> imagekit.Client:
    """A client for a fresh standard user (no credit below zero) holding ``credits``."""
    client = connect("standard")
    control(box, "POST", f"users/{client.user_id}/credits",
            {"defaultCredit": 0, "dailyCredit": 0, "monthlyCredit": credits})
    return client


def price(box) -> float:
    """Credits an image of the batch's style costs, as the sandbox charges it."""
    from imagekit.sandbox.store.tables import Style

    with box.sandbox.db.read() as session:
        return float(session.get(Style, public_style(box)).credit_cost)


def run_over(box, clients: list[imagekit.Client], **run: object) -> tuple[imagekit.Batch, list[float]]:
    """Run ``ROWS`` over the clients' keys; returns the batch and what each account paid."""
    before = [balance(client) for client in clients]
    batch = clients[0].batch(ROWS, name="harbours", style=public_style(box),
                             keys=[client.config.api_key for client in clients])
    batch.run(progress=False, **run)
    return batch, [b - balance(client) for b, client in zip(before, clients)]


def test_an_account_out_of_credit_leaves_its_rows_to_the_other_keys(connect, box):
    poor, rich = funded(connect, box, 0), funded(connect, box, 100)
    unit = price(box)
    control(box, "POST", f"users/{poor.user_id}/credits", {"monthlyCredit": 2 * unit + 1})  # it pays 2 rows
    batch, paid = run_over(box, [poor, rich])

    assert batch.stopped is None
    assert batch.to_pandas()["row_status"].value_counts().to_dict() == {"done": 8}
    assert paid == [2 * unit, 6 * unit] and batch.spent == 8 * unit
    assert len(server_images(box, poor.user_id)) == 2 and len(server_images(box, rich.user_id)) == 6


def test_the_run_stops_when_no_account_can_pay(connect, box):
    first, second = funded(connect, box, 0), funded(connect, box, 0)
    unit = price(box)
    control(box, "POST", f"users/{first.user_id}/credits", {"monthlyCredit": 2 * unit + 1})  # 2 rows
    control(box, "POST", f"users/{second.user_id}/credits", {"monthlyCredit": unit + 1})  # 1 row
    batch, paid = run_over(box, [first, second])

    assert batch.stopped == "not enough credit"
    rows = batch.to_pandas()
    assert rows["row_status"].value_counts().to_dict() == {"done": 3, "failed": 1, "skipped": 4}
    [refused] = rows.query("row_status == 'failed'")["error"]
    assert refused.startswith("not_enough_credit: ")  # the refusal that stopped the run, in the service's words
    assert paid == [2 * unit, unit] and batch.spent == 3 * unit

    control(box, "POST", f"users/{second.user_id}/credits", {"monthlyCredit": 100})  # topped up: the rest runs
    batch.run(progress=False)
    assert batch.stopped is None and batch.to_pandas()["row_status"].value_counts().to_dict() == {"done": 8}


@pytest.mark.postgres
def test_a_shared_sweep_gives_a_spent_accounts_rows_to_its_other_keys(connect, box, postgres):
    poor, rich = funded(connect, box, 0), funded(connect, box, 100)
    unit = price(box)
    control(box, "POST", f"users/{poor.user_id}/credits", {"monthlyCredit": 2 * unit + 1})
    batch, paid = run_over(box, [poor, rich], journal=postgres.new_database())

    assert batch.stopped is None
    assert {entry.status for entry in batch.entries.values()} == {"done"} and len(batch.entries) == 8
    assert paid == [2 * unit, 6 * unit]
