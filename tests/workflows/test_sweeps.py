"""One sweep drained by several processes through a journal in PostgreSQL: rows leased, each done
once; a killed process's rows finished by the others after its lease; a process paused past its
lease makes no row again; processes on one key kept within its plan's limit together. Real
processes, a real cluster, a sandbox served on loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy import func, select

import imagekit
from imagekit.cli import main
from imagekit.cli.sweep import status_lines
from imagekit.errors import ConfigError, JournalMismatchError, JournalUnavailableError
from imagekit.ledger import Ledger
from imagekit.sandbox import EmbeddedSandbox
from imagekit.sandbox.store.tables import Image
from imagekit.workflows.batches.journals.shared import SharedJournal
from tests.helpers import TLS, balance, wait_until
from tests.postgres import PostgresServer
from tests.utils.service import public_style, server_images
from tests.utils.users import make_user
from tests.workflows.sweep_worker import sweep_rows

ROOT = Path(__file__).resolve().parents[2]
LATENCY = 1.0
"""Seconds each generation takes: long beside what a create costs the processes themselves."""


@pytest.fixture(params=["extended", "spec-exact"])
def served(request, tmp_path) -> Iterator[EmbeddedSandbox]:
    """A sandbox for the sweep's processes; both faces (the spec-exact one shows no group ids)."""
    with EmbeddedSandbox(tmp_path / "sandbox", latency=LATENCY, base_size=64,
                         spec_exact=request.param == "spec-exact") as running:
        yield running


def generated(box: EmbeddedSandbox, user_ids: list[int]) -> int:
    """Images the sandbox generated (and charged) for these users: the sweep's duplicates would show."""
    with box.sandbox.db.read() as session:
        return session.scalar(select(func.count()).select_from(Image).where(
            Image.owner_id.in_(user_ids), Image.kind == "generation"))


def start(box: EmbeddedSandbox, tmp_path: Path, n: int, keys: list[str], journal: str, rows: int,
          lease: float = 30.0, peers: int = 1) -> tuple[subprocess.Popen[bytes], Path]:
    """Process ``n`` of ``peers`` of the sweep, on ``keys``; they start running together."""
    spec = {"base_url": box.url, "keys": keys, "journal": journal, "name": "lighthouses", "rows": rows,
            "style": public_style(box), "lease": lease, "ledger": str(tmp_path / f"ledger-{n}.sqlite"),
            "report": str(tmp_path / f"report-{n}.json"), "barrier": str(tmp_path / "barrier"), "peers": peers}
    env = {**os.environ, "IMAGEKIT_HOME": str(tmp_path / f"home-{n}")}
    process = subprocess.Popen([sys.executable, "-m", "tests.workflows.sweep_worker", json.dumps(spec)], cwd=ROOT,
                               env=env, stderr=subprocess.PIPE)
    return process, Path(spec["report"])


def finish(processes: list[subprocess.Popen[bytes]], reports: list[Path]) -> list[dict[str, Any]]:
    """Each process's report, once all have ended well (their standard error in ``report["err"]``)."""
    errors = []
    for process in processes:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err.decode()[-2000:]
        errors.append(err.decode())
    return [{**json.loads(report.read_text()), "err": err} for report, err in zip(reports, errors)]


def rows_of(journal: str, name: str = "lighthouses") -> dict[str, tuple[str, int, float]]:
    """Each row's status, attempts and credits, as the journal holds them."""
    with psycopg.connect(journal) as db:
        rows = db.execute("SELECT key, status, attempts, credits FROM sweep_rows WHERE sweep = %s", (name,)).fetchall()
    return {key: (status, attempts, credits) for key, status, attempts, credits in rows}


def users(box: EmbeddedSandbox, count: int, plan: str = "standard") -> tuple[list[int], list[str]]:
    made = [make_user(box, plan) for _ in range(count)]
    return [user_id for user_id, _ in made], [key for _, key in made]


