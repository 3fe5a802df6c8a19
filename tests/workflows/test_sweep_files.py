"""Sweep files: checked key by key with one line per mistake, run from the terminal (resumable,
exported, logged to MLflow where asked), estimated before anything runs. Read back through datasets
and MLflow's own client."""

from __future__ import annotations

import os
import sqlite3
import textwrap
from contextlib import closing
from pathlib import Path

import pytest

from imagekit.cli import main
from imagekit.errors import ConfigError
from imagekit.workflows.sweep_file import load_sweep
from tests.helpers import balance
from tests.utils.users import make_user

SWEEP = """
[sweep]
name = "lighthouses"
budget = 40
out_dir = "{out}"
journal = "{journal}"
export = "imagefolder"
tags = {{ experiment = "lighthouse-v1" }}

[axes]
prompt = ["a lighthouse at dusk", "a lighthouse in fog"]
ratio = ["1:1", "16:9"]

[defaults]
count = 1
style = {style}
"""


def write(folder: Path, text: str) -> Path:
    path = folder / "sweep.toml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize(("text", "message"), [
    ("[sweep]\nbudjet = 4\n[axes]\nprompt = ['a']", r"\[sweep\] budjet is not a sweep setting: did you mean budget\?;"),
    ("[sweep]\ncolour = 4\n[axes]\nprompt = ['a']", r"\[sweep\] colour is not a sweep setting; allowed: name, budget"),
    ("[sweep]\nbudget = -1\n[axes]\nprompt = ['a']", r"\[sweep\] budget = -1: use a number of credits, at least 0"),
    ("[sweep]\nexport = 'zip'\nout_dir = 'o'\n[axes]\nprompt = ['a']", r'export = .zip.: use "imagefolder" or "parquet"'),
    ("[sweep]\nexport = 'parquet'\njournal = 'j.sqlite'\n[axes]\nprompt = ['a']", r"export needs out_dir"),
    ("[grid]\nprompt = ['a']", r"unknown table \[grid\]; a sweep file has \[sweep\], \[axes\], \[defaults\]"),
    ("[axes]\nstyle = [1, 2]", r"no prompt"),
    ("name = 'foxes'\nprompt = ['a fox']\nstyle = ['My Photo']",  # a first sweep file, written without tables
     r"^\S+sweep.toml: name, prompt, style are outside any table: a sweep file gives its settings under \[sweep\] "
     r"\(name, budget, out_dir...\) and the rows' fields under \[axes\] \(lists to combine, e.g. prompt = \[...\]\) "
     r"or \[defaults\] \(one value each\)$"),
    ("[axes]\nprompt = []", r"\[axes\] prompt is empty"),
    ("[axes]\nprompt = ['a']\n[defaults]\nbudget = 3", r"budget belongs in \[sweep\]"),
    ("[axes]\nprompt = ['a']\n[defaults]\nratio = ['1:1']", r"\[defaults\] ratio = \['1:1'\]: a default is one value"),
    ("[axes\nprompt = ['a']", r"not TOML"),
    ("[sweep]\nbudget = inf\n[axes]\nprompt = ['a']", r"\[sweep\] budget = inf: use a number of credits"),
    ("[axes]\nprompt = ['a']\nstyle = [1]\n[defaults]\ncount = '4'", r"\[defaults\] count = '4': use a whole number, without "
                                                                    "quotes"),
    ("[axes]\nprompt = ['a']\nseed = [1, '2']\n[defaults]\nstyle = 1", r"\[axes\] seed = '2': use a whole number"),
    ("[sweep]\ndedupe = 'yes'\n[axes]\nprompt = ['a']", r"\[sweep\] dedupe = 'yes': use true or false;"),
])
def test_each_mistake_is_one_line_naming_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message) as refused:
        load_sweep(write(tmp_path, text))
    assert "\n" not in str(refused.value)


