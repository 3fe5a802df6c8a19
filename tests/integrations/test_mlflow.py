"""MLflow: a batch, a chain and a usage report each become one run in a real tracking store (SQLite,
no server), read back through MLflow's own client; without MLflow, one line says what to install."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import pytest
from PIL import Image as PILImage

import imagekit
from imagekit.integrations.mlflow import latency_metrics, log_batch, log_chain, log_usage
from tests.helpers import TLS, balance
from tests.utils.tracking import EXPERIMENT

ROOT = Path(__file__).resolve().parents[2]


def artifacts(tracking, run_id: str, folder: str | None = None) -> dict[str, Path]:
    """The run's artifacts (of ``folder``, or at its root), downloaded: path in the run -> local file."""
    return {item.path: Path(tracking.download_artifacts(run_id, item.path))
            for item in tracking.list_artifacts(run_id, folder)}


def table(tracking, run_id: str, name: str) -> pd.DataFrame:
    return tracking.load_table(tracking.experiment_id, name, run_ids=[run_id])


@pytest.mark.parametrize(("values", "expected"), [
    ([0.2], (0.2, 0.2)),
    ([3.0, 1.0, 2.0, None], None),
    ([0.1 * n for n in range(1, 21)], None),
    ([None, float("nan")], {}),
])
def test_latency_quantiles_match_numpy(values, expected):
    result = latency_metrics(values)
    known = [v for v in values if v is not None and v == v]
    if not known:
        assert result == expected
        return
    p50, p95 = np.percentile(known, [50, 95])
    assert result == {"latency_p50": pytest.approx(p50, abs=1e-4), "latency_p95": pytest.approx(p95, abs=1e-4)}


def test_a_batch_is_one_run_with_its_grid_results_and_images(connect, tracking, tmp_path):
    ik = connect()
    styles = [s.style_id for s in ik.styles()[:2]]
    before = balance(ik)
    batch = ik.batch(imagekit.grid(prompt=["a fox", "a kite"], style=styles, ratio=["1:1", "16:9"]),
                     count=1, seed=3, tags={"experiment": "grid-a"})
    batch.run(out_dir=tmp_path / "out", progress=False)

    run_id = log_batch(batch, run_name="grid-a", experiment=EXPERIMENT)

    run = tracking.get_run(run_id)
    assert run.info.experiment_id == tracking.experiment_id and run.info.run_name == "grid-a"
    assert json.loads(run.data.params["axis.prompt"]) == ["a fox", "a kite"]
    assert json.loads(run.data.params["axis.style"]) == styles
    assert json.loads(run.data.params["axis.ratio"]) == ["1:1", "16:9"]
    assert run.data.params["count"] == "1" and run.data.params["seed"] == "3"
    metrics = run.data.metrics
    assert metrics["rows"] == 8 and metrics["images"] == 8 and metrics["failures"] == 0 and metrics["not_run"] == 0
    assert metrics["credits_spent"] == pytest.approx(before - balance(ik))  # what the service charged
    assert 0 < metrics["latency_p50"] <= metrics["latency_p95"]
    assert run.data.tags["experiment"] == "grid-a" and run.data.tags["imagekit.kind"] == "batch"
    assert ik.config.api_key not in json.dumps(run.data.tags)

    results = table(tracking, run_id, "results.json")
    assert len(results) == 8 and set(results["status"]) == {"COMPLETED"}
    assert sorted(results["prompt"].unique()) == ["a fox", "a kite"]
    images = artifacts(tracking, run_id, "images")
    assert sorted(images) == sorted(results["artifact"])
    for record in results.to_dict("records"):  # each artifact is the file the batch saved, byte for byte
        assert images[record["artifact"]].read_bytes() == Path(record["file"]).read_bytes()
    assert json.loads(artifacts(tracking, run_id)["grid.json"].read_text())["defaults"]["seed"] == 3
    with PILImage.open(artifacts(tracking, run_id)["contact_sheet.png"]) as sheet:
        assert sheet.format == "PNG" and sheet.width > 200


