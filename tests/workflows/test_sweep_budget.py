"""A hard budget pauses a sweep across processes: three ``imagekit sweep run`` processes on one
PostgreSQL journal and one PostgreSQL ledger stop taking rows at the budget of the sweep's tag, not a
credit over it, each saying why in one line and exiting non-zero, and the budget's alerts are sent
once among them; the rows left wait, uncharged and not failed, and a run after the limit is raised
finishes them. Both sandbox faces."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from imagekit.ledger import Ledger
from tests.helpers import balance, sweep_process, user_env
from tests.utils.service import public_style
from tests.workflows.test_sweeps import generated, rows_of, served, users  # noqa: F401 (served: a fixture)

ROWS = 12


def sweep_file(folder: Path, journal: str, style: int) -> Path:
    path = folder / "capped.toml"
    path.write_text(f"""
[sweep]
name = "capped"
journal = "{journal}"
tags = {{ experiment = "capped" }}
[axes]
prompt = [{", ".join(f'"a kite, take {n}"' for n in range(ROWS))}]
[defaults]
style = {style}
""")
    return path


def sweep_run(path: Path, base_url: str, key: str, ledger: str, home: Path) -> subprocess.Popen[str]:
    return sweep_process(path, user_env(base_url, key, ledger, home))


def ended(processes: list[subprocess.Popen[str]]) -> list[tuple[int, str, str]]:
    outs = [process.communicate(timeout=300) for process in processes]
    return [(process.returncode, out, err) for process, (out, err) in zip(processes, outs, strict=True)]


@pytest.mark.slow(20)
def test_a_hard_budget_pauses_a_sweep_in_every_process_and_a_raised_limit_lets_it_go_on(served, postgres, tmp_path):  # noqa: F811
    user_ids, keys = users(served, 3, plan="pro")
    before = [balance(served, key) for key in keys]
    journal, ledger = postgres.new_database(), postgres.new_database()
    Ledger(ledger).set_budget(experiment="capped", limit=11, warn_at=None)
    path = sweep_file(tmp_path, journal, public_style(served))

    processes = [sweep_run(path, served.url, key, ledger, tmp_path / f"home-{n}") for n, key in enumerate(keys)]
    outcomes = ended(processes)
    for code, out, err in outcomes:
        line, kept = out.splitlines()  # how far it got and why it stopped; where what it made is kept
        assert kept.startswith("kept: the images on the service (their ids in the journal), the journal in "), kept
        assert code == 1, err[-2000:]
        assert "; stopped: budget experiment=capped: " in line and "(hard budget)" in line, line
        assert line.endswith("the rows left wait for a run after the limit is raised"), line
        assert "Traceback" not in err
    for said in ("reached 50% of its limit", "reached 80% of its limit", "is full: it refused an operation"):
        # the budget's alerts, each sent by one of the three (a log line); the last as a refusal found it full
        assert sum(err.count(f"budget experiment=capped {said}") for _, _, err in outcomes) == 1

    spent = sum(b - balance(served, key) for b, key in zip(before, keys))
    rows = rows_of(journal, "capped")
    done = [credits for status, _, credits in rows.values() if status == "done"]
    unit = done[0]
    assert 11 - unit < spent <= 11 and spent == sum(done)  # not a credit over; the last row that fit, taken
    assert generated(served, user_ids) == len(done)
    left = {key: status for key, (status, _, credits) in rows.items() if status != "done"}
    assert set(left.values()) <= {"pending", "skipped"} and len(left) == ROWS - len(done)  # none failed
    assert all(rows[key][2] is None for key in left)  # none charged
    [budget] = Ledger(ledger).budgets("experiment")
    assert (budget.spent, budget.held) == (spent, 0)

    Ledger(ledger).set_budget(experiment="capped", limit=1000, warn_at=None)
    [(code, out, err)] = ended([sweep_run(path, served.url, keys[0], ledger, tmp_path / "home-again")])
    assert code == 0, err[-2000:]
    assert out.startswith(f"sweep capped: {ROWS} of {ROWS} rows done"), out
    assert {status for status, _, _ in rows_of(journal, "capped").values()} == {"done"}
    assert generated(served, user_ids) == ROWS  # each row made once