def test_a_sweep_file_runs_resumes_and_exports_a_dataset(box, tmp_path, monkeypatch, capsys):
    from datasets import load_dataset

    _, key = make_user(box, "pro")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    style = __import__("imagekit").Client(box.url, key, ledger=False).styles()[0].style_id
    # Relative paths are the file's folder's, wherever it is run from: the second run, from another
    # folder, finds its journal and pays for nothing.
    path = write(tmp_path, SWEEP.format(out="out", journal="journal.sqlite", style=style))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")

    assert main(["sweep", "estimate", str(path)]) == 0
    estimate = capsys.readouterr().out
    assert estimate.startswith("sweep lighthouses: 4 requests, 4 images, about ") and "(budget 40)" in estimate

    assert main(["sweep", "run", str(path), "--no-progress"]) == 0
    first = capsys.readouterr().out
    assert first.startswith("sweep lighthouses: 4 of 4 rows done,") and "dataset: " in first
    rows = load_dataset("imagefolder", data_dir=str(tmp_path / "out" / "dataset"), split="train")
    assert len(rows) == 4 and sorted(set(rows["prompt"])) == ["a lighthouse at dusk", "a lighthouse in fog"]
    assert set(rows["ratio"]) == {"1:1", "16:9"}

    monkeypatch.chdir(tmp_path)
    written = (tmp_path / "out" / "dataset" / "metadata.jsonl").stat().st_mtime_ns
    assert main(["sweep", "run", "sweep.toml", "--no-progress"]) == 0  # again, from its folder: nothing left to make
    again = capsys.readouterr().out
    spent = first.splitlines()[0].split(", ")[1]  # "<n> credits spent": the first run's, every run's so far
    assert again.startswith(f"sweep lighthouses: 4 of 4 rows done, {spent} in all, 0 by this run\n")
    assert "nothing left to run" in again and "dataset: " not in again  # the first run's dataset stands
    assert (tmp_path / "out" / "dataset" / "metadata.jsonl").stat().st_mtime_ns == written

    journal = str(tmp_path / "journal.sqlite")  # the README's own layout: a SQLite journal, read by status
    assert main(["sweep", "status", "--journal", journal, "lighthouses"]) == 0
    status = capsys.readouterr().out.splitlines()
    assert status[0].startswith("sweep lighthouses: 4 of 4 rows done, 0 running, 0 failed, 0 uncertain, 0 left;")
    assert status[1:] == ["  nothing left to run"]
    assert main(["sweep", "status", "sweep.toml"]) == 0  # the file names its sweep and journal
    assert capsys.readouterr().out.splitlines() == status
    assert main(["sweep", "estimate", "sweep.toml"]) == 0  # what a rerun would cost: nothing
    assert capsys.readouterr().out.splitlines()[1] == f"  4 rows done already ({spent}): nothing left to run"
    assert main(["sweep", "status", "--journal", journal, "lighthouse"]) != 0  # a name it does not hold
    assert "holds the sweep 'lighthouses', not 'lighthouse'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as mistaken:  # a journal that is not there: the option's mistake
        main(["sweep", "status", "--journal", str(tmp_path / "nothing.sqlite"), "lighthouses"])
    assert mistaken.value.code == 2 and "no journal at" in capsys.readouterr().err

    deleted = sorted((tmp_path / "out").glob("*.png"))[0]  # the user deletes an image: the rerun says it brings it back
    deleted.unlink()
    assert main(["sweep", "run", "sweep.toml", "--no-progress"]) == 0
    restored = capsys.readouterr().out.splitlines()
    assert restored[0] == f"sweep lighthouses: 4 of 4 rows done, {spent} in all, 0 by this run"
    assert restored[1] == "  1 image missing from out stored again: downloaded from the service, nothing paid"
    assert deleted.is_file()
    assert not (tmp_path / "nothing.sqlite").exists()


def test_a_sweep_file_logs_its_run_to_mlflow(box, tmp_path, monkeypatch, capsys):
    from mlflow.tracking import MlflowClient

    _, key = make_user(box, "pro")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    text = (f"[sweep]\nname = \"kites\"\njournal = \"kites.sqlite\"\n"
            f"mlflow = {{ tracking_uri = \"{store}\", experiment = \"sweeps\" }}\n"
            f"[axes]\nprompt = [\"a kite\", \"a boat\"]\n[defaults]\nstyle = "
            f"{__import__('imagekit').Client(box.url, key, ledger=False).styles()[0].style_id}\n")
    path = write(tmp_path, text)
    try:
        assert main(["sweep", "run", str(path), "--no-progress"]) == 0
        run_id = capsys.readouterr().out.split("MLflow run: ")[1].split()[0]
        assert main(["sweep", "run", str(path), "--no-progress"]) == 0  # nothing left: nothing new logged
        assert "MLflow run:" not in capsys.readouterr().out
    finally:
        import mlflow

        mlflow.set_tracking_uri(None)
    tracking = MlflowClient(tracking_uri=store)
    run = tracking.get_run(run_id)
    assert run.data.metrics["images"] == 2 and run.data.tags.get("mlflow.runName") == "kites"
    assert [each.info.run_id for each in tracking.search_runs([run.info.experiment_id])] == [run_id]