@pytest.mark.slow(20)
def test_three_processes_with_three_keys_drain_one_sweep_each_row_once(served, postgres, tmp_path):
    """How much faster the processes drain it than one alone is a benchmark's figure
    (benchmarks/bench_sweeps.py), not this test's: on a shared machine a timed ratio fails by chance."""
    user_ids, keys = users(served, 3)
    before = [balance(served, key) for key in keys]
    journal = postgres.new_database()
    started = [start(served, tmp_path, n, keys[n:] + keys[:n], journal, rows=60, peers=3) for n in range(3)]
    reports = finish([process for process, _ in started], [report for _, report in started])

    rows = rows_of(journal)
    assert len(rows) == 60 and {status for status, _, _ in rows.values()} == {"done"}
    assert generated(served, user_ids) == 60  # every row made once: no duplicate generation
    spent = sum(b - balance(served, key) for b, key in zip(before, keys))
    assert spent == sum(credits for _, _, credits in rows.values())  # the balances paid for the rows, exactly
    assert all(report["spent"] > 0 for report in reports)  # every process drained some of the rows
    assert max(r["started"] for r in reports) < min(r["ended"] for r in reports)  # side by side, not in turn


@pytest.mark.slow(15)
def test_a_killed_process_leaves_its_rows_to_the_others_after_its_lease(served, postgres, tmp_path):
    user_ids, keys = users(served, 3)
    before = [balance(served, key) for key in keys]
    journal = postgres.new_database()
    started = [start(served, tmp_path, n, keys[n:] + keys[:n], journal, rows=60, lease=3.0, peers=3)
               for n in range(3)]
    victim, _ = started[0]
    wait_until(lambda: sum(s == "done" for s, _, _ in rows_of(journal).values()) >= 15 if _exists(journal) else False,
               timeout=120, what="a quarter of the sweep done")
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    finish([process for process, _ in started[1:]], [report for _, report in started[1:]])

    rows = rows_of(journal)
    assert {status for status, _, _ in rows.values()} == {"done"}  # 0 rows lost
    assert generated(served, user_ids) == 60  # 0 duplicates, the killed process's creates included
    spent = sum(b - balance(served, key) for b, key in zip(before, keys))
    assert spent == sum(credits for _, _, credits in rows.values())


@pytest.mark.slow(17)
@pytest.mark.parametrize("served", ["extended"], indirect=True)  # the account's slots: no face of the service's
def test_two_processes_on_one_key_stay_within_its_limit_together(served, postgres, tmp_path):
    [user_id], [key] = users(served, 1)  # standard plan: 2 generations at once
    journal = postgres.new_database()
    started = [start(served, tmp_path, n, [key], journal, rows=30, peers=2) for n in range(2)]
    finish([process for process, _ in started], [report for _, report in started])

    assert {status for status, _, _ in rows_of(journal).values()} == {"done"}
    peak = httpx.get(f"{served.url}/sandbox/stats", verify=TLS, timeout=120).json()["peakConcurrency"][str(user_id)]
    assert peak <= 2
    entries = [entry for n in range(2) for entry in Ledger(tmp_path / f"ledger-{n}.sqlite").entries(account="")
               if entry.operation == "create"]
    refused = sum(entry.http_status == 429 for entry in entries)
    print(f"\ntwo processes on one key: peak {peak} running, {refused} of {len(entries)} creates refused")
    assert refused < 0.05 * len(entries)


def two_on_one_key(served: EmbeddedSandbox, postgres: PostgresServer, tmp_path: Path) -> tuple[
        int, str, float, float, str, list[tuple[subprocess.Popen[bytes], Path]]]:
    """Two processes started on a 24-row sweep with one pro key and 3-second leases: the user, the key,
    the sweep's price, the balance before, the journal, and each process with its report."""
    [user_id], [key] = users(served, 1, plan="pro")
    with imagekit.Client(served.url, key, ledger=False) as ik:
        price = ik.batch(sweep_rows(24), style=public_style(served)).estimate()
    before = balance(served, key)
    journal = postgres.new_database()
    started = [start(served, tmp_path, n, [key], journal, rows=24, lease=3.0, peers=2) for n in range(2)]
    return user_id, key, price, before, journal, started


