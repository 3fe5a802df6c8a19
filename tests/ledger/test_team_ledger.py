"""A ledger a team shares: tags on every operation, spend by tag, budgets per tag value, and several
processes writing one ledger (a SQLite file or a PostgreSQL database) at once."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pandas as pd
import pytest

import imagekit
from imagekit.ledger import Entry, Ledger, Status
from imagekit.reports import spend_by_tag
from tests.helpers import PATIENT_RETRIES, balance, control, release_together
from tests.utils.users import make_user

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ledger_location(either_ledger) -> str:
    """Every test here runs on a SQLite ledger and on a PostgreSQL one (the two-process ones: one each)."""
    return either_ledger


def test_tags_label_every_operation_inside_and_nest(connect):
    ik = connect()
    style = ik.styles()[0]
    with ik.tags(experiment="grid-a", person="ana") as now:
        assert now == {"experiment": "grid-a", "person": "ana"}
        image = ik.create("a fox", style=style).images[0]
        with imagekit.tags(person=None, step="cut"):  # an inner value wins, None removes one
            image.remove_bg()
    ik.create("after the block", style=style)
    assert [entry.tags for entry in ik.ledger.entries()] == [
        {"experiment": "grid-a", "person": "ana"}, {"experiment": "grid-a", "step": "cut"}, {}]
    frame = ik.ledger.to_pandas()
    assert frame["tag_experiment"].fillna("-").tolist() == ["grid-a", "grid-a", "-"]
    assert frame.groupby("tag_experiment")["credits"].sum().to_dict() == {"grid-a": frame["credits"].iloc[:2].sum()}


def test_tags_follow_each_asyncio_task(connect, box, ledger_location):
    key = connect().config.api_key

    async def main() -> None:
        async with imagekit.AsyncClient(box.url, key, ledger=ledger_location, retry_policy=PATIENT_RETRIES) as ik:
            style = (await ik.styles())[0]

            async def one(person: str) -> None:
                with imagekit.tags(person=person):
                    await anyio.sleep(0)  # the other task runs meanwhile, with tags of its own
                    await ik.create(f"by {person}", style=style, group_id=person)

            with imagekit.tags(experiment="async"):
                async with anyio.create_task_group() as tasks:
                    for person in ("ana", "bo"):
                        tasks.start_soon(one, person)

    asyncio.run(main())
    entries = Ledger(ledger_location).entries("")
    assert sorted((entry.group_id, entry.tags["person"], entry.tags["experiment"]) for entry in entries) == [
        ("ana", "ana", "async"), ("bo", "bo", "async")]


def test_batch_and_chain_tags_reach_refunds_and_add_up_to_the_balance(connect, box):
    ik = connect()
    before = balance(ik)
    control(box, "POST", "faults", {"fail_generation_rate": 0.4, "seed": 3})
    with ik.tags(person="ana"):
        batch = ik.batch([f"p {i}" for i in range(8)], style=ik.styles()[0], count=2, tags={"experiment": "grid-a"})
        batch.run(progress=False)
    control(box, "DELETE", "faults")
    made = batch.to_pandas().query("status == 'COMPLETED'")["image_id"]
    out = imagekit.chain(tags={"experiment": "grid-b"}).remove_bg().upsize().run(ik.image(int(made.iloc[0])))
    assert out.ok
    frame = ik.ledger.to_pandas()
    refunds = frame[frame["operation"] == "refund"]
    assert len(refunds) and all(tags == {"experiment": "grid-a", "person": "ana"} for tags in refunds["tags"])
    table = spend_by_tag(frame, "experiment")
    assert table.loc["grid-b", "credits"] == pytest.approx(out.lineage["credits"].sum())
    assert table["credits"].sum() == pytest.approx(before - balance(ik), abs=1e-9)
    assert table["unknown"].sum() == 0 and "(untagged)" not in table.index
    assert spend_by_tag(frame, "person")["credits"].to_dict() == pytest.approx(
        {"ana": table.loc["grid-a", "credits"], "(untagged)": table.loc["grid-b", "credits"]})


def test_chain_map_carries_the_callers_tags_into_its_threads(connect):
    ik = connect()
    images = ik.create("two foxes", style=ik.styles()[0], count=2).images
    with ik.tags(person="ana"):
        results = imagekit.chain(tags={"experiment": "map"}).remove_bg().map(images, concurrency=2)
    assert all(result.ok for result in results)
    edits = [entry for entry in ik.ledger.entries() if entry.operation == "removeBg"]
    assert [entry.tags for entry in edits] == [{"experiment": "map", "person": "ana"}] * 2


def test_a_hard_budget_refuses_before_anything_is_sent(connect):
    ik = connect()
    style = ik.styles()[0]  # 2 credits an image
    budget = ik.budget(experiment="tiny", limit=5, warn_at=None)
    assert (budget.spent, budget.left, budget.hard) == (0, 5, True)
    with ik.tags(experiment="tiny"):
        image = ik.create("one", style=style, count=2).images[0]
        out = imagekit.chain().remove_bg().upsize().run(image)  # 4 + 1 fits in 5; 2 more would not
        before, recorded = balance(ik), len(ik.ledger.entries())
        with pytest.raises(imagekit.BudgetExceededError, match="experiment=tiny: 5 of 5 credits spent") as refused:
            ik.create("two", style=style)
    assert out.failed_step == 1 and isinstance(out.error, imagekit.BudgetExceededError)
    assert refused.value.cost == 2 and refused.value.budget.spent == 5
    assert balance(ik) == before and len(ik.ledger.entries()) == recorded  # nothing sent, nothing charged
    ik.create("untagged work is not capped", style=style)
    [budget] = ik.ledger.budgets("experiment")
    assert (budget.spent, budget.held) == (5, 0)


def test_a_batch_stops_at_its_tags_budget(connect):
    ik = connect()
    ik.budget(experiment="grid", limit=9, warn_at=None)
    before = balance(ik)
    batch = ik.batch([f"p {i}" for i in range(10)], style=ik.styles()[0], tags={"experiment": "grid"})
    batch.run(progress=False)
    assert "budget experiment=grid" in batch.stopped
    states = batch.to_pandas()["row_status"].value_counts().to_dict()
    assert states == {"done": 4, "skipped": 6}  # 4 rows of 2 credits; a fifth would pass 9
    assert before - balance(ik) == 8 == ik.ledger.budgets()[0].spent


def test_a_soft_budget_warns_and_goes_on(connect):
    ik = connect()
    style = ik.styles()[0]
    ik.budget(experiment="soft", limit=4, warn_at=0.5, hard=False)
    with ik.tags(experiment="soft"):
        with pytest.warns(imagekit.BudgetWarning, match="reached 50% of its limit"):
            ik.create("a", style=style)
        with pytest.warns(imagekit.BudgetWarning, match="passed its limit"):
            ik.create("b", style=style, count=2)
    assert ik.ledger.budgets()[0].spent == 6


@pytest.mark.parametrize("bad", [{"": "x"}, {"a b": "x"}, {"k": ""}, {"k": ["list"]}, {"k": True}])
def test_bad_tags_are_refused_with_a_clear_error(bad):
    with pytest.raises(imagekit.ConfigError, match="tag"):
        with imagekit.tags(bad):
            pass


def test_a_budget_names_one_tag_value(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    with pytest.raises(imagekit.ConfigError, match="one tag value"):
        ledger.set_budget(experiment="a", person="b", limit=3)
    with pytest.raises(imagekit.ConfigError, match="warn_at"):
        ledger.set_budget(experiment="a", limit=3, warn_at=2)
    ledger.set_budget({"team.name": "x"}, limit=3)
    ledger.remove_budget({"team.name": "x"})
    assert ledger.budgets() == []


def test_a_ledger_from_before_tags_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.executescript("""
        CREATE TABLE entries (seq INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL, account TEXT NOT NULL,
            operation TEXT NOT NULL, source_id INTEGER, image_ids TEXT NOT NULL, request_id TEXT, group_id TEXT,
            style_id INTEGER, credits REAL, balance REAL, daily_credit REAL, monthly_credit REAL,
            default_credit REAL, status TEXT NOT NULL, error TEXT, latency REAL);
        CREATE TABLE prices (account TEXT NOT NULL, key TEXT NOT NULL, credits REAL NOT NULL, source TEXT NOT NULL,
            time TEXT NOT NULL, PRIMARY KEY (account, key));
        INSERT INTO entries (time, account, operation, image_ids, credits, status)
            VALUES ('2025-01-01T00:00:00.000+00:00', 'a', 'create', '[7]', 2.0, '200');
    """)
    old.close()
    for _ in range(2):  # opened twice: the second time finds nothing left to migrate
        ledger = Ledger(path, account="a")
        ledger.record(Entry(operation="enhance", status=Status.ANSWERED, credits=1.0, tags={"experiment": "new"}))
        ledger.close()
    [first, *later] = Ledger(path, account="a").entries()
    assert (first.image_ids, first.tags, first.source) == ([7], {}, None)
    assert [entry.tags for entry in later] == [{"experiment": "new"}] * 2


def test_a_postgresql_ledger_without_its_driver_names_the_extra():
    code = ("import sys; sys.modules['psycopg'] = None; import imagekit\n"
            "try:\n    imagekit.Client('http://127.0.0.1:9', 'k', ledger='postgresql://u:secret@127.0.0.1:9/db')\n"
            "except imagekit.ConfigError as exc:\n    print(exc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert "pip install 'imagekit[postgres]'" in out and "secret" not in out and "postgresql://127.0.0.1:9/db" in out


def test_a_ledger_url_hides_its_password():
    ledger = Ledger("postgresql://team:hunter2@db.example:5432/credits?sslpassword=pw2")  # opens nothing until used
    assert "hunter2" not in repr(ledger) and ledger.location == "postgresql://db.example:5432/credits"  # no user, no query
    assert ledger.path is None


def _worker(box, key: str, ledger: str, tags: dict[str, str], rows: int, barrier: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.ledger.team_worker", box.url, key, ledger,
                             json.dumps(tags), str(rows), str(barrier)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def _together(workers: list[subprocess.Popen], barrier: Path) -> list[str]:
    """Start the workers' work at once (each waits for ``go``); their last lines of stdout."""
    outs = []
    try:
        release_together(workers, barrier)
        for worker in workers:
            out, err = worker.communicate(timeout=300)
            assert worker.returncode == 0, err
            outs.append(out.strip().splitlines()[-1])
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    return outs


