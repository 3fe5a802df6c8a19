"""The main job (``make demo``): a prompt grid as a batch, one edit chain and a usage report, all
against a fresh embedded sandbox, leaving a contact sheet, CSV tables and plots in ``out_dir``."""

from __future__ import annotations

import tempfile
from pathlib import Path

PROMPTS = ["a lighthouse at dusk", "a fox in a snowy forest", "a city skyline at night"]
RATIOS = ["1:1", "16:9"]


def run_demo(out_dir: Path) -> int:
    """Run the demo; returns a process exit code (0 when every row and step succeeded)."""
    import imagekit
    from imagekit.reports import usage_report
    from imagekit.sandbox import EmbeddedSandbox

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ledger = out_dir / "ledger.sqlite"
    for stale in out_dir.glob("ledger.sqlite*"):  # each demo reports its own run only
        stale.unlink()
    with tempfile.TemporaryDirectory(prefix="imagekit-demo-") as data, \
            EmbeddedSandbox(data, base_size=512) as box, \
            imagekit.Client(box.url, box.api_key, ledger=ledger) as ik:
        styles = ik.styles()[:2]
        batch = ik.batch(imagekit.grid(prompt=PROMPTS, style=[s.style_id for s in styles], ratio=RATIOS))
        print(f"Batch: {len(batch)} rows, estimated {batch.estimate():g} credits")
        batch.run(out_dir=out_dir / "images")
        table = batch.to_pandas()
        table.to_csv(out_dir / "batch.csv", index=False)
        batch.contact_sheet().savefig(out_dir / "contact-sheet.png", dpi=100)
        print(f"{batch!r}; spent {batch.spent:g} credits")

        first = ik.image(int(table.loc[table["status"] == "COMPLETED", "image_id"].iloc[0]))
        edits = imagekit.chain(ik).enhance("2x").remove_bg().vectorize()
        print(f"Chain {edits!r}: estimated {edits.estimate():g} credits")
        result = edits.run(first, deadline=120)
        result.lineage.to_csv(out_dir / "chain-lineage.csv", index=False)
        result.plot().savefig(out_dir / "chain-lineage.png", dpi=100)
        if result.ok:
            result.image.save(out_dir / "chain-result.svg", type="svg")
        print(result.lineage[["step", "op", "parent_id", "image_id", "credits", "status"]].to_string(index=False))

        report = usage_report(ik, out_dir)
        print(f"\n{report}\n\nResults in {out_dir}/: contact-sheet.png, batch.csv, usage-*.csv, usage-*.png")
    return 0 if result.ok and set(table["row_status"]) == {"done"} else 1