def made_once_and_paid_once(served: EmbeddedSandbox, user_id: int, key: str, journal: str, before: float,
                            price: float) -> Counter[str]:
    """Every row of the sweep done, its images made exactly once and paid exactly; the images by row."""
    rows = rows_of(journal)
    assert len(rows) == 24 and {status for status, _, _ in rows.values()} == {"done"}
    made = Counter(group.rsplit(".", 1)[0] for _, group, _ in server_images(served, user_id))
    assert made == Counter(list(rows))  # every row's images made exactly once
    assert before - balance(served, key) == price == sum(credits for _, _, credits in rows.values())
    return made


PAUSED_HOLDING = {"extended": {"pending", "sent"}, "spec-exact": {"pending", "created"}}
"""The states of the rows the paused process holds, by face: leased and waiting for a slot, and a
create on its way (synchronous once tagged: ``sent`` until the images are done) or generating and
polled (asynchronous, as the interface has it: ``created``)."""


def held_by(journal: str, pid: int) -> dict[str, str]:
    """The rows process ``pid`` holds a live lease on, with their states."""
    with psycopg.connect(journal) as db:
        return dict(db.execute("SELECT key, status FROM sweep_rows WHERE owner LIKE %s AND lease_until >= now()",
                               (f"%:{pid}:%",)).fetchall())


def create_lock_held(journal: str, pid: int | None = None) -> bool:
    """Whether a process (``pid``, or any) holds an account's create lock on a live lease."""
    with psycopg.connect(journal) as db:
        if db.execute("SELECT to_regclass('sweep_create_locks') IS NULL").fetchone()[0]:
            return False
        return db.execute("SELECT count(*) > 0 FROM sweep_create_locks WHERE lease_until >= now() AND owner LIKE %s",
                          ("%" if pid is None else f"%:{pid}:%",)).fetchone()[0]


def taken_over(journal: str, pid: int, keys: list[str]) -> bool:
    """Whether every one of ``keys`` is done or leased by a process other than ``pid``."""
    with psycopg.connect(journal) as db:
        rows = db.execute("SELECT status, owner FROM sweep_rows WHERE key = ANY(%s)", (keys,)).fetchall()
    return all(status == "done" or (owner is not None and f":{pid}:" not in owner) for status, owner in rows)


@pytest.mark.slow(30)
def test_a_process_paused_past_its_lease_makes_no_row_twice_and_says_it_lost_rows(served, postgres, tmp_path):
    """Two processes on one pro key; one is SIGSTOPped while it holds rows in each state a row can be
    in on this face (and not the account's create lock), until the other has taken every one of them
    over (its lease of 3 s ran out), then SIGCONTed. Each row is made once and paid once; the paused one drops what it lost and says so."""
    face = "spec-exact" if served.sandbox.settings.spec_exact else "extended"
    user_id, key, price, before, journal, started = two_on_one_key(served, postgres, tmp_path)
    paused = started[0][0]
    try:
        while True:  # stopped when it holds every state: looked at again once it can no longer move
            wait_until(lambda: _exists(journal) and PAUSED_HOLDING[face] <= set(held_by(journal, paused.pid).values()),
                       timeout=120, what=f"the process holding rows {PAUSED_HOLDING[face]}")
            paused.send_signal(signal.SIGSTOP)
            held = held_by(journal, paused.pid)
            if PAUSED_HOLDING[face] <= set(held.values()) and not create_lock_held(journal):
                break
            paused.send_signal(signal.SIGCONT)
        wait_until(lambda: taken_over(journal, paused.pid, list(held)), timeout=120,
                   what="the other process taking over the paused one's rows")
    finally:
        paused.send_signal(signal.SIGCONT)
    reports = finish([process for process, _ in started], [report for _, report in started])

    made = made_once_and_paid_once(served, user_id, key, journal, before, price)
    assert reports[0]["lost"] >= 1, reports[0]["err"]  # the paused one knows it lost rows, and says so
    assert "this process dropped it, the other finishes it" in reports[0]["err"]
    print(f"\n{face}: paused holding {Counter(held.values())}; it lost {reports[0]['lost']} rows; "
          f"{sum(made.values())} images, {before - balance(served, key):g} credits for {price:g}")