# Two processes on one ledger, on the diagonal of face and database: both faces (a charge's figure
# from its header, or priced) and both ledgers (SQLite's file lock, PostgreSQL's rows) are met, and
# each pairing's own path runs in this module's single-process tests; all four cost 50 CPU-s a run.
ONE_LEDGER_TWO_WRITERS = pytest.mark.parametrize(
    ("box", "either_ledger"), [pytest.param("extended", "postgresql", marks=pytest.mark.postgres, id="extended-postgresql"),
                               ("spec-exact", "sqlite")], indirect=True)


@pytest.mark.slow(10)
@ONE_LEDGER_TWO_WRITERS
def test_two_processes_write_one_tagged_ledger_and_a_third_reports_both(box, ledger_location, tmp_path):
    users = {"grid-a": make_user(box, "pro"), "grid-b": make_user(box, "pro")}
    clients = {tag: imagekit.Client(box.url, key, ledger=False) for tag, (_, key) in users.items()}
    before = {tag: balance(client) for tag, client in clients.items()}
    control(box, "POST", "faults", {"fail_generation_rate": 0.3, "seed": 11})  # refunds, tagged too
    try:
        workers = [_worker(box, key, ledger_location, {"experiment": tag, "person": f"p-{tag}"}, 6, tmp_path)
                   for tag, (_, key) in users.items()]
        assert _together(workers, tmp_path) == ["finished", "finished"]
    finally:
        control(box, "DELETE", "faults")
    report = subprocess.run([sys.executable, "-m", "imagekit.cli", "usage", "--ledger", ledger_location,
                             "--by", "experiment", "--out", str(tmp_path / "report")],
                            cwd=ROOT, capture_output=True, text=True, check=True)
    assert "grid-a" in report.stdout and "grid-b" in report.stdout
    table = pd.read_csv(tmp_path / "report" / "usage-by-experiment.csv", index_col="experiment")
    for tag, client in clients.items():
        assert table.loc[tag, "credits"] == pytest.approx(before[tag] - balance(client), abs=1e-9), tag
        client.close()
    assert set(table.index) == {"grid-a", "grid-b"} and table["unknown"].sum() == 0
    entries = Ledger(ledger_location).entries("")
    assert {entry.operation for entry in entries} >= {"create", "removeBg", "upsize"}
    assert all(entry.tags["person"] == f"p-{entry.tags['experiment']}" for entry in entries)  # none mixed up


