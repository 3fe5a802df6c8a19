"""papermill runs an example notebook as a job with other parameters, against its embedded sandbox;
the output notebook (read with nbformat), the images it saved and its MLflow run show they took."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from PIL import Image as PILImage

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def outputs_text(cell) -> str:
    return "".join(output.get("text", "") or output.get("data", {}).get("text/plain", "") for output in cell.outputs)


@pytest.mark.slow(15)
def test_the_batch_notebook_runs_with_other_parameters(tmp_path, monkeypatch):
    import papermill  # here, not at collection: with mlflow, a second of every test process's start
    from mlflow import MlflowClient

    for name in ("IMAGEKIT_BASE_URL", "IMAGEKIT_API_KEY"):  # the notebook's own embedded sandbox
        monkeypatch.delenv(name, raising=False)
    results, tracking = tmp_path / "results", f"sqlite:///{tmp_path / 'mlflow.db'}"
    prompts = ["a red kite", "a paper boat"]
    papermill.execute_notebook(
        str(NOTEBOOKS / "02_batch_experiments.ipynb"), str(tmp_path / "out.ipynb"), cwd=str(tmp_path),
        parameters={"prompts": prompts, "ratios": ["1:1"], "count": 2, "budget": 8, "out_dir": str(results),
                    "tracking_uri": tracking},
        kernel_name="python3", progress_bar=False)

    nb = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    tags = [cell.metadata.get("tags", []) for cell in nb.cells]
    injected = tags.index(["injected-parameters"])
    assert tags[injected - 1] == ["parameters"]
    assert "budget = 8" in nb.cells[injected].source
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert all(cell.execution_count is not None for cell in code)
    assert not any(output.output_type == "error" for cell in code for output in cell.outputs)
    text = "\n".join(outputs_text(cell) for cell in code)
    assert "Batch(4 rows: 4 pending)" in text  # 2 prompts x the sandbox's 2 styles x 1 ratio
    assert "spent 8 credits; stopped early: budget of 8 credits reached" in text  # 2 rows of 2 images at 2 credits
    assert "this run spent 8 credits" in text  # the resumed run finished the other two rows

    files = sorted(results.glob("*.png"))  # outside the notebook's temporary folder, so they stay
    assert len(files) == 8 and (results / "journal.sqlite").exists()
    assert {f.name.split("-", 1)[1].rsplit("-", 1)[0] for f in files} == {"a-red-kite", "a-paper-boat"}
    for file in files:
        with PILImage.open(file) as picture:
            assert picture.format == "PNG"

    runs = MlflowClient(tracking).search_runs([MlflowClient(tracking).get_experiment_by_name("batch-experiments")
                                               .experiment_id])
    assert len(runs) == 1 and json.loads(runs[0].data.params["axis.prompt"]) == prompts
    assert runs[0].data.metrics["images"] == 8 and runs[0].data.metrics["credits_spent"] == 16
