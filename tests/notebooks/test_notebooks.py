"""The example notebooks as documents: committed with outputs, light, and ready for nbval.

nbval itself (``--nbval`` over ``notebooks/``) re-runs them and compares their text outputs; these
checks catch what it cannot: a notebook saved without outputs, with widget state or cell timings
baked in, too heavy to read on the web, or missing from the set.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
EXPECTED = ["01_quickstart", "02_batch_experiments", "03_edit_chains_and_masks", "04_credit_usage_report",
            "05_async_and_resilience", "06_team_budgets_and_spend", "07_review_and_quality"]
MAX_BYTES = 1_500_000


def test_the_seven_notebooks_are_there():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == EXPECTED


@pytest.fixture(params=EXPECTED)
def notebook(request) -> tuple[Path, dict]:
    path = NOTEBOOKS / f"{request.param}.ipynb"
    return path, json.loads(path.read_text(encoding="utf-8"))


def test_a_notebook_opens_with_a_title_and_a_sentence_on_what_it_shows(notebook):
    _, nb = notebook
    first = "".join(nb["cells"][0]["source"])
    title, _, rest = first.partition("\n")
    assert nb["cells"][0]["cell_type"] == "markdown" and title.startswith("# ")
    assert "This notebook" in rest


def test_every_code_cell_was_run_in_order_and_kept_its_outputs(notebook):
    _, nb = notebook
    counts = [cell["execution_count"] for cell in nb["cells"] if cell["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1))  # one clean top-to-bottom run
    assert not any(output.get("output_type") == "error" for cell in nb["cells"] for output in cell.get("outputs", []))


def test_no_widget_state_timings_or_stray_kernels_are_stored(notebook):
    _, nb = notebook
    assert "widgets" not in nb["metadata"]  # nbconvert --ExecutePreprocessor.store_widget_state=False
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert not any("execution" in cell.get("metadata", {}) for cell in nb["cells"])


def test_a_saved_progress_bar_shows_where_it_ended_not_where_it_began(notebook):
    """GitHub, nbviewer and nbconvert show a widget's text alone: a bar's must not read "0%" above a
    finished run; its final state is a printed line instead."""
    _, nb = notebook
    texts = ["".join(output.get("data", {}).get("text/plain", "")) + "".join(output.get("text", ""))
             for cell in nb["cells"] for output in cell.get("outputs", [])]
    assert not [text for text in texts if " 0%|" in text]
    # each bar reads as its run ended: done, or stopped short with the rest skipped (a budget's stop)
    assert all("100%|" in text or " skipped)" in text for text in texts if "%|" in text)


def test_a_notebook_stays_light_enough_to_read_on_the_web(notebook):
    path, _ = notebook
    assert path.stat().st_size < MAX_BYTES


def test_a_notebook_keeps_its_sandbox_to_itself(notebook):
    # A fresh IMAGEKIT_HOME per kernel: stable ids and balances, no clash with a user's sandbox, and
    # removed at the end (nbval kills kernels, so exit handlers never run).
    _, nb = notebook
    code = "\n".join("".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "code")
    assert 'os.environ["IMAGEKIT_HOME"] = workdir.name' in code
    assert code.rstrip().splitlines()[-1].startswith("workdir.cleanup()")


def test_a_notebook_has_a_papermill_parameters_cell_before_it_connects(notebook):
    # papermill injects its values after the one cell tagged "parameters": plain assignments of
    # values a person would change, read by the cells after it.
    import ast

    _, nb = notebook
    tagged = [n for n, cell in enumerate(nb["cells"]) if "parameters" in cell["metadata"].get("tags", [])]
    assert len(tagged) == 1
    cell = nb["cells"][tagged[0]]
    statements = ast.parse("".join(cell["source"])).body
    assert statements and all(isinstance(s, ast.Assign) for s in statements)
    assert cell["cell_type"] == "code" and not cell["outputs"]
    later = "\n".join("".join(c["source"]) for c in nb["cells"][tagged[0] + 1:] if c["cell_type"] == "code")
    assert "imagekit.connect(" in later
    for name in (target.id for s in statements for target in s.targets):
        assert name in later, f"the parameter {name} is never used"
