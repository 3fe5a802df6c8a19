"""The main job: ``imagekit demo`` works every time it is run, its outputs describe its own run, its
page shows what it made, and when something fails the console says what and why."""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import datasets
import httpx
import numpy as np
import pandas as pd
import pytest
from PIL import Image

import imagekit
from imagekit.cli import main
from imagekit.cli.demo import CHAIN_PROMPT, run_demo
from imagekit.ownership import MANIFEST
from imagekit.sandbox import EmbeddedSandbox
from tests.docs_pictures import keep_picture
from tests.helpers import TLS, console_script, wait_until

OUTPUTS = ("index.html", "contact-sheet.png", "batch.csv", "chain-lineage.csv", "chain-steps.png",
           "chain-3-vectorize.svg", "usage-by-operation.csv", "usage-burn-down.png", "usage-by-operation.png",
           "usage-by-style.png")


class Links(HTMLParser):
    """Every src and href of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.found += [value for name, value in attrs if name in ("src", "href") and value]


def links_of(page: Path) -> list[str]:
    parser = Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.found


def check_one_run(out: Path, theirs: frozenset[str] = frozenset()) -> pd.DataFrame:
    """The outputs of exactly one successful run, all consistent with each other (``theirs``: the
    user's own files in images/, beside the run's)."""
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 0, name
    batch = pd.read_csv(out / "batch.csv")
    assert len(batch) == 12 and set(batch["status"]) == {"COMPLETED"}
    # images/ holds this run's pictures and nothing else, and its manifest lists them
    assert {Path(f).name for f in batch["file"]} == {p.name for p in (out / "images").iterdir()} - {MANIFEST, *theirs}
    assert {Path(f).name for f in batch["file"]} <= set(json.loads((out / "images" / MANIFEST).read_text())["names"])
    # the report covers this run's spending only: 12 creates and three edits
    spend = pd.read_csv(out / "usage-by-operation.csv", index_col=0)
    assert spend.loc["create", "calls"] == 12 and {"enhance", "removeBg", "vectorize"} <= set(spend.index)
    assert spend["credits"].sum() == batch["credits"].sum() + pd.read_csv(out / "chain-lineage.csv")["credits"].sum()
    # the batch as a dataset, one row per image
    dataset = datasets.load_dataset("imagefolder", data_dir=str(out / "dataset"), split="train",
                                    cache_dir=str(out.parent / "hf-cache"))
    assert sorted(dataset["image_id"]) == sorted(batch["image_id"]) and set(dataset["prompt"]) == set(batch["prompt"])
    # every picture the page shows is beside it
    links = [link for link in links_of(out / "index.html") if not link.endswith("/")]
    assert {"contact-sheet.png", "chain-0-source.png", "chain-3-vectorize.svg", "usage-burn-down.png",
            "dataset/metadata.jsonl"} <= set(links)
    assert all((out / link).exists() for link in links), links
    for picture in ("contact-sheet.png", "chain-steps.png", "usage-burn-down.png"):  # the docs show them
        keep_picture(picture, out / picture)
    return batch


@pytest.mark.slow(60)
def test_the_demo_runs_twice_in_a_row_and_a_demo_started_meanwhile_is_told_the_folder_is_in_use(tmp_path):
    """Two processes, as two `make demo`s are: the first one's journal, still open when its run
    recorded the folder, changes once that process ends (SQLite folds its log in). While the first
    writes, a third started into the same folder (two terminals) says the folder is being written
    and changes nothing; the first ends with its page and all its images. (One test: each full run
    costs ten CPU-seconds.)"""
    out, home = tmp_path / "out", {"IMAGEKIT_HOME": str(tmp_path / "home")}

    def demo(stderr: int = subprocess.STDOUT) -> subprocess.Popen:
        return console_script("demo", "--out", str(out), cwd=tmp_path, env=home, stdout=subprocess.PIPE, stderr=stderr)

    first = demo()
    wait_until(lambda: (out / "images").is_dir() or first.poll() is not None, timeout=120,
               what="the first demo to write its images")
    meanwhile = demo(stderr=subprocess.PIPE)
    said = meanwhile.communicate(timeout=120)[1]
    assert meanwhile.returncode == 1 and first.poll() is None, said
    assert said.strip() == f"error: {out} is being written by another imagekit run (process {first.pid}): wait for " \
                           "it to end, or name another folder"
    printed = first.communicate(timeout=300)[0]
    assert first.returncode == 0, printed
    check_one_run(out)
    assert not (tmp_path / "home" / "review.sqlite").exists()  # the export read no decisions into being
    # The user's own files, beside the run's and inside the folders it wrote (a journal in images/
    # too: the first build kept one there, and a new run against a new sandbox then skipped every row)
    theirs = {"images/journal.sqlite": (out / "journal.sqlite").read_bytes(), "images/from-an-earlier-run.png": b"old",
              "dataset/notes.txt": b"mine", "chain-9-mine.png": b"mine", "notes.txt": b"mine"}
    for name, data in theirs.items():
        (out / name).write_bytes(data)
    second = demo()
    printed = second.communicate(timeout=300)[0]
    assert second.returncode == 0, printed
    assert "Replaced the results of an earlier run" in printed and "FAILED" not in printed
    check_one_run(out, frozenset({"journal.sqlite", "from-an-earlier-run.png"}))
    assert {name: (out / name).read_bytes() for name in theirs} == theirs  # a second run removes only the first's


@pytest.mark.slow(6)
def test_a_second_run_interrupted_leaves_the_first_runs_results_as_they_were(tmp_path):
    out = tmp_path / "out"
    assert main(["demo", "--out", str(out)]) == 0
    before = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    second = console_script("demo", "--out", str(out), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={"IMAGEKIT_HOME": os.environ["IMAGEKIT_HOME"]})  # the home that holds the first's record
    wait_until(lambda: (out / ".imagekit-earlier").is_dir() or second.poll() is not None, timeout=120,
               what="the second run to set the first's results aside")
    second.send_signal(signal.SIGINT)  # Ctrl+C
    printed = second.communicate(timeout=120)[0]
    assert second.returncode == 130 and printed.strip().endswith("interrupted"), printed
    after = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # every file of the first run, byte for byte, and nothing of the second
    check_one_run(out)


def test_the_demo_never_writes_into_a_folder_of_the_users(tmp_path, capsys):
    """A folder holding the user's files and no demo manifest (their photos, their page; their
    IMAGEKIT_HOME with its ledger) is refused in one line, and nothing in it changes."""
    home = tmp_path / "home"
    for folder, files in ((tmp_path / "mine", {"images/holiday.png": b"photo", "index.html": b"<p>mine</p>"}),
                          (home, {"ledger.sqlite": b"the user's ledger"})):
        for name, data in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        assert main(["demo", "--out", str(folder)]) == 1
        assert "did not write" in capsys.readouterr().err
        assert {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()} == files


def test_a_planted_manifest_makes_no_folder_the_demos(tmp_path, capsys):
    """A project folder (src/, thesis.tex, README.md) holding a manifest that lists them, planted or
    copied from elsewhere: the demo refuses it in one line and every file stays."""
    root = tmp_path / "project"
    files = {"src/main.py": b"print('mine')", "thesis.tex": b"\\documentclass{article}", "README.md": b"# mine",
             MANIFEST: json.dumps({"writer": "imagekit demo", "names": ["src", "thesis.tex", "README.md"]}).encode()}
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    assert main(["demo", "--out", str(root)]) == 1
    said = capsys.readouterr().err.strip()
    assert len(said.splitlines()) == 1 and "was not written there by imagekit" in said, said
    assert {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()} == files


def test_the_chain_starts_from_a_subject_and_each_step_shows(tmp_path, capsys, monkeypatch):
    """The chain's source is the robot prompt; removeBg leaves most of the frame transparent but
    keeps the subject; the SVG is a real vector drawing. Its files name the demo's sandbox by its
    data's id, and reproduce them as far as that can be done once the sandbox is gone."""
    out = tmp_path / "out"
    assert run_demo(out) == 0
    batch = pd.read_csv(out / "batch.csv")
    lineage = pd.read_csv(out / "chain-lineage.csv")
    source = batch.loc[batch["image_id"] == lineage["parent_id"].iloc[0]].iloc[0]
    assert source["prompt"] == CHAIN_PROMPT and source["ratio"] == "16:9"
    assert list(lineage["op"]) == ["enhance", "remove_bg", "vectorize"] and set(lineage["status"]) == {"done"}
    alpha = np.asarray(Image.open(out / "chain-2-remove_bg.png").convert("RGBA"))[..., 3]
    assert 0.5 < (alpha == 0).mean() < 0.99  # background gone, subject kept
    svg = (out / "chain-3-vectorize.svg").read_text()
    assert svg.lstrip().startswith(("<svg", "<?xml")) and len(re.findall(r"<path", svg)) > 5
    page = (out / "index.html").read_text()
    for op, credits in zip(lineage["op"], lineage["credits"]):
        assert re.search(rf"{op}[^<]*· {credits:g} credits?", page), (op, credits)
    # text for people: sentences, percentages and blanks; no repr, no NaN
    printed = capsys.readouterr().out
    assert "Batch done: 12 rows, all done; " in printed and "Edit chain enhance 2x → remove_bg → vectorize" in printed
    assert "Batch: 12 rows, all done; " in page
    for text in (printed, page):
        assert "Batch(" not in text and "chain()" not in text and "NaN" not in text and "%" in text
    named = imagekit.read_provenance(out / "chain-1-enhance.png").service
    assert re.fullmatch(r"imagekit sandbox [0-9a-f]{32}", named or ""), named  # not a port, gone tomorrow
    monkeypatch.setenv("IMAGEKIT_HOME", str(tmp_path / "home"))  # the reader's own sandbox, after the demo
    for name in ("IMAGEKIT_BASE_URL", "IMAGEKIT_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with imagekit.connect() as ik:
        with pytest.raises(imagekit.ValidationError, match=rf"is an image of {named} \(another local sandbox: another "
                                                           r"IMAGEKIT_HOME's, or the one imagekit demo runs against"):
            imagekit.reproduce(out / "chain-1-enhance.png", ik)  # an edit: its parent image went with the sandbox
        created = sorted((out / "images").glob("*.png"))[0]  # a 1:1 create
        again = imagekit.reproduce(created, ik)  # a create can be sent anywhere: the home's sandbox draws 1024 px
    assert again.images[0].resolution == "1024x1024" and Image.open(created).size == (512, 512)
    assert "  the original is 512x512; this service drew 1024x1024 for the same request" in capsys.readouterr().out


def test_what_failed_is_said_with_its_reason(tmp_path, capsys):
    with EmbeddedSandbox(tmp_path / "sandbox", base_size=256) as box:
        faults = {"fail_generation_rate": 0.5, "seed": 3}
        httpx.post(f"{box.url}/sandbox/faults", json=faults, timeout=30, verify=TLS).raise_for_status()
        assert run_demo(tmp_path / "out", box=box) == 1
    printed = capsys.readouterr().out
    failures = [line for line in printed.splitlines() if line.startswith("FAILED: batch row")]
    batch = pd.read_csv(tmp_path / "out" / "batch.csv")
    failed = batch[batch["row_status"] != "done"]
    assert len(failed) and len(failures) == failed["key"].nunique()
    for line in failures:  # which row, and why: never just "failed"
        assert re.match(r"FAILED: batch row \d+ \('.+', style \d+, (1:1|16:9)\): failed, \S", line), line
        assert "no error recorded" not in line and "injected fault" in line  # the service's own reason
    page = html.unescape((tmp_path / "out" / "index.html").read_text())
    assert "What failed" in page and failures[0].removeprefix("FAILED: ").split(":")[0] in page


@pytest.mark.slow(30)
def test_a_reader_that_goes_away_ends_the_demo_quietly_and_leaves_nothing(tmp_path):
    """``imagekit demo 2>&1 | head -1`` (the reader gone while the progress bar draws: it used to hang)
    and ``imagekit demo | head -2 &`` in a script (a BrokenPipeError traceback and a half-written folder;
    then, as such a job ignores Ctrl+C, a demo that never stopped): both end at once, as a Unix tool on
    SIGPIPE does, with nothing more said and no folder left."""
    home = {"IMAGEKIT_HOME": str(tmp_path / "home")}
    errors = (tmp_path / "stderr.txt").open("w")
    both = console_script("demo", "--out", "both", cwd=tmp_path, env=home, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    # started ignoring Ctrl+C, as a script's background job is (`imagekit demo | head -2 &`): it stopped
    # itself with a SIGINT it never heard, ran to the end into /dev/null and left its folder
    apart = console_script("demo", "--out", "apart", cwd=tmp_path, env=home, stdout=subprocess.PIPE, stderr=errors,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    for process, lines in ((both, 1), (apart, 2)):
        assert process.stdout is not None
        read = [process.stdout.readline() for _ in range(lines)]
        assert read[0].startswith("Batch: 12 rows"), read
        process.stdout.close()
    for process in (both, apart):
        assert process.wait(timeout=180) == 141
    errors.close()
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
    assert not (tmp_path / "both").exists() and not (tmp_path / "apart").exists()


def test_the_batch_sentence_counts_rows_once_and_images_as_images():
    """A batch's table has a line per image: rows of 4 images are still one row each."""
    import pandas as pd

    from imagekit.cli.demo.page import batch_sentence

    table = pd.DataFrame({"key": ["a"] * 4 + ["b"] * 4 + ["c"], "image_id": [*range(8), None],
                          "row_status": ["done"] * 8 + ["failed"]})
    assert batch_sentence(table, 16) == "3 rows (8 images), 2 done, 1 failed; 16 credits spent"
    assert batch_sentence(table[:8], 16) == "2 rows (8 images), all done; 16 credits spent"
    assert batch_sentence(table[8:], 0) == "1 row, 1 failed; 0 credits spent"
