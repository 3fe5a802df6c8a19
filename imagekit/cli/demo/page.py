"""The demo's page, ``index.html``: the contact sheet, the edit chain step by step with its costs,
and the usage report's plots and tables. Pictures stay beside the page as files it links to."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["write_page", "caption", "batch_sentence", "chain_plan"]

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222;
  overflow-wrap: anywhere; }
h1 { margin-bottom: 0.2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.problems { background: #fdecea; border: 1px solid #f5c2c0; padding: 0.6em 1.2em; }
.steps { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.steps figure { margin: 0; flex: 1 1 160px; min-width: 0; max-width: 100%; }
.steps img { width: 100%; display: block; border: 1px solid #ccc;
  background: repeating-conic-gradient(#ddd 0% 25%, #fff 0% 50%) 50% / 20px 20px; }
figcaption { font-size: 13px; margin-top: 4px; }
p { white-space: pre-line; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
.plots img { flex: 1 1 320px; min-width: 0; max-width: 100%; height: auto; }
.sheet { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 12px; }
.sheet figure { margin: 0; min-width: 0; }
.sheet img { width: 100%; height: auto; display: block; border: 1px solid #ccc; }
img { max-width: 100%; height: auto; }
.table { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; margin: 0.4em 0 1.2em; }
th, td { border-bottom: 1px solid #e4e4e4; padding: 3px 10px; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #f6f6f6; }
"""


def caption(step: dict) -> str:
    """``1 · enhance 2x · 2 credits · #34 · 1024x576`` for one picture of the chain."""
    # the lineage's parameters (``scale='2x'``) as a person says them: ``2x``
    values = re.findall(r"=\s*'?([^',]+)'?", step["params"] or "") or ([step["params"]] if step["params"] else [])
    parts = [" ".join([step["op"], *values])]
    if step["credits"] is not None:
        parts.append(f"{step['credits']:g} credit{'' if step['credits'] == 1 else 's'}")
    parts += [f"#{step['image_id']}", step["resolution"] or ""]
    return " · ".join(part for part in parts if part)


def batch_sentence(table: Any, spent: float) -> str:
    """``12 rows, all done; 24 credits spent`` (or ``10 done, 2 failed``) from a batch's table (one line
    per image: rows are counted once each, and their images as images when a row has several)."""
    rows = table.drop_duplicates("key")
    counts = rows["row_status"].value_counts()
    said = f"{len(rows)} row{'' if len(rows) == 1 else 's'}"
    if len(table) != len(rows):
        images = int(table["image_id"].notna().sum())
        said += f" ({images} image{'' if images == 1 else 's'})"
    done = "all done" if counts.get("done", 0) == len(rows) else ", ".join(f"{n} {state}" for state, n in counts.items())
    return f"{said}, {done}; {spent:g} credit{'' if spent == 1 else 's'} spent"


def chain_plan(steps: Any) -> str:
    """``enhance 2x → remove_bg → vectorize``: a chain's steps as a person reads them."""
    return " → ".join(" ".join([step.op, *(str(value) for value in step.params.values())]) for step in steps)


def write_page(outcome: Any) -> Path:
    """Write ``index.html`` into the run's folder and return its path."""
    out = outcome.out
    sections = [_summary(outcome), _problems(outcome.problems), _contact_sheet(outcome), _dataset(outcome.dataset),
                _chain(outcome.steps), _report(outcome.report, out)]
    body = "\n".join(section for section in sections if section)
    page = out / "index.html"
    page.write_text(f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>imagekit demo</title>'
                    f"<style>{_STYLE}</style></head>\n<body>\n{body}\n</body></html>\n", encoding="utf-8")
    return page


def _summary(outcome: Any) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"Run at {when} against a fresh embedded sandbox."]
    if outcome.batch is not None:
        lines.append(f"Batch: {html.escape(batch_sentence(outcome.table, outcome.batch.spent))}.")
    if outcome.steps:
        spent = sum(step["credits"] or 0 for step in outcome.steps)
        lines.append(f"Edit chain: {len(outcome.steps) - 1} steps, {spent:g} credits.")
    return "<h1>imagekit demo</h1>\n" + "".join(f"<p>{line}</p>" for line in lines)


def _problems(problems: list[str]) -> str:
    if not problems:
        return ""
    items = "".join(f"<li>{html.escape(problem)}</li>" for problem in problems)
    return f'<div class="problems"><strong>What failed</strong><ul>{items}</ul></div>'


