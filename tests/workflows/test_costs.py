"""Cost on every row: each batch line, chain step and export row carries ``credits`` equal to what
the ledger holds for it, over runs with refunds, failures, lost answers and resumed rows (both faces)."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd
import pytest

import imagekit
from imagekit.workflows.batches.journals.local import LocalJournal
from tests.helpers import control
from tests.utils.service import public_style


@pytest.fixture
def ledger_location(either_ledger) -> str:
    """Each test on a SQLite ledger and on PostgreSQL: what the runner tells the ledger reaches both."""
    return either_ledger


def ledger_by_image(ledger: imagekit.ledger.Ledger) -> dict[int, float]:
    """What the ledger says each image cost, net: its share of the entries naming it (refunds included)."""
    found: dict[int, float] = defaultdict(float)
    for entry in ledger.entries():
        for image_id in entry.image_ids:
            found[image_id] += (entry.credits or 0) / len(entry.image_ids)
    return found


def ledger_by_group(ledger: imagekit.ledger.Ledger) -> dict[str, float]:
    found: dict[str, float] = defaultdict(float)
    for entry in ledger.entries():
        if entry.group_id:
            found[entry.group_id] += entry.credits or 0
    return found


@pytest.mark.slow(20)
def test_every_batch_line_and_export_row_costs_what_the_ledger_says(connect, box, tmp_path):
    ik = connect()
    rows = [f"prompt {i}" for i in range(16)]
    journal = tmp_path / "journal.sqlite"
    # First run: answers lost after the charge (found by probing), generations failing (refunded),
    # and rows left generating when it ends (resumed by the second run).
    control(box, "POST", "faults", {"fail_generation_rate": 0.4, "drop_rate": 0.2, "drop_phase": "after", "seed": 7})
    ik.batch(rows, style=public_style(box)).run(progress=False, journal=journal, timeout=0.01)
    resumed = {key for key, row in LocalJournal(journal).load().items() if row.status == "created"}
    control(box, "POST", "faults", {"fail_generation_rate": 0.4, "seed": 8})
    batch = ik.batch(rows, style=public_style(box)).run(progress=False, journal=journal)
    control(box, "DELETE", "faults")

    frame = batch.to_pandas()
    statuses = Counter(entry.status for entry in ik.ledger.entries())
    assert resumed and statuses["refunded"] and statuses["recovered"], (resumed, statuses)
    assert (frame["status"] == "FAILED").any() and resumed <= set(frame["key"])

    by_image, by_group = ledger_by_image(ik.ledger), ledger_by_group(ik.ledger)
    images = frame.dropna(subset=["image_id"])
    mismatches = [(line.image_id, line.credits, by_image[line.image_id]) for line in images.itertuples()
                  if line.credits != pytest.approx(by_image[line.image_id])]
    assert mismatches == []
    records = LocalJournal(journal).load()
    rows_off = [(key, lines["credits"].sum(), by_group[records[key].group_id])
                for key, lines in frame.groupby("key") if lines["credits"].sum() != pytest.approx(by_group[records[key].group_id])]
    assert rows_off == []
    assert frame["credits"].sum() == pytest.approx(ik.ledger.total())  # every group the ledger has is a row's

    batch.export(tmp_path / "grid.parquet", format="parquet", progress=False)
    exported = pd.read_parquet(tmp_path / "grid.parquet", columns=["image_id", "credits"])
    assert len(exported) == (frame["status"] == "COMPLETED").sum()
    assert [(row.image_id, row.credits) for row in exported.itertuples()
            if row.credits != pytest.approx(by_image[row.image_id])] == []


@pytest.mark.slow(10)
def test_every_chain_step_and_export_row_costs_what_the_ledger_says(connect, box, tmp_path):
    ik = connect()
    image = ik.create("a lighthouse at dusk", style=public_style(box)).images[0]
    done = imagekit.chain().remove_bg().enhance("2x").run(image)
    refused = imagekit.chain().remove_bg().run(ik.image(10**9))  # the service refuses it: nothing charged
    cut = imagekit.chain().enhance("2x").remove_bg().run(done.images[0], deadline=0.001)  # cancelled
    resumed = cut.resume()
    assert done.ok and not refused.ok and not cut.ok and resumed.ok

    lineage = pd.concat([done.lineage, refused.lineage, resumed.lineage])
    assert set(lineage["status"]) == {"done", "failed", "timeout"}
    ledger = {entry.request_id: entry.credits or 0.0 for entry in ik.ledger.entries()
              if entry.request_id and entry.operation != "cancelEdit"}
    mismatches = [(step.op, step.status, step.credits, ledger.get(step.request_id)) for step in lineage.itertuples()
                  if step.credits != pytest.approx(ledger.get(step.request_id, 0.0))]
    assert mismatches == []

    resumed.export(tmp_path / "steps.parquet", format="parquet", progress=False)
    exported = pd.read_parquet(tmp_path / "steps.parquet", columns=["request_id", "credits"])
    assert len(exported) == 2 and [(row.request_id, row.credits) for row in exported.itertuples()
                                   if row.credits != pytest.approx(ledger[row.request_id])] == []


@pytest.mark.slow(20)
def test_a_row_whose_images_partly_failed_remakes_only_those_and_keeps_what_was_paid(connect, box, tmp_path):
    """Rows of four images, some failing: the next run makes only the failed ones (in the interface's
    counts: three missing are two, then one) into their places, and every image paid for stays."""
    ik = connect()
    style, out = public_style(box), tmp_path / "out"
    journal = tmp_path / "journal.sqlite"
    rows = [f"prompt {i}" for i in range(8)]
    control(box, "POST", "faults", {"fail_generation_rate": 0.5, "seed": 3})
    first = ik.batch(rows, style=style, count=4).run(progress=False, journal=journal, out_dir=out)
    control(box, "DELETE", "faults")
    made = first.to_pandas()
    kept = made.loc[made["status"] == "COMPLETED", ["key", "image_id", "file"]]
    failed = made.loc[made["status"] == "FAILED"].groupby("key").size()
    assert len(failed) and (failed < 4).any(), failed  # some rows kept some images

    second = ik.batch(rows, style=style, count=4).run(progress=False, journal=journal, out_dir=out)
    frame = second.to_pandas()
    assert set(frame["row_status"]) == {"done"} and set(frame["status"]) == {"COMPLETED"}, frame[["key", "image_id", "status", "row_status", "error", "attempts"]].to_string()
    assert frame.groupby("key").size().eq(4).all()
    assert set(map(tuple, kept.itertuples(index=False))) <= set(map(tuple, frame[["key", "image_id", "file"]].itertuples(index=False)))
    assert frame["image_id"].is_unique and sorted(p.name for p in out.glob("*.png")) == sorted(
        Path(file).name for file in frame["file"])  # one file per image, none overwritten

    assert frame["credits"].nunique() == 1 and frame["credits"].sum() > 0  # each image its price, once
    creates = [entry for entry in ik.ledger.entries() if entry.operation == "create"]
    assert ik.ledger.total() == pytest.approx(frame["credits"].sum())  # nothing paid that the table lacks
    assert sum(len(entry.image_ids) for entry in creates) == 32 + int(failed.sum())  # each failed one made once more
    records = LocalJournal(journal).load()
    remade = {key: n for key, n in failed.items() if n == 3}
    assert all(records[key].attempts == 3 for key in remade)  # three missing: a create of two, then of one
