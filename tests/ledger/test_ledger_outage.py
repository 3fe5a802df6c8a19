"""A shared ledger whose database goes away: the work goes on, entries wait in the local spool and are
written once it answers, hard budgets refuse what they cannot check, and the ledger ends equal to the
balance change. On a PostgreSQL cluster of this module's own, stopped and started for real."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import psycopg
import pytest

import imagekit
from imagekit.ledger import Status
from imagekit.sandbox import EmbeddedSandbox
from tests.helpers import PATIENT_RETRIES, balance, wait_until
from tests.postgres import PostgresServer
from tests.utils.users import make_user

pytestmark = pytest.mark.postgres  # a cluster of its own: it stops and starts it


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresServer]:
    """A cluster for this module alone: stopping it must not disturb other tests."""
    with PostgresServer() as server:
        yield server


@pytest.fixture(params=["extended", "spec-exact"])
def slow_box(request, tmp_path) -> Iterator[EmbeddedSandbox]:
    """Generations slow enough that an outage falls in the middle of a batch; both sandbox faces."""
    with EmbeddedSandbox(tmp_path / "sandbox", latency=0.4, base_size=96,
                         spec_exact=request.param == "spec-exact") as running:
        yield running


@pytest.fixture
def ledger_url(cluster) -> Iterator[str]:
    url = cluster.new_database()
    yield url
    if not (cluster.data / "postmaster.pid").exists():
        cluster.resume()  # a test that failed mid-outage leaves the cluster up for the next


def creates_in(url: str) -> int:
    """Creates the ledger at ``url`` holds (0 before its writer made its tables)."""
    with psycopg.connect(url) as db:
        try:
            return db.execute("SELECT count(*) FROM entries WHERE operation = 'create'").fetchone()[0]
        except psycopg.errors.UndefinedTable:
            return 0


def outage_messages(caplog) -> tuple[int, int]:
    texts = [record.getMessage() for record in caplog.records if record.name == "imagekit"]
    return sum("cannot be reached" in text for text in texts), sum("answers again" in text for text in texts)


@pytest.mark.slow
def test_a_batch_runs_through_an_outage_and_the_ledger_ends_equal_to_the_balance_change(
        slow_box, cluster, ledger_url, caplog):
    caplog.set_level(logging.WARNING, logger="imagekit")
    _, key = make_user(slow_box, "pro")  # four generations at once
    ik = imagekit.Client(slow_box.url, key, ledger=ledger_url, retry_policy=PATIENT_RETRIES)
    style = ik.styles()[0].style_id
    before = balance(ik)

    def outage() -> None:  # four seconds down, once a few creates are recorded
        wait_until(lambda: creates_in(ledger_url) >= 4, timeout=60)
        cluster.halt()
        threading.Event().wait(4)
        cluster.resume()

    down = threading.Thread(target=outage)
    down.start()
    batch = ik.batch([f"a lighthouse, take {n}" for n in range(24)], style=style).run(progress=False)
    down.join()

    frame = batch.to_pandas()
    assert (frame["status"] == "COMPLETED").sum() == 24 and batch.stopped is None  # the work never stopped
    after = balance(ik)
    entries = ik.ledger.entries()  # the database answers again: what waited is written first
    creates = [entry for entry in entries if entry.operation == "create"]
    assert len(creates) == 24 and len({entry.uid for entry in creates}) == 24  # each once, none lost
    assert ik.ledger.total() == before - after == 24 * 2  # the ledger equals the balance change
    assert outage_messages(caplog) == (1, 1)  # warned once in a line, and once when it answered
    assert ik.ledger.spool is not None and not ik.ledger._waiting()
    ik.close()


def test_a_hard_budget_refuses_what_it_cannot_check_and_other_work_goes_on(slow_box, cluster, ledger_url, caplog):
    caplog.set_level(logging.WARNING, logger="imagekit")
    _, key = make_user(slow_box, "pro")
    ik = imagekit.Client(slow_box.url, key, ledger=ledger_url, retry_policy=PATIENT_RETRIES)
    style = ik.styles()[0].style_id
    ik.budget(experiment="capped", limit=100)
    with ik.tags(experiment="capped"):
        ik.create("a kite", style=style)  # checked against the budget: its rows are now known here
    before = balance(ik)
    assert not ik.ledger.waiting()  # what was recorded before the outage is in the database
    cluster.halt()
    try:
        with ik.tags(experiment="capped"), pytest.raises(imagekit.BudgetExceededError, match="cannot be checked"):
            ik.create("a kite", style=style)
        with ik.tags(experiment="free"):  # no budget binds this tag value: it goes on
            ik.create("a boat", style=style)
        ik.create("a bird", style=style)  # untagged: goes on
        with pytest.raises(imagekit.LedgerUnavailableError, match="cannot be reached"):
            ik.ledger.to_pandas()  # reading the entries back needs the database
        assert len(ik.ledger._waiting()) == 2
    finally:
        cluster.resume()
    wait_until(lambda: ik.ledger._spool.due(), timeout=10)
    assert [entry.tags.get("experiment") for entry in ik.ledger.entries()] == ["capped", "free", None]
    assert ik.ledger.total() - 2 == before - balance(ik) == 4  # the refused create was never sent
    assert outage_messages(caplog) == (1, 1)
    ik.close()


def test_a_ledger_unreachable_at_start_spools_and_refuses_tagged_work_it_cannot_check(
        slow_box, cluster, ledger_url, tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGEKIT_HOME", str(tmp_path / "fresh-home"))  # no budgets ever seen here
    _, key = make_user(slow_box, "standard")
    cluster.halt()
    try:
        ik = imagekit.Client(slow_box.url, key, ledger=ledger_url, retry_policy=PATIENT_RETRIES)
        style = ik.styles()[0].style_id
        made = ik.create("a lighthouse", style=style, count=2)
        with ik.tags(experiment="unknown"), pytest.raises(imagekit.BudgetExceededError, match="has not been read"):
            ik.create("a kite", style=style)
        [waiting] = ik.ledger._waiting()
        assert waiting["status"] == Status.ANSWERED.value and waiting["image_ids"] == str([i.id for i in made.images])
    finally:
        cluster.resume()
    wait_until(lambda: ik.ledger._spool.due(), timeout=10)
    [entry] = ik.ledger.entries()
    assert entry.image_ids == [image.id for image in made.images] and entry.credits == 4
    ik.close()