def _contact_sheet(outcome: Any) -> str:
    """The batch's images as a grid, each captioned in text (prompt, style, ratio, credits): a
    caption drawn into one picture is unreadable once a phone scales it down."""
    table, out = outcome.table, outcome.out
    if table is None or not len(table):
        return ""
    figures = []
    for row in table.itertuples():
        file = getattr(row, "file", None)
        if not isinstance(file, str) or not file:
            continue
        name = Path(file).name
        if not (out / "images" / name).exists():
            continue
        words = [getattr(row, "prompt", ""), getattr(row, "style_name", ""), getattr(row, "ratio", "")]
        credits = getattr(row, "credits", None)
        if credits is not None and credits == credits:
            words.append(f"{credits:g} credit{'' if credits == 1 else 's'}")
        text = " · ".join(str(word) for word in words if isinstance(word, (str, int, float)) and str(word))
        figures.append(f'<figure><a href="images/{html.escape(name)}"><img src="images/{html.escape(name)}" '
                       f'alt="{html.escape(text)}" loading="lazy"></a><figcaption>{html.escape(text)}</figcaption></figure>')
    if not figures:
        return ""
    sheet = ' The same as one picture: <a href="contact-sheet.png">contact-sheet.png</a>.' \
        if (out / "contact-sheet.png").exists() else ""
    return ('<h2>Batch: every prompt in two styles and two ratios</h2>\n'
            f'<p>The table is <a href="batch.csv">batch.csv</a>; the images are in <a href="images/">images/</a>.{sheet}</p>'
            f'<div class="sheet">{"".join(figures)}</div>')


def _dataset(export: Any) -> str:
    if export is None:
        return ""
    return ("<h2>The batch as a dataset</h2>\n"
            f"<p>{html.escape(str(export))}: the images, each with its provenance inside, and "
            '<a href="dataset/metadata.jsonl">metadata.jsonl</a>. Load it with '
            '<code>datasets.load_dataset("imagefolder", data_dir="dataset", split="train")</code>.</p>')


def _chain(steps: list[dict]) -> str:
    if not steps:
        return ""
    figures = []
    for number, step in enumerate(steps):
        picture = step["svg"] or step["file"]
        figures.append(f'<figure><a href="{html.escape(picture)}"><img src="{html.escape(picture)}" '
                       f'alt="{html.escape(step["op"])}"></a>'
                       f"<figcaption>{number}. {html.escape(caption(step))}</figcaption></figure>")
    return ("<h2>Edit chain: enhance, remove the background, vectorize</h2>\n"
            "<p>Each step starts from the picture before it (a checkerboard shows through what is transparent). "
            'Its lineage is <a href="chain-lineage.csv">chain-lineage.csv</a>.</p>\n'
            f'<div class="steps">{"".join(figures)}</div>')


def _report(report: Any, out: Path) -> str:
    if report is None:
        return ""
    from imagekit.reports.tables import shown_limits

    plots = "".join(f'<img src="{html.escape(path.name)}" alt="{html.escape(path.stem)}">'
                    for path in report.files if path.suffix == ".png")
    files = "".join(f'<a href="{html.escape(path.name)}">{html.escape(path.name)}</a> '
                    for path in report.files if path.suffix == ".csv")
    sections = [("Spend by operation", report.by_operation), ("Spend by day", report.by_day),
                ("Spend by style", report.by_style), ("Plan limits", shown_limits(report.limits))]
    tables = "".join(f"<h3>{title}</h3>{_table(table)}" for title, table in sections)
    lines = [report.summary(), *report.notes, f"Records against the balance: {report.agreement()}",
             f"Forecast: {report.forecast}"]
    text = "".join(f"<p>{html.escape(str(line))}</p>" for line in lines)
    return (f'<h2>Usage report</h2>\n{text}<div class="plots">{plots}</div>\n{tables}'
            f"<p>The same tables as CSV: {files}</p>")


def _table(table: Any) -> str:
    """A DataFrame as an HTML table a person reads (blanks where there is nothing), or a line
    saying there is nothing yet."""
    if not len(table):
        return "<p>(nothing yet)</p>"
    shown = table.astype(object).where(table.notna(), "")
    return f'<div class="table">{shown.to_html(border=0, na_rep="", float_format=lambda value: f"{value:g}")}</div>'
