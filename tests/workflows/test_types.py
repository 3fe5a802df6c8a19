"""The workflows, the ledger and the reports are typed all the way: mypy names real classes for what
a batch, a chain, the ledger and the report functions return, never ``Any``."""

from __future__ import annotations

from tests.helpers import revealed_types

SNIPPET = '''
import pandas as pd

import imagekit
from imagekit.ledger import Ledger
from imagekit.reports import (balance_over_time, burn_down, contact_sheet, forecast, limits, spend_by_day,
                              spend_by_operation, spend_by_style, spend_by_tag, usage_report)

def main(ik: imagekit.Client, img: imagekit.Image, ledger: Ledger, frame: pd.DataFrame) -> None:
    batch = ik.batch(imagekit.grid(prompt=["a fox"], style=[1, 2]), ratio="1:1")
    reveal_type(batch)
    reveal_type(batch.run(budget=5))
    reveal_type(batch.estimate())
    reveal_type(batch.to_pandas())
    reveal_type(batch.contact_sheet())
    chain = imagekit.chain(ik).enhance("2x").remove_bg().vectorize()
    reveal_type(chain)
    reveal_type(chain.estimate())
    result = chain.run(img)
    reveal_type(result)
    reveal_type(result.image)
    reveal_type(result.lineage)
    reveal_type(result.resume())
    reveal_type(chain.map([img]))
    reveal_type(ledger.reconciliation())
    reveal_type(ledger.to_pandas())
    reveal_type(ledger.entries())
    reveal_type(usage_report(ik))
    reveal_type(spend_by_operation(frame))
    reveal_type(spend_by_day(frame))
    reveal_type(spend_by_style(frame))
    reveal_type(spend_by_tag(frame, "experiment"))
    reveal_type(balance_over_time(frame))
    reveal_type(limits(ik.me(), ik.usage(), frame))
    reveal_type(forecast(frame, 100.0))
    reveal_type(burn_down(frame))
    reveal_type(contact_sheet([("a fox", 1)], ik))

async def amain(aik: imagekit.AsyncClient, aimg: imagekit.AsyncImage) -> None:
    batch = aik.batch(["a fox"], style=1)
    reveal_type(await batch.arun())
    result = await imagekit.chain().upsize().arun(aimg)
    reveal_type(result)
    reveal_type(result.image)
    reveal_type(await imagekit.chain().retry().amap([aimg]))
'''

FRAME, FIGURE = "pandas.core.frame.DataFrame", "matplotlib.figure.Figure"
EXPECTED = [
    "imagekit.workflows.batches.batch.Batch", "imagekit.workflows.batches.batch.Batch", "imagekit.ledger.prices.Estimate", FRAME, FIGURE,
    "imagekit.workflows.chain.Chain", "builtins.float",
    "imagekit.workflows.chain.ChainResult[imagekit.images.Image]", "imagekit.images.Image", FRAME,
    "imagekit.workflows.chain.ChainResult[imagekit.images.Image]",
    "builtins.list[imagekit.workflows.chain.ChainResult[imagekit.images.Image]]",
    FRAME, FRAME, "builtins.list[imagekit.ledger.entries.Entry]",
    "imagekit.reports.report.Report", FRAME, FRAME, FRAME, FRAME, FRAME, FRAME, "imagekit.reports.tables.Forecast",
    FIGURE, FIGURE,
    "imagekit.workflows.batches.batch.Batch",
    "imagekit.workflows.chain.ChainResult[imagekit.images.AsyncImage]", "imagekit.images.AsyncImage",
    "builtins.list[imagekit.workflows.chain.ChainResult[imagekit.images.AsyncImage]]",
]


def test_workflows_ledger_and_reports_reveal_real_classes(tmp_path):
    revealed, out = revealed_types(SNIPPET, tmp_path)
    assert [kind.removeprefix("builtins.") for kind in revealed] == [kind.removeprefix("builtins.") for kind in EXPECTED], out
    assert not any("Any" in kind for kind in revealed), revealed
