"""The main job (``make demo``): a prompt grid as a batch, an edit chain on one of its images and a
usage report, against a fresh embedded sandbox; the results land in ``out_dir`` with a page,
``index.html``, that shows them all.

Every run starts clean: a new sandbox, and the files an earlier run recorded in ``out_dir``'s
manifest set aside first (removed once this run succeeds, put back if it fails or is interrupted),
so what is there afterwards describes this run only. A folder holding files
and no manifest is refused (they are someone's own); a run that fails removes what it wrote.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..parsing import command, folder_option

__all__ = ["run_demo", "PROMPTS", "RATIOS", "CHAIN_PROMPT", "SEED"]

CHAIN_PROMPT = "a red robot on a foggy beach"
"""A subject on a plain background: each step of the chain shows (removeBg keeps the robot, and its
flat cut-out vectorizes cleanly)."""
PROMPTS = [CHAIN_PROMPT, "a black cat in a flower garden", "a city skyline at night"]
SEED = 7
"""Every row's seed: the demo draws the same pictures each time it runs (its page, the docs' pictures)."""
RATIOS = ["1:1", "16:9"]
WRITES = ("index.html", "batch.csv", "contact-sheet.png", "ledger.sqlite", "journal.sqlite", "images", "dataset",
          "chain-lineage.csv", "chain-steps.png")
"""What a demo run writes in its folder under these names, recorded in its manifest before it starts."""
ALSO_WRITES = ("chain-*", "usage-*", "ledger.sqlite-*", "journal.sqlite-*")
"""What the library calls it makes write there besides, recorded once they have."""


@dataclass
class Outcome:
    """What the run made, for the console and the page."""

    out: Path
    batch: Any = None
    table: Any = None
    chain: Any = None
    steps: list[dict] = field(default_factory=list)
    """One dict per picture of the chain, source first: file, op, params, credits, image id, size."""
    report: Any = None
    dataset: Any = None
    """The batch's export as an imagefolder dataset (``dataset/``)."""
    problems: list[str] = field(default_factory=list)
    """What failed and why, one line each."""


def run_demo(out_dir: str | Path, box: Any = None) -> int:
    """Run the demo; returns a process exit code (0 when every row and step succeeded).

    ``box``: run as the demo user of this running EmbeddedSandbox (default: a fresh sandbox, removed
    afterwards).
    """
    from imagekit.ownership import owned

    from .page import write_page

    out = Path(out_dir)
    with owned(out, "imagekit demo", adopt=ALSO_WRITES) as folder:
        folder.claim(*WRITES)
        outcome = Outcome(out)
        if box is not None:
            run_against(box, outcome)
        else:
            from imagekit.sandbox import EmbeddedSandbox

            with tempfile.TemporaryDirectory(prefix="imagekit-demo-") as data, EmbeddedSandbox(data, base_size=512) as fresh:
                run_against(fresh, outcome)
        page = write_page(outcome)
    if folder.earlier:  # kept aside until now: a run cut short puts them back
        print(f"Replaced the results of an earlier run in {out}/")
    for problem in outcome.problems:
        print(f"FAILED: {problem}")
    print(f"\nResults in {out}/; open {page} to see them all.")
    return 1 if outcome.problems else 0


def run_against(box: Any, outcome: Outcome) -> None:
    """The batch, the chain and the report, as ``box``'s demo user, recorded in the run's own ledger."""
    import imagekit
    from imagekit.config import SANDBOX_SERVICE
    from imagekit.reports import usage_report

    # the files name the sandbox by its data's id (as connect() names the home's), not by a port gone tomorrow
    with imagekit.Client(box.url, box.api_key, ledger=outcome.out / "ledger.sqlite",
                         service=f"{SANDBOX_SERVICE} {box.identity}") as ik:
        try:
            run_batch(ik, outcome)
            run_chain(ik, outcome)
            outcome.report = usage_report(ik, outcome.out)
        finally:  # let go of the file, so that the next run in this process can remove it
            if ik.ledger is not None:
                ik.ledger.close()
        print(f"\n{outcome.report}")


def run_batch(ik: Any, outcome: Outcome) -> None:
    """Every prompt in two styles and two ratios; the table, the contact sheet, the dataset, and
    each failed row."""
    import imagekit
    from imagekit._csv_cells import inert_frame

    from .page import batch_sentence

    out = outcome.out
    styles = ik.styles()[:2]
    batch = ik.batch(imagekit.grid(prompt=PROMPTS, style=[s.style_id for s in styles], ratio=RATIOS), seed=SEED)
    print(f"Batch: {len(batch)} rows, estimated {batch.estimate():g} credits")
    batch.run(out_dir=out / "images", journal=out / "journal.sqlite")
    table = batch.to_pandas()
    inert_frame(table).to_csv(out / "batch.csv", index=False)
    batch.contact_sheet().savefig(out / "contact-sheet.png", dpi=100)
    print(f"Batch done: {batch_sentence(table, batch.spent)}")
    # the demo's folder is its own (its manifest lists dataset/): an earlier run's export there is
    # replaced as the rest of its results are (the export still keeps a file someone changed)
    outcome.dataset = batch.export(out / "dataset", progress=False, overwrite=True)
    print(f"Dataset: {outcome.dataset}")
    for row in table[table["row_status"] != "done"].itertuples():
        outcome.problems.append(f"batch row {row.row} ({row.prompt!r}, style {row.style}, {row.ratio}): "
                                f"{row.row_status}, {row.error or 'no error recorded'}")
    outcome.batch, outcome.table = batch, table