@pytest.mark.slow(25)
@pytest.mark.parametrize("served", ["spec-exact"], indirect=True)  # the face whose creates take the lock
def test_a_process_paused_holding_the_create_lock_stalls_the_other_for_one_lease_and_sends_nothing_on_it(
        served, postgres, tmp_path):
    """Two processes on one pro key; one is SIGSTOPped while it holds the account's create lock. The
    other takes the lock once its lease (3 s) runs out and goes on making rows while the first is
    stopped (before, the lock was an advisory lock of the stopped process's session: the other waited
    out the whole pause). SIGCONTed, the first writes nothing on the lock or rows it lost; each row is
    made once and paid once."""
    user_id, key, price, before, journal, started = two_on_one_key(served, postgres, tmp_path)
    paused = started[0][0]
    holding = "SELECT count(*) > 0 FROM sweep_create_locks WHERE lease_until >= now() AND owner LIKE %s"
    try:
        wait_until(lambda: _exists(journal) and create_lock_held(journal), timeout=120, what="a create lock taken")
        with psycopg.connect(journal, autocommit=True) as db:  # one connection: each look is quick, under load too
            def held() -> bool:
                return db.execute(holding, (f"%:{paused.pid}:%",)).fetchone()[0]

            while True:  # stopped while it holds the lock: looked at again once it can no longer move
                wait_until(held, timeout=120, what="the first process holding the create lock")
                paused.send_signal(signal.SIGSTOP)
                if held():
                    break
                paused.send_signal(signal.SIGCONT)
        stopped_at = len(server_images(served, user_id))
        wait_until(lambda: len(server_images(served, user_id)) >= stopped_at + 3, timeout=90,
                   what="the other process making rows while the first is stopped with the lock")
    finally:
        paused.send_signal(signal.SIGCONT)
    reports = finish([process for process, _ in started], [report for _, report in started])

    made_once_and_paid_once(served, user_id, key, journal, before, price)
    print(f"\npaused holding the create lock: {stopped_at} images made then, the other went on; the paused one "
          f"lost {reports[0]['lost']} rows; {before - balance(served, key):g} credits for {price:g}")


def _exists(journal: str) -> bool:
    with psycopg.connect(journal) as db:
        return db.execute("SELECT to_regclass('sweep_rows') IS NOT NULL").fetchone()[0]


def done_rows(journal: str) -> int:
    """Rows done so far (0 before the journal's tables exist)."""
    return sum(status == "done" for status, _, _ in rows_of(journal).values()) if _exists(journal) else 0


@pytest.mark.slow(15)
@pytest.mark.parametrize("served", ["extended"], indirect=True)  # the journal's outage: no face of the service's
def test_a_sweep_rides_out_a_restart_of_its_journals_database(served, tmp_path):
    """``pg_ctl restart -m fast`` while two processes drain a sweep: each waits for the database,
    takes up where it was, and every row is made once and paid exactly."""
    with PostgresServer() as cluster:  # its own: restarting the session's would cut other tests' connections
        user_ids, keys = users(served, 2)
        before = [balance(served, key) for key in keys]
        journal = cluster.new_database()
        started = [start(served, tmp_path, n, keys[n:] + keys[:n], journal, rows=24, peers=2) for n in range(2)]
        wait_until(lambda: done_rows(journal) >= 6, timeout=120, what="a quarter of the sweep done")
        cluster.restart()
        reports = finish([process for process, _ in started], [report for _, report in started])

        rows = rows_of(journal)
        assert {status for status, _, _ in rows.values()} == {"done"} and len(rows) == 24
        assert generated(served, user_ids) == 24  # every row made once
        spent = sum(b - balance(served, key) for b, key in zip(before, keys))
        assert spent == sum(credits for _, _, credits in rows.values())
        for report in reports:  # each process met the outage, and said so in two lines
            assert "cannot be reached" in report["err"] and "answers again" in report["err"], report["err"]


