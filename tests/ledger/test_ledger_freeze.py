"""A shared ledger whose database stops answering (every server process SIGSTOPped, as a failover or
a frozen VM looks from outside) never holds up the work: the ledger's waits are bounded, its writes
run off the requests' thread, the spool takes over within seconds, and once the server answers again
every entry is written once and the ledger equals the balance change."""

from __future__ import annotations

import threading
import time

import pytest

import imagekit
from imagekit.ledger import store
from tests.helpers import PATIENT_RETRIES, balance, wait_until
from tests.ledger.test_ledger_outage import cluster, creates_in, ledger_url, slow_box  # noqa: F401 (fixtures)
from tests.utils.service import server_images
from tests.utils.users import make_user

pytestmark = pytest.mark.postgres

BOUND = store.STATEMENT_SECONDS + store.CONNECT_SECONDS
"""The longest one write may wait on a frozen database: its statement, then a new connection."""
FROZEN_SECONDS = 120.0
"""The longest the database stays frozen: it thaws when the batch has ended, or after this, far longer
than every bound of the ledger's waits (a few seconds) and than the batch needs, even on a busy machine."""


@pytest.mark.slow
def test_a_frozen_database_never_holds_up_a_batch(slow_box, cluster, ledger_url):  # noqa: F811
    assert FROZEN_SECONDS > 3 * (store.STATEMENT_SECONDS + store.CONNECT_SECONDS)
    user_id, key = make_user(slow_box, "pro")  # four generations at once
    ik = imagekit.Client(slow_box.url, key, ledger=ledger_url, retry_policy=PATIENT_RETRIES)
    style = ik.styles()[0].style_id
    before = balance(ik)
    thawed: list[float] = []
    made: list[int] = []
    ended = threading.Event()

    def freeze() -> None:  # once a few creates are recorded; until the batch has ended
        wait_until(lambda: creates_in(ledger_url) >= 4, timeout=60)
        frozen = cluster.freeze()
        try:
            made.append(len(server_images(slow_box, user_id)))
            threading.Event().wait(BOUND)
            made.append(len(server_images(slow_box, user_id)))  # as long as one bounded wait
            ended.wait(FROZEN_SECONDS - BOUND)
        finally:
            thawed.append(time.monotonic())
            cluster.thaw(frozen)

    down = threading.Thread(target=freeze)
    down.start()
    try:
        batch = ik.batch([f"a lighthouse, take {n}" for n in range(24)], style=style).run(progress=False)
        finished = time.monotonic()
    finally:
        ended.set()
        down.join()

    frame = batch.to_pandas()
    assert (frame["status"] == "COMPLETED").sum() == 24 and batch.stopped is None
    assert finished < thawed[0]  # every image was made while the database was frozen
    assert made[1] - made[0] >= min(24 - made[0], 5)  # more than the 4 in flight: new ones sent meanwhile
    assert ik.ledger.waiting() > 0  # and their entries waited on this machine meanwhile
    creates = [entry for entry in ik.ledger.entries() if entry.operation == "create"]  # answers again: written
    assert len(creates) == 24 and len({entry.uid for entry in creates}) == 24 and ik.ledger.waiting() == 0
    assert ik.ledger.total() == before - balance(ik) == 24 * 2
    ik.close()
