"""A hard budget holds from the very first call on a fresh ``IMAGEKIT_HOME``: before the ledger has
learned any price, plain creates from several processes and an async client's concurrent creates
are held at the plan's price (the dearest of their kind), so nothing passes the limit."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

import imagekit
from tests.helpers import PATIENT_RETRIES, balance, release_together
from tests.utils.service import public_style
from tests.utils.users import make_user

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 9  # three images of a public style (3 credits each on the sandbox's plans)


async def _concurrent_creates(box, key: str, style: int, creates: int) -> list[str]:
    """``creates`` one-image creates sent at once by one AsyncClient, each ``made`` or ``refused: ...``."""
    async with imagekit.AsyncClient(box.url, key, retry_policy=PATIENT_RETRIES) as aik:
        async def one(number: int) -> str:
            try:
                with aik.tags(experiment="cap"):
                    await aik.create(f"at once {number}", style=style, count=1)
            except imagekit.BudgetExceededError as exc:
                return f"refused: {exc}"
            return "made"

        return list(await asyncio.gather(*(one(number) for number in range(creates))))


@pytest.mark.slow(14)
def test_a_hard_budget_on_a_fresh_home_holds_three_processes_and_an_async_client_to_its_limit(box, tmp_path):
    user_id, key = make_user(box, "pro")
    style, before = public_style(box), balance(box, key)
    with imagekit.Client(box.url, key) as ik:  # the default ledger, under the test's fresh IMAGEKIT_HOME
        ik.budget(experiment="cap", limit=LIMIT, warn_at=None)  # refusals, not warnings, are what is checked
        assert ik.ledger is not None and not ik.ledger.prices(), "the home is fresh: no price is known yet"
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    workers = [subprocess.Popen([sys.executable, "-m", "tests.ledger.budget_worker", box.url, key, str(style), "2",
                                 str(barrier)], cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(ROOT)}) for _ in range(3)]
    try:
        release_together(workers, barrier)
        outcomes = asyncio.run(_concurrent_creates(box, key, style, 4))
        for worker in workers:
            out, err = worker.communicate(timeout=300)
            assert worker.returncode == 0, err
            outcomes += out.splitlines()
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()

    assert len(outcomes) == 3 * 2 + 4
    made = outcomes.count("made")
    refusals = [line for line in outcomes if line != "made"]
    charged = before - balance(box, key)
    assert made == LIMIT // 3 and charged == LIMIT, (charged, outcomes)  # to the limit, never past it
    for refusal in refusals:  # one line each, saying what was refused and that nothing was sent
        assert refusal.startswith("refused: budget experiment=cap:") and "so it was not sent" in refusal, refusal
    with imagekit.Client(box.url, key) as ik:
        assert ik.ledger is not None
        entries = ik.ledger.entries()
        [budget] = ik.ledger.budgets("experiment")
        assert len(entries) == made, "a refused create records nothing and costs nothing"
        assert sum(entry.credits or 0 for entry in entries) <= LIMIT
        assert budget.spent + budget.held == LIMIT, budget  # the spec-exact face's entries stay held at the bound
