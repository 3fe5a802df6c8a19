"""The main job: ``imagekit demo`` leaves a contact sheet, CSV tables and plots."""

from __future__ import annotations

import pandas as pd

from imagekit.cli import main


def test_the_demo_leaves_its_results(tmp_path):
    out = tmp_path / "out"
    assert main(["demo", "--out", str(out)]) == 0
    for name in ("contact-sheet.png", "batch.csv", "chain-lineage.csv", "chain-lineage.png", "chain-result.svg",
                 "usage-by-operation.csv", "usage-burn-down.png", "usage-by-operation.png", "usage-by-style.png"):
        assert (out / name).stat().st_size > 0, name
    batch = pd.read_csv(out / "batch.csv")
    assert len(batch) == 12 and set(batch["status"]) == {"COMPLETED"}
    spend = pd.read_csv(out / "usage-by-operation.csv", index_col=0)
    assert {"create", "enhance", "removeBg", "vectorize"} <= set(spend.index)