def test_images_of_an_async_batch_without_out_dir_are_read_from_the_service(connect, tracking):
    ik = connect()
    aik = ik.to_async()
    try:
        batch = aik.batch(["a red bicycle", "a bowl of lemons"], style=ik.styles()[0].style_id, count=2)
        batch.run(progress=False)
        with imagekit.tags(person="ana"):
            run_id = log_batch(batch, experiment=EXPERIMENT)
    finally:
        import anyio

        anyio.run(aik.aclose)
    run = tracking.get_run(run_id)
    assert run.data.tags["person"] == "ana" and run.data.metrics["images"] == 4
    assert json.loads(run.data.params["axis.prompt"]) == ["a red bicycle", "a bowl of lemons"]
    images = artifacts(tracking, run_id, "images")
    ids = table(tracking, run_id, "results.json")["image_id"].tolist()
    assert sorted(images) == sorted(f"images/{int(i)}.png" for i in ids)
    for image_id in ids:
        assert images[f"images/{int(image_id)}.png"].read_bytes() == ik.images.read(int(image_id))


def test_failed_rows_are_counted_and_cost_nothing(box, connect, tracking):
    ik = connect()
    httpx.post(f"{box.url}/sandbox/faults", json={"fail_generation_rate": 1.0, "seed": 1}, verify=TLS, timeout=120).raise_for_status()
    before = balance(ik)
    batch = ik.batch(["a fox", "a kite"], style=ik.styles()[0].style_id, count=1)
    batch.run(progress=False)
    httpx.delete(f"{box.url}/sandbox/faults", verify=TLS, timeout=120).raise_for_status()

    run = tracking.get_run(log_batch(batch, experiment=EXPERIMENT))
    assert run.data.metrics["failures"] == 2 and run.data.metrics["images"] == 0
    assert run.data.metrics["credits_spent"] == 0 == pytest.approx(before - balance(ik))
    assert "latency_p50" in run.data.metrics
    assert tracking.list_artifacts(run.info.run_id, "images") == []
    assert set(table(tracking, run.info.run_id, "results.json")["row_status"]) == {"failed"}


def test_a_chain_is_one_run_with_its_lineage_and_every_step(connect, tracking):
    ik = connect()
    image = ik.create("a friendly robot", style=ik.styles()[0], count=1).images[0]
    before = balance(ik)
    result = imagekit.chain(tags={"step": "cutout"}).enhance("2x").remove_bg().vectorize().run(image)
    assert result.ok

    run = tracking.get_run(log_chain(result, run_name="cutout", experiment=EXPERIMENT))
    params = run.data.params
    assert params["source_id"] == str(image.id) and params["steps"] == "3"
    assert [params[f"step.{n}"] for n in range(3)] == ["enhance(scale='2x')", "remove_bg()", "vectorize()"]
    assert run.data.metrics["steps_done"] == 3 and run.data.metrics["failures"] == 0
    assert run.data.metrics["credits_spent"] == pytest.approx(before - balance(ik))
    assert run.data.tags["step"] == "cutout" and run.data.tags["imagekit.kind"] == "chain"

    lineage = table(tracking, run.info.run_id, "lineage.json")
    assert lineage["op"].tolist() == ["enhance", "remove_bg", "vectorize"]
    images = artifacts(tracking, run.info.run_id, "images")
    steps = [f"images/{n:02d}-{op}-{int(i)}.{'svg' if op == 'vectorize' else 'png'}"
             for n, op, i in zip(lineage["step"], lineage["op"], lineage["image_id"])]
    assert sorted(images) == sorted([f"images/source-{image.id}.png", *steps])
    assert ElementTree.parse(images[steps[-1]]).getroot().tag.endswith("svg")
    with PILImage.open(images[steps[1]]) as cutout:
        assert cutout.mode == "RGBA"
    assert "lineage.png" in artifacts(tracking, run.info.run_id)