@pytest.mark.parametrize(("served", "outage"), [("spec-exact", "stopped"), ("extended", "frozen")],
                         indirect=["served"])  # the journal's outage, each kind on one face: both faces met
def test_a_journal_away_longer_than_the_leases_stops_the_run_and_the_next_run_finishes(served, tmp_path, outage):
    """Past its leases a process could be working on a row another has taken: it stops with one clear
    error instead, and a run once the database is back settles what was in flight and makes the rest.
    A frozen server (SIGSTOP: the kernel still acknowledges every packet) is an outage like a stopped
    one: the run stops as soon, not when the server wakes."""
    with PostgresServer() as cluster:
        [user_id], [key] = users(served, 1)
        before = balance(served, key)
        journal = cluster.new_database()
        frozen: list[int] = []
        back = threading.Event()  # the outage ends when the run has stopped, or after a minute at most

        def go_away() -> None:
            wait_until(lambda: done_rows(journal) >= 2, timeout=60, what="two rows done")
            if outage == "stopped":
                cluster.halt()
            else:
                frozen.extend(cluster.freeze())
            back.wait(60)
            if outage == "stopped":
                cluster.resume()
            else:
                cluster.thaw(frozen)

        away = threading.Thread(target=go_away)
        away.start()
        try:
            with imagekit.Client(served.url, key, ledger=str(tmp_path / "ledger.sqlite")) as ik:
                batch = ik.batch(sweep_rows(8), name="lighthouses", style=public_style(served))
                with pytest.raises(JournalUnavailableError, match=r"could not be reached for \d+ s, as long as this "
                                                                  r"process's leases last \(4 s\)"):
                    batch.run(journal=journal, lease=4, progress=False)
                assert away.is_alive()  # stopped while the database was still away
                back.set()
                away.join()
                batch.run(journal=journal, lease=4, progress=False)
        finally:
            back.set()
            away.join()

        rows = rows_of(journal)
        assert {status for status, _, _ in rows.values()} == {"done"} and len(rows) == 8
        assert generated(served, [user_id]) == 8
        assert before - balance(served, key) == sum(credits for _, _, credits in rows.values())


def test_ctrl_c_gives_back_what_the_run_held_and_the_next_run_on_the_batch_finishes(served, postgres, tmp_path):
    """Ctrl+C in the middle of a sweep (a notebook's stop button): the rows and slots it held are free at
    once, not after its lease, and running the same batch again makes the rest, each row once."""
    [user_id], [key] = users(served, 1)
    before = balance(served, key)
    journal = postgres.new_database()
    main_thread = threading.main_thread().ident

    def interrupt_when_started() -> None:
        wait_until(lambda: done_rows(journal) >= 2, timeout=60, what="two rows done")
        signal.pthread_kill(main_thread, signal.SIGINT)

    with imagekit.Client(served.url, key, ledger=str(tmp_path / "ledger.sqlite")) as ik:
        batch = ik.batch(sweep_rows(8), name="lighthouses", style=public_style(served))
        interrupter = threading.Thread(target=interrupt_when_started)
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a test worker may ignore Ctrl+C
        interrupter.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                batch.run(journal=journal, progress=False)
        finally:
            interrupter.join()
            signal.signal(signal.SIGINT, previous)
        with psycopg.connect(journal) as db:
            held = db.execute("SELECT (SELECT count(*) FROM sweep_rows WHERE owner IS NOT NULL)"
                              " + (SELECT count(*) FROM sweep_slots WHERE owner IS NOT NULL)").fetchone()[0]
        assert held == 0
        batch.run(journal=journal, progress=False)

    rows = rows_of(journal)
    assert {status for status, _, _ in rows.values()} == {"done"} and len(rows) == 8
    assert generated(served, [user_id]) == 8
    assert before - balance(served, key) == sum(credits for _, _, credits in rows.values())