def run_chain(ik: Any, outcome: Outcome) -> None:
    """Enhance, remove the background and vectorize the chain prompt's image; save every step."""
    import imagekit
    from imagekit._csv_cells import inert_frame

    from .page import chain_plan

    source = chain_source(outcome.table)
    if source is None:
        outcome.problems.append("edit chain: not run, because the batch made no image to start from")
        return
    edits = imagekit.chain(ik).enhance("2x").remove_bg().vectorize()
    print(f"\nEdit chain {chain_plan(edits.steps)} on image {source}: estimated {edits.estimate():g} credits")
    result = edits.run(ik.image(source), deadline=120)
    outcome.chain = result
    lineage = result.lineage
    inert_frame(lineage).to_csv(outcome.out / "chain-lineage.csv", index=False)
    print(lineage[["step", "op", "parent_id", "image_id", "credits", "status"]].to_string(index=False))
    outcome.steps = save_steps(result, outcome.out)
    chain_figure(outcome.steps, outcome.out)
    if not result.ok:
        failed = lineage.iloc[-1]
        outcome.problems.append(f"edit chain step {failed['step']} ({failed['op']} of image {failed['parent_id']}): "
                                f"{failed['status']}, {failed['error']}")


def chain_source(table: Any) -> int | None:
    """The image the chain starts from: the chain prompt's, first style, widest ratio; else any."""
    done = table[table["status"] == "COMPLETED"]
    if done.empty:
        return None
    preferred = done[(done["prompt"] == CHAIN_PROMPT) & (done["ratio"] == RATIOS[-1])]
    return int((preferred if len(preferred) else done)["image_id"].iloc[0])


def save_steps(result: Any, out: Path) -> list[dict]:
    """Each picture of the chain as ``chain-<n>-<op>.png`` (the vectorized one also as .svg)."""
    pictures = [("source", "", None, result.source)]
    done = result.lineage[result.lineage["status"] == "done"]
    pictures += [(row.op, row.params, row.credits, image) for row, image in zip(done.itertuples(), result.images)]
    steps = []
    for number, (op, params, credits, image) in enumerate(pictures):
        path = image.save(out / f"chain-{number}-{op}.png")
        svg = image.save(out / f"chain-{number}-{op}.svg", type="svg") if op == "vectorize" else None
        steps.append({"op": op, "params": params, "credits": credits, "image_id": image.id, "file": path.name,
                      "svg": svg.name if svg else None, "resolution": image.resolution or image.meta().resolution})
    return steps


def chain_figure(steps: list[dict], out: Path) -> None:
    """``chain-steps.png``: the chain's pictures side by side, each captioned with its step and cost,
    over a checkerboard so that what removeBg made transparent shows as such."""
    import numpy as np
    from matplotlib.figure import Figure
    from PIL import Image

    from .page import caption

    pictures = [Image.open(out / step["file"]).convert("RGBA") for step in steps]
    aspect = max(picture.height / picture.width for picture in pictures)
    figure = Figure(figsize=(3.2 * len(steps), 3.2 * aspect + 0.6), layout="constrained")
    for ax, step, picture, number in zip(figure.subplots(1, len(steps), squeeze=False)[0], steps, pictures,
                                         range(len(steps))):
        height, width = picture.height, picture.width
        squares = (np.indices((height, width)) // max(8, width // 40)).sum(axis=0) % 2
        ax.imshow(np.where(squares, 0.8, 1.0), cmap="gray", vmin=0, vmax=1, extent=(0, width, height, 0))
        ax.imshow(np.asarray(picture), extent=(0, width, height, 0))
        ax.set_title(f"{number}. {caption(step)}", fontsize=8, wrap=True)
        ax.set_axis_off()
    figure.savefig(out / "chain-steps.png", dpi=100)


def add_demo_command(commands: Any) -> None:
    """The ``demo`` command on the top-level parser's subcommands."""
    demo = command(commands, "demo", "the main job against a fresh embedded sandbox: a batch, an edit "
                                      "chain and a usage report, with an HTML page of the results")
    demo.add_argument("--out", default="out", type=folder_option,
                      help="output folder: a new or empty one, or one an earlier demo run wrote (only its "
                           "files are replaced)")
    demo.set_defaults(run=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    return run_demo(Path(args.out))