def test_usage_is_one_run_nested_in_the_active_run(connect, tracking):
    import mlflow

    ik = connect()
    before = balance(ik)
    ik.create("a lighthouse", style=ik.styles()[0], count=2)
    with mlflow.start_run(experiment_id=tracking.experiment_id, run_name="month") as parent:
        run_id = log_usage(ik, run_name="usage")
    run = tracking.get_run(run_id)
    assert run.data.tags["mlflow.parentRunId"] == parent.info.run_id
    assert run.info.experiment_id == tracking.experiment_id
    assert run.data.metrics["balance"] == pytest.approx(float(ik.usage().current_credit))
    by_operation = table(tracking, run_id, "by_operation.json")
    assert run.data.metrics["credits_spent"] == pytest.approx(before - balance(ik))
    assert by_operation.set_index("operation")["credits"].sum() == pytest.approx(before - balance(ik))
    files = artifacts(tracking, run_id, "usage")
    ledger = pd.read_csv(files["usage/usage-ledger.csv"])
    assert "create" in set(ledger["operation"])
    with PILImage.open(io.BytesIO(files["usage/usage-burn-down.png"].read_bytes())) as plot:
        assert plot.format == "PNG"


def test_a_batch_not_run_yet_with_an_axis_longer_than_a_param(tracking):
    # No request is made: the rows, their table and an empty contact sheet are all there is.
    with imagekit.Client("http://127.0.0.1:9", "iks_unused", ledger=False) as ik:
        prompts = [f"a lighthouse, take {n:03d}" for n in range(300)]
        batch = ik.batch(imagekit.grid(prompt=prompts, ratio=["1:1", "16:9"]), style=1)
        run = tracking.get_run(log_batch(batch, experiment=EXPERIMENT, images=False))
    assert run.data.params["axis.prompt"] == "300 values (see grid.json)"  # past MLflow's limit on a param
    assert run.data.params["axis.ratio"] == '["1:1", "16:9"]' and run.data.params["style"] == "1"
    assert json.loads(artifacts(tracking, run.info.run_id)["grid.json"].read_text())["axes"]["prompt"] == prompts
    assert run.data.metrics == {"rows": 600, "images": 0, "failures": 0, "failed_images": 0, "not_run": 600,
                                "credits_spent": 0}
    assert set(table(tracking, run.info.run_id, "results.json")["row_status"]) == {"pending"}


def test_without_mlflow_the_call_says_what_to_install():
    code = ("import sys; sys.modules['mlflow'] = None\n"  # as if it were not installed
            "from imagekit.integrations.mlflow import log_batch\n"
            "try:\n    log_batch(None)\nexcept Exception as exc:\n    print(type(exc).__name__, exc)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines() == [
        "ConfigError this needs mlflow, which is not installed: pip install 'imagekit[mlflow]'"]


def test_a_batch_saved_in_object_storage_logs_its_images(connect, tracking, s3):
    """Files the run put in S3 (moto on loopback) are logged as they are, their provenance inside."""
    ik = connect()
    batch = ik.batch(["a fox", "a kite"], style=ik.styles()[0]).run(out_dir=f"s3://{s3.bucket()}/run", progress=False)
    run_id = log_batch(batch, experiment=EXPERIMENT)
    images = artifacts(tracking, run_id, "images")
    assert len(images) == 2
    assert sorted(PILImage.open(path).text["prompt"] for path in images.values()) == ["a fox", "a kite"]


def test_logging_a_run_to_a_new_tracking_store_prints_nothing_of_mlflows_own(connect, tmp_path, capfd, monkeypatch):
    """MLflow's INFO lines (creating its tables on a new store) stay out of the user's output
    while imagekit logs; MLflow's log levels are as they were afterwards."""
    import logging

    import mlflow

    monkeypatch.chdir(tmp_path)  # a new experiment keeps its artifacts in ./mlruns: the user's folder, not the checkout
    ik = connect()
    ik.create("a lighthouse", style=ik.styles()[0])
    level = logging.getLogger("mlflow").level
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'new.db'}")  # a store MLflow has yet to create
    try:
        capfd.readouterr()
        log_usage(ik, run_name="usage", experiment="quiet")
        printed = capfd.readouterr()
    finally:
        mlflow.set_tracking_uri(None)
    assert "INFO" not in printed.out + printed.err, printed
    assert logging.getLogger("mlflow").level == level
    assert (tmp_path / "mlruns").is_dir()