@pytest.mark.slow
@ONE_LEDGER_TWO_WRITERS
def test_two_processes_never_pass_one_hard_budget_together(box, ledger_location, tmp_path):
    keys = [make_user(box, "pro")[1] for _ in range(2)]
    clients = [imagekit.Client(box.url, key, ledger=False) for key in keys]
    before = [balance(client) for client in clients]
    Ledger(ledger_location).set_budget(experiment="race", limit=21, warn_at=None)
    workers = [_worker(box, key, ledger_location, {"experiment": "race"}, 12, tmp_path) for key in keys]
    stopped = _together(workers, tmp_path)
    assert all("budget experiment=race" in line for line in stopped), stopped
    spent = sum(start - balance(client) for start, client in zip(before, clients, strict=True))
    [budget] = Ledger(ledger_location).budgets("experiment")
    assert 21 - 2 < spent <= 21 and budget.spent == pytest.approx(spent) and budget.held == 0
    for client in clients:
        client.close()


def test_a_postgresql_ledger_outlives_a_dropped_connection(postgres):
    """A database restart (here: the server ending the ledger's session) costs no entry."""
    import psycopg

    url = postgres.new_database()
    ledger = Ledger(url, account="a")
    ledger.record(Entry(operation="create", status=Status.ANSWERED, credits=2.0))
    with psycopg.connect(url, autocommit=True) as admin:
        ended = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                              "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()
    assert ended == (1,)
    ledger.record(Entry(operation="create", status=Status.ANSWERED, credits=3.0))
    assert ledger.total() == 5 and len(ledger.entries()) == 2


def test_the_ledger_url_comes_from_the_environment(box, tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGEKIT_LEDGER_URL", f"sqlite:///{tmp_path}/team.sqlite")
    with imagekit.Client(box.url, box.api_key) as ik:
        assert ik.ledger.path == tmp_path / "team.sqlite"
    with imagekit.Client(box.url, box.api_key, ledger=tmp_path / "mine.sqlite") as ik:  # an explicit one wins
        assert ik.ledger.path == tmp_path / "mine.sqlite"