def test_sweep_status_says_what_is_done_running_and_left(served, postgres, tmp_path, capsys):
    _, [key] = users(served, 1)
    journal = postgres.new_database()
    finish(*zip(start(served, tmp_path, 0, [key], journal, rows=4)))
    assert main(["sweep", "status", "--journal", journal, "lighthouses"]) == 0
    out = capsys.readouterr().out
    credits = sum(credits for _, _, credits in rows_of(journal).values())
    assert out.startswith(f"sweep lighthouses: 4 of 4 rows done, 0 running, 0 failed, 0 uncertain, 0 left; {credits:g} "
                          "credits spent\n")
    assert "nothing left to run" in out
    assert main(["sweep", "status", "--journal", journal, "nowhere"]) == 1
    assert "no sweep named 'nowhere'" in capsys.readouterr().err


def test_a_shared_grid_that_made_nothing_gives_way_unless_a_process_holds_a_row(postgres):
    """Every row failed before anything was made: the next grid under the name replaces it. A row
    pending, held by a live process, or that made anything keeps the grid."""
    import psycopg

    url = postgres.new_database()
    SharedJournal(url, "grid").register(["a", "b"])
    with pytest.raises(JournalMismatchError, match=r"another grid \(2 rows, not 1"):  # pending: a run may be under way
        SharedJournal(url, "grid").check_grid(["c"])
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("UPDATE sweep_rows SET status = 'failed', error = 'style_not_found: No style 99.'")
        db.execute("UPDATE sweep_rows SET owner = 'elsewhere', lease_until = now() + interval '1 minute' "
                   "WHERE key = 'b'")  # a live process retries it
    with pytest.raises(JournalMismatchError, match=r"another grid \(2 rows, not 1"):
        SharedJournal(url, "grid").register(["c"])
    with psycopg.connect(url, autocommit=True) as db:
        assert db.execute("SELECT count(*) FROM sweep_rows").fetchone() == (2,)  # refused whole: nothing went
        db.execute("UPDATE sweep_rows SET lease_until = now() - interval '1 second'")  # its lease ran out
    SharedJournal(url, "grid").check_grid(["c"])
    journal = SharedJournal(url, "grid")
    journal.register(["c"])
    assert list(journal.load()) == ["c"] and journal.load()["c"].status == "pending"
    with pytest.raises(JournalMismatchError, match=r"another grid \(1 rows, not 2"):  # pending again
        SharedJournal(url, "grid").register(["a", "b"])


def test_the_expected_finish_follows_the_pace_so_far():
    first = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    found = {"done": 11, "total": 31, "failed": 1, "uncertain": 0, "credits": 22.0, "running": {"host:1:ab": 2},
             "first_done": first, "last_done": first + timedelta(seconds=20)}
    lines = status_lines("s", found, now=first + timedelta(seconds=20))
    assert lines[0] == "sweep s: 11 of 31 rows done, 2 running, 1 failed, 0 uncertain, 19 left; 22 credits spent"
    assert lines[1:] == ["  running on host:1:ab: 2", "  at the pace so far (2.00 s a row): done around 2026-01-01 12:00:58 UTC"]


def test_another_grid_under_the_same_name_is_refused_in_one_line(postgres):
    url = postgres.new_database()
    SharedJournal(url, "grid").register(["a", "b"])
    with pytest.raises(JournalMismatchError, match=r"^The sweep 'grid' in .* has another grid \(2 rows, not 3"):
        SharedJournal(url, "grid").register(["a", "b", "c"])
    SharedJournal(url, "grid").check_grid(["a", "b"])  # what an estimate asks, writing nothing
    with pytest.raises(JournalMismatchError, match=r"another grid \(2 rows, not 1"):
        SharedJournal(url, "grid").check_grid(["a"])
    with pytest.raises(ConfigError, match="needs a name"):
        SharedJournal(url, "")
    with pytest.raises(ConfigError, match="lease"):
        SharedJournal(url, "grid", lease=0)