def test_a_sweep_files_mlflow_store_is_beside_it_wherever_it_is_run_from(box, tmp_path, monkeypatch, capsys):
    """``mlflow = true`` and nothing else: MLflow's own default (``sqlite:///mlflow.db``) is the sweep
    file's folder's, as its out_dir and journal are, not the folder the command was typed in."""
    import mlflow
    from mlflow.tracking import MlflowClient

    _, key = make_user(box, "pro")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    style = __import__("imagekit").Client(box.url, key, ledger=False).styles()[0].style_id
    write(tmp_path, f"[sweep]\nname = \"kites\"\njournal = \"kites.sqlite\"\nmlflow = true\n"
                    f"[axes]\nprompt = [\"a kite\"]\n[defaults]\nstyle = {style}\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    mlflow.set_tracking_uri(None)
    try:
        assert main(["sweep", "run", "../sweep.toml", "--no-progress"]) == 0  # as typed, relative
    finally:
        mlflow.set_tracking_uri(None)
    run_id = capsys.readouterr().out.split("MLflow run: ")[1].split()[0]
    assert list((tmp_path / "elsewhere").iterdir()) == []
    tracking = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    run = tracking.get_run(run_id)
    assert run.data.metrics["images"] == 1 and tracking.get_experiment(run.info.experiment_id).name == "kites"
    assert [each.path for each in tracking.list_artifacts(run_id)] and (tmp_path / "mlruns").is_dir()
    assert ".." not in run.info.artifact_uri  # a path that holds once the folder it was run from is gone


def test_the_files_budget_covers_every_run_of_the_sweep(box, tmp_path, monkeypatch, capsys):
    """A budget that stops the first run is not spent again by the next: what earlier runs spent
    (as the journal records it) counts against it, and the closing line says so."""
    import imagekit

    _, key = make_user(box, "pro")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    client = imagekit.Client(box.url, key, ledger=False)
    style = client.styles()[0]  # 2 credits an image
    path = write(tmp_path, f"[sweep]\nname = \"kites\"\nbudget = 5\njournal = \"kites.sqlite\"\n[axes]\n"
                           f"prompt = [\"a\", \"b\", \"c\", \"d\"]\n[defaults]\nstyle = {style.style_id}\n")
    monkeypatch.chdir(tmp_path)
    before = balance(box, key)
    assert main(["sweep", "run", str(path), "--no-progress"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first == ("sweep kites: 2 of 4 rows done, 4 credits spent; stopped: budget of 5 credits: 4 spent, the next "
                     "row would cost 2")
    assert main(["sweep", "run", str(path), "--no-progress"]) == 1
    second = capsys.readouterr().out.splitlines()
    assert second == ["sweep kites: 2 of 4 rows done, 4 credits spent in all, 0 by this run; stopped: budget of 5 "
                      "credits: 4 spent (4 by earlier runs), the next row would cost 2",
                      "  nothing run this time, 2 rows left: no dataset written and no MLflow run logged this time",
                      "kept: the images on the service (their ids in the journal), the journal in kites.sqlite (a "
                      "rerun finishes what is left)"]
    assert before - balance(box, key) == 4
    assert main(["sweep", "estimate", str(path)]) == 0  # the rows left, against what is left of the budget
    assert capsys.readouterr().out.splitlines() == [
        "sweep kites: 4 requests, 4 images, about 8 credits (budget 5)",
        "  2 rows done already (4 credits spent): the 2 rows left, about 4 credits",
        "  warning: 4 credits, more than the 1 credits left of the budget of 5: the run stops rather than pass it"]
    # A row in flight when a run was left at once (a second Ctrl+C, kill -9): said, not counted as left.
    with closing(sqlite3.connect(tmp_path / "kites.sqlite")) as db, db:
        db.execute("UPDATE rows SET status = 'sent' WHERE key = (SELECT min(key) FROM rows WHERE status != 'done')")
    assert main(["sweep", "status", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "sweep kites: 2 of 4 rows done, 0 running, 0 failed, 0 uncertain, 1 left; 4 credits spent; 1 more row sent "
        "when the run stopped may have been charged: the next run settles them"]
    # A sweep file not run yet: all its rows left, and nothing made in looking.
    (tmp_path / "never.toml").write_text("[sweep]\nname = \"never\"\njournal = \"never.sqlite\"\n[axes]\n"
                                         "prompt = [\"a\", \"b\", \"c\"]\nstyle = [1]\n")
    assert main(["sweep", "status", str(tmp_path / "never.toml")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "sweep never: 0 of 3 rows done, 0 running, 0 failed, 0 uncertain, 3 left; 0 credits spent",
        "  not run yet: `imagekit sweep run` with the sweep file runs it"]
    assert not (tmp_path / "never.sqlite").exists()


def test_a_run_whose_rows_fail_says_why_and_exits_non_zero(box, tmp_path, monkeypatch, capsys):
    _, key = make_user(box, "pro")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    path = write(tmp_path, f"""
        [sweep]
        name = "missing"
        journal = "{tmp_path / 'journal.sqlite'}"
        [axes]
        prompt = ["a kite", "a boat"]
        style = [999]
        """)
    assert main(["sweep", "run", str(path), "--no-progress"]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "sweep missing: 0 of 2 rows done, 0 credits spent"
    assert printed[1].startswith("  2 rows failed: ") and "999" in printed[1]  # the service's words, once
    write(tmp_path, "[sweep]\nname = \"one\"\n[axes]\nprompt = [\"a kite\"]\n[defaults]\nstyle = 1\n")
    assert main(["sweep", "estimate", str(path)]) == 0
    assert capsys.readouterr().out.startswith("sweep one: 1 request, 1 image, ")  # counted as people count


@pytest.mark.slow(6)
@pytest.mark.parametrize(("stop", "code", "said"), [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")])
def test_ctrl_c_lets_the_requests_in_flight_finish_and_the_ledger_agrees_with_the_balance(box, tmp_path, stop, code, said):
    """One Ctrl+C: no new row is sent, the rows in flight are answered and recorded (their credits
    were spent either way), the command exits 130; status counts the whole sweep, and the ledger
    holds every credit the balance lost. SIGTERM (``kill``, ``timeout``, a container stopped) stops it
    the same way, exit 143."""
    import signal
    import subprocess

    from imagekit.ledger import Ledger
    from tests.helpers import balance, console_script, control, wait_until

    _, key = make_user(box, "pro")
    client = __import__("imagekit").Client(box.url, key, ledger=False)
    path = write(tmp_path, SWEEP.format(out="out", journal="journal.sqlite", style=client.styles()[0].style_id)
                 .replace("budget = 40\n", "").replace('"a lighthouse in fog"]', '"a lighthouse in fog", "a tower"]'))
    before = balance(client)
    control(box, "POST", "faults", {"latency": 0.4})  # every request slower: a row is in flight when Ctrl+C comes
    env = {"IMAGEKIT_BASE_URL": box.url, "IMAGEKIT_API_KEY": key, "IMAGEKIT_HOME": str(tmp_path / "home")}
    run = console_script("sweep", "run", str(path), "--no-progress", cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wait_until(lambda: any((tmp_path / "out").glob("*.png")) or run.poll() is not None, timeout=120,
               what="the first image")
    run.send_signal(getattr(signal, stop))
    printed = run.communicate(timeout=180)[0]
    assert run.returncode == code and "stopping; the requests in flight" in printed, printed
    control(box, "DELETE", "faults")

    status = console_script("sweep", "status", "sweep.toml", cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    line = status.communicate(timeout=120)[0].splitlines()[0]
    done = int(line.split(": ")[1].split(" of ")[0])
    assert f"{done} of 6 rows done, 0 running, 0 failed, 0 uncertain, {6 - done} left" in line, line
    assert 0 < done < 6
    # The interrupted run said as much, before the line that says why it ended.
    told = line.replace(": ", ": interrupted with ", 1) + "; run it again to finish it"
    assert printed.splitlines()[-2:] == [told, said], printed
    ledger = Ledger(tmp_path / "home" / "ledger.sqlite")
    assert ledger.total() == pytest.approx(before - balance(client)) == pytest.approx(done * client.styles()[0].credit_cost)
    ledger.close()


def test_a_misspelt_option_is_refused_and_a_label_of_ones_own_is_kept(tmp_path):
    """``sead``, ``cont``: a slip of the fingers would otherwise be a label, and the rows sent without
    the seed or count the file meant; ``variant`` and ``prompt_id`` are labels, as the user meant."""
    from imagekit.errors import ValidationError

    path = write(tmp_path, "[axes]\nprompt = ['a', 'b']\nsead = [1, 2]\n[defaults]\nstyle = 1\ncont = 2\n")
    with pytest.raises(ValidationError) as refused:
        load_sweep(path)
    said = str(refused.value)
    assert "sead is not an option: did you mean seed?" in said and "cont is not an option: did you mean count?" in said
    assert "\n" not in said
    kept = load_sweep(write(tmp_path, "[axes]\nprompt = ['a']\nvariant = ['x', 'y']\n[defaults]\nstyle = 1\n"
                                      "prompt_id = 3\n"))
    assert [row["variant"] for row in kept.rows()] == ["x", "y"]


def test_a_style_name_the_account_lacks_is_refused_naming_the_file(box, tmp_path, monkeypatch, capsys):
    _, key = make_user(box, "pro")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    own = __import__("imagekit").Client(box.url, key, ledger=False).styles()[0]
    path = write(tmp_path, f"[sweep]\nname = \"bn\"\njournal = \"bn.sqlite\"\n[axes]\nprompt = [\"a\"]\n"
                           f"style = [\"{own.main_text or own.main}\", \"Nope\"]\n")
    assert main(["sweep", "estimate", str(path)]) == 1
    said = capsys.readouterr().err
    assert said.startswith(f"error: {path}: 1 row cannot be sent: row 1: style = 'Nope': ") and said.count("\n") == 1, said
    assert not (tmp_path / "bn.sqlite").exists()
    # The estimate refuses what the run would: an out_dir holding the user's files, touched by neither.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    path.write_text(f"[sweep]\nname = \"bn\"\nout_dir = \"mine\"\n[axes]\nprompt = [\"a\"]\nstyle = [{own.style_id}]\n")
    for command in (["sweep", "estimate", str(path)], ["sweep", "run", str(path), "--no-progress"]):
        assert main(command) == 1
        assert "holds files a batch did not write (notes.txt)" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]


def test_another_grid_under_a_sweeps_name_is_refused_by_a_local_journal_too(box, tmp_path, monkeypatch, capsys):
    """A sweep's name keeps its grid in a local SQLite journal as in a shared one: the grown file is
    refused in one line by the estimate, the run and the status, before anything is sent (balance and
    journal as they were), and so is another sweep on its journal file; an unnamed
    batch's journal may grow, running only its new rows."""
    import imagekit

    _, key = make_user(box, "pro")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    ik = imagekit.Client(box.url, key, ledger=False)
    style = ik.styles()[0].style_id
    path = write(tmp_path, SWEEP.format(out="out", journal="journal.sqlite", style=style))
    assert main(["sweep", "run", str(path), "--no-progress"]) == 0
    capsys.readouterr()
    journal = tmp_path / "journal.sqlite"
    with closing(sqlite3.connect(journal)) as db:
        kept = db.execute("SELECT key, status FROM rows ORDER BY key").fetchall()
    before = balance(ik)

    path.write_text(path.read_text().replace('"a lighthouse in fog"]', '"a lighthouse in fog", "a lighthouse in snow"]'))
    for command in (["sweep", "estimate", str(path)], ["sweep", "run", str(path), "--no-progress"],
                    ["sweep", "status", str(path)]):
        assert main(command) == 1
        said = capsys.readouterr().err
        shown = min(os.path.relpath(journal), str(journal), key=len)  # as the file's journal is shown (sweep_file.py)
        assert said == (f"error: The sweep 'lighthouses' in {shown} has another grid (4 rows, not 6 with these "
                        "inputs): give this one another name, or run the same rows.\n")
    # Renamed, on the same journal file: a file holds one sweep, so the two never mix their counts.
    path.write_text(path.read_text().replace('name = "lighthouses"', 'name = "lighthouses-2"'))
    for command in (["sweep", "estimate", str(path)], ["sweep", "run", str(path), "--no-progress"]):
        assert main(command) == 1
        assert capsys.readouterr().err == (f"error: The journal {shown} holds the sweep 'lighthouses', not "
                                           "'lighthouses-2': give this sweep a journal file of its own.\n")
    with closing(sqlite3.connect(journal)) as db:
        assert db.execute("SELECT key, status FROM rows ORDER BY key").fetchall() == kept
    assert balance(ik) == before

    grown, spent = tmp_path / "grown.sqlite", []
    for prompts in (["a fox"], ["a fox", "a kite"]):  # the second run sends the new row alone
        ahead = balance(ik)
        ik.batch(imagekit.grid(prompt=prompts, style=[style])).run(journal=grown, progress=False)
        spent.append(ahead - balance(ik))
    with closing(sqlite3.connect(grown)) as db:
        assert db.execute("SELECT count(*) FROM rows WHERE status = 'done'").fetchone() == (2,)
    assert spent[0] == spent[1] > 0


def test_a_grid_whose_every_row_failed_gives_its_name_to_the_corrected_one(box, tmp_path, monkeypatch, capsys):
    """A style the service does not know fails every row, paying nothing; the corrected file then ran
    into "has another grid" for ever (found on the first-hour walk). A grid that made nothing gives
    way; one that made anything keeps its name."""
    import imagekit

    _, key = make_user(box, "pro")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    ik = imagekit.Client(box.url, key, ledger=False)
    path = write(tmp_path, SWEEP.format(out="out", journal="journal.sqlite", style=987654))
    before = balance(ik)
    assert main(["sweep", "run", str(path), "--no-progress"]) == 1
    assert "4 rows failed: style_not_found" in capsys.readouterr().out and balance(ik) == before

    path.write_text(path.read_text().replace("style = 987654", f"style = {ik.styles()[0].style_id}")
                    .replace('"a lighthouse in fog"]', '"a lighthouse in fog", "a lighthouse in snow"]'))
    assert main(["sweep", "estimate", str(path)]) == 0
    assert main(["sweep", "run", str(path), "--no-progress"]) == 0
    assert main(["sweep", "status", str(path)]) == 0
    said = capsys.readouterr().out
    assert "sweep lighthouses: 6 of 6 rows done, 0 running, 0 failed, 0 uncertain, 0 left" in said, said
    assert len(list((tmp_path / "out").glob("*.png"))) == 6  # (and the imagefolder export holds them too)

    path.write_text(path.read_text().replace('"a lighthouse in snow"]', '"a lighthouse in rain"]'))
    assert main(["sweep", "run", str(path), "--no-progress"]) == 1  # this grid made images: it keeps the name
    assert "has another grid (6 rows, not 6" in capsys.readouterr().err


def test_a_file_without_a_journal_keeps_one_beside_it_and_never_pays_twice(box, tmp_path, monkeypatch, capsys):
    """No ``journal`` and no ``out_dir``: the sweep keeps both in ``<stem>-out`` beside the file (the
    last line says where), the second run sends nothing, and the budget is the sweep's across runs.
    Rows of 4 images are counted as rows, and their images as images."""
    import imagekit

    _, key = make_user(box, "pro")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    ik = imagekit.Client(box.url, key, ledger=False)
    style = ik.styles()[0]  # 2 credits an image
    path = tmp_path / "nj.toml"
    path.write_text(f"[sweep]\nname = \"fours\"\nbudget = 20\n[axes]\nprompt = [\"a\", \"b\", \"c\"]\n"
                    f"[defaults]\nstyle = {style.style_id}\ncount = 4\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    before = balance(ik)
    assert main(["sweep", "run", str(path), "--no-progress"]) == 1  # the budget stops the third row
    first = capsys.readouterr().out.splitlines()
    assert first == ["sweep fours: 2 of 3 rows done (8 images), 16 credits spent; stopped: budget of 20 credits: "
                     "16 spent, the next row would cost 8",
                     "kept in ../nj-out: the images and the journal (a rerun finishes what is left)"]
    assert before - balance(ik) == 16
    assert len(list((tmp_path / "nj-out").glob("*.png"))) == 8 and (tmp_path / "nj-out" / "journal.sqlite").is_file()

    assert main(["sweep", "run", str(path), "--no-progress"]) == 1  # again: nothing sent, the budget is the sweep's
    assert capsys.readouterr().out.splitlines() == [
        "sweep fours: 2 of 3 rows done (8 images), 16 credits spent in all, 0 by this run; stopped: budget of 20 "
        "credits: 16 spent (16 by earlier runs), the next row would cost 8",
        "  nothing run this time, 1 row left: no dataset written and no MLflow run logged this time",
        "kept in ../nj-out: the images and the journal (a rerun finishes what is left)"]
    assert before - balance(ik) == 16
    assert main(["sweep", "status", str(path)]) == 0  # the journal the run kept is the one status reads
    assert capsys.readouterr().out.splitlines()[0] == (
        "sweep fours: 2 of 3 rows done, 0 running, 0 failed, 0 uncertain, 1 left; 16 credits spent")

    path.write_text(path.read_text().replace("budget = 20", "budget = 30"))  # raised: the rest, and only it
    assert main(["sweep", "run", str(path), "--no-progress"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "sweep fours: 3 of 3 rows done (12 images), 24 credits spent in all, 8 by this run")
    assert before - balance(ik) == 24 and len(list((tmp_path / "nj-out").glob("*.png"))) == 12
    assert main(["sweep", "run", str(path), "--no-progress"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "  nothing left to run: no dataset written and no MLflow run logged this time"
    assert before - balance(ik) == 24


def test_a_journal_only_or_a_remote_out_dir_is_named_in_the_last_line(tmp_path):
    """A file that names a journal keeps its images on the service; a remote out_dir without a journal
    keeps its journal beside the file (else every run would pay again)."""
    from imagekit.cli.sweep import _kept_line

    kept = load_sweep(write(tmp_path, "[sweep]\nout_dir = \"s3://bucket/run\"\n[axes]\nprompt = ['a']\nstyle = [1]\n"))
    assert Path(kept.settings["journal"]).resolve() == tmp_path / "sweep-journal.sqlite"
    assert _kept_line("j.sqlite", None) == ("kept: the images on the service (their ids in the journal), the journal in "
                                            "j.sqlite (a rerun finishes what is left)")
    assert _kept_line("j.sqlite", "s3://bucket/run") == ("kept: the images in s3://bucket/run, the journal in j.sqlite "
                                                          "(a rerun finishes what is left)")
    assert _kept_line("postgresql://me:secret@db/sweeps?sslmode=require", None).endswith(
        "the journal in postgresql://db/sweeps (a rerun finishes what is left)")


def test_a_style_name_the_account_lacks_is_told_with_the_files_other_mistakes(box, tmp_path, monkeypatch, capsys):
    """One answer for every mistake: a misspelt setting, a quoted count and a style name that matches
    none of the account's styles, all in the one line (the name was told only once the rest were fixed)."""
    _, key = make_user(box, "pro")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    path = write(tmp_path, "[sweep]\nbudjet = 4\n[axes]\nprompt = [\"a\"]\nstyle = [\"Nope\"]\n[defaults]\ncount = \"4\"\n")
    for command in (["sweep", "estimate", str(path)], ["sweep", "run", str(path), "--no-progress"]):
        assert main(command) == 1
        said = capsys.readouterr().err
        assert said.count("\n") == 1 and said.startswith(f"error: {path}: [sweep] budjet is not a sweep setting"), said
        assert "[defaults] count = '4': use a whole number, without quotes" in said
        assert "[axes] style = 'Nope': no style of yours has this name" in said
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "home") == ["sweep.toml"]  # nothing made


def test_a_grid_past_its_limit_is_refused_before_it_is_built(tmp_path, monkeypatch):
    """A typo'd range (10^10 rows) is one line naming the axes and how to raise the limit, at once:
    it grew to 2.95 GB and died of MemoryError. The limit is grid(max_rows=), a sweep file's
    [sweep] max_rows, or IMAGEKIT_MAX_ROWS."""
    import imagekit
    from imagekit.errors import ValidationError
    from imagekit.workflows.batches.rows import check_grid, make_rows

    with pytest.raises(ValidationError, match=r"a grid of 10,000,000,000 rows \(prompt 100,000 x seed 100,000\) is past "
                                              r"the limit of 100,000 rows: check its axes \(a typo'd range\?\), or raise"):
        imagekit.grid(prompt=range(10**5), seed=range(10**5), style=1)
    assert len(imagekit.grid(prompt=["a", "b"], seed=range(60_000), max_rows=120_000)) == 120_000
    monkeypatch.setenv("IMAGEKIT_MAX_ROWS", "3")
    with pytest.raises(ValidationError, match=r"a grid of 4 rows \(prompt 2 x seed 2\) is past the limit of 3 rows"):
        imagekit.grid(prompt=["a", "b"], seed=[1, 2])
    monkeypatch.delenv("IMAGEKIT_MAX_ROWS")
    path = write(tmp_path, "[sweep]\nmax_rows = 0\n[axes]\nprompt = ['a']\nstyle = [1]\n")
    with pytest.raises(ConfigError, match=r"\[sweep\] max_rows = 0: use a whole number of rows, at least 1"):
        load_sweep(path)
    seeds = ", ".join(map(str, range(400)))
    path = write(tmp_path, f"[axes]\nprompt = [{', '.join(repr(str(i)) for i in range(300))}]\nseed = [{seeds}]\n"
                           "[defaults]\nstyle = 1\n")
    with pytest.raises(ValidationError, match=r"a grid of 120,000 rows \(prompt 300 x seed 400\) is past the limit"):
        load_sweep(path)
    path.write_text(path.read_text().replace("[axes]", "[sweep]\nmax_rows = 120000\n[axes]"))
    assert load_sweep(path).settings["max_rows"] == 120_000
    # A grid's rows are checked from its axes; a mistake is told as the rows' own check tells it.
    axes = {"prompt": ["a", "", "c"], "ratio": ["1:1", "5:4"], "seed": [1, 2]}
    with pytest.raises(ValidationError) as by_axes:
        check_grid(axes, {"style": 1}, "f.toml")
    with pytest.raises(ValidationError) as by_rows:
        make_rows(imagekit.grid(**axes), {"style": 1}, "f.toml")
    assert str(by_axes.value) == str(by_rows.value)
    assert check_grid({"prompt": ["a", "b"], "seed": [1, 2, 3]}, {"style": 1}) == 6


@pytest.mark.slow(20)
def test_a_million_row_estimate_stays_in_bounded_memory(box, tmp_path):
    """``sweep estimate`` of a 10^6-row file (max_rows raised) prices it from its axes: the process's
    peak resident memory stays under 300 MB, and the counts are the grid's."""
    import subprocess
    import sys

    _, key = make_user(box, "pro")
    prompts = ", ".join(f'"p{i}"' for i in range(1000))
    (tmp_path / "big.toml").write_text(f"[sweep]\nname = \"big\"\nmax_rows = 1000000\n[axes]\nprompt = [{prompts}]\n"
                                       f"seed = [{', '.join(map(str, range(500)))}]\ncount = [1, 2]\n[defaults]\nstyle = 1\n")
    # VmHWM, this process's own peak: ru_maxrss survives exec, so it gives the (larger) test worker's
    script = ("import re, sys\nfrom pathlib import Path\nfrom imagekit.cli import main\n"
              "code = main(['sweep', 'estimate', 'big.toml'])\n"
              "print('peak', re.search(r'VmHWM:\\s+(\\d+) kB', Path('/proc/self/status').read_text()).group(1))\n"
              "sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
                               "IMAGEKIT_HOME": str(tmp_path / "home"), "IMAGEKIT_BASE_URL": box.url,
                               "IMAGEKIT_API_KEY": key})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("sweep big: 1000000 requests, 1500000 images, about ") or \
        lines[0].startswith("sweep big: 1000000 requests, 1500000 images, at most "), lines
    peak_mb = int(lines[-1].split()[1]) / 1024  # in KiB
    print(f"peak resident memory of a 10^6-row estimate: {peak_mb:.0f} MB")
    assert peak_mb < 300, peak_mb
