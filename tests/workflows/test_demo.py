"""The main job: ``imagekit demo`` works every time it is run, its outputs describe its own run, its
page shows what it made, and when something fails the console says what and why."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import datasets
import httpx
import numpy as np
import pandas as pd
import pytest
from PIL import Image

from imagekit.cli import main
from imagekit.cli.demo import CHAIN_PROMPT, run_demo
from imagekit.sandbox import EmbeddedSandbox
from tests.helpers import TLS

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


def check_one_run(out: Path) -> pd.DataFrame:
    """The outputs of exactly one successful run, all consistent with each other."""
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 0, name
    batch = pd.read_csv(out / "batch.csv")
    assert len(batch) == 12 and set(batch["status"]) == {"COMPLETED"}
    # images/ holds this run's pictures and nothing else
    assert {Path(f).name for f in batch["file"]} == {p.name for p in (out / "images").iterdir()}
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
    return batch


@pytest.mark.slow(9)
def test_the_demo_runs_twice_in_a_row_and_the_second_run_replaces_the_first(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["demo", "--out", str(out)]) == 0
    check_one_run(out)
    # leftovers an earlier run could have left (the first build kept its journal in images/: a new
    # run against a new sandbox then skipped every row), and a file of the user's own
    (out / "images" / "journal.sqlite").write_bytes((out / "journal.sqlite").read_bytes())
    (out / "images" / "from-an-earlier-run.png").write_bytes(b"old")
    (out / "chain-9-old.png").write_bytes(b"old")
    (out / "notes.txt").write_text("mine")
    capsys.readouterr()

    assert main(["demo", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Removed the results of an earlier run" in printed and "FAILED" not in printed
    check_one_run(out)
    assert not (out / "chain-9-old.png").exists() and (out / "notes.txt").read_text() == "mine"


def test_the_chain_starts_from_a_subject_and_each_step_shows(tmp_path, capsys):
    """The chain's source is the robot prompt; removeBg leaves most of the frame transparent but
    keeps the subject; the SVG is a real vector drawing."""
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
