"""MLflow: a batch, an edit chain or a usage report recorded as one MLflow run, to compare runs.

    from imagekit.integrations.mlflow import log_batch      # pip install 'imagekit[mlflow]'
    batch.run(budget=100, out_dir="out")
    run_id = log_batch(batch, run_name="lighthouses")

A run goes where MLflow sends runs (``mlflow.set_tracking_uri`` or MLFLOW_TRACKING_URI: a server, a
SQLite file, a folder), into ``experiment`` (a name, created if new; default: MLflow's active
experiment); inside a ``mlflow.start_run()`` block it becomes a child of that run, in its
experiment unless ``experiment`` names another. Each function returns the run's id.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..extras import require
from ..tags import current_tags

if TYPE_CHECKING:
    import pandas as pd

    from ..client import AsyncClient, Client
    from ..workflows import Batch, ChainResult

__all__ = ["log_batch", "log_chain", "log_usage", "latency_metrics"]

COMPLETED = "COMPLETED"


def log_batch(batch: Batch, run_name: str | None = None, *, experiment: str | None = None,
              images: bool = True, artifacts: str | None = None) -> str:
    """Record ``batch`` (after ``run``) as one run: its axes and defaults as params; images, failures,
    credits and latency p50/p95 as metrics; ``results.json`` (the results table, as
    ``mlflow.log_table`` writes it), ``grid.json``, ``contact_sheet.png`` and, with ``images``, every
    finished image under ``images/``; its tags as run tags. ``artifacts``: where an ``experiment``
    this call creates keeps its artifacts (default: MLflow's)."""
    mlflow = require("mlflow", "mlflow")
    frame = batch.to_pandas()
    done = frame[frame["image_id"].notna() & (frame["status"] == COMPLETED)] if len(frame) else frame
    axes, constants = batch.axes()
    entries = [batch.entries.get(row.key) for row in batch.rows]
    metrics = {"rows": len(batch.rows), "images": len(done),
               "failures": sum(entry is not None and entry.status in ("failed", "uncertain") for entry in entries),
               "failed_images": int((frame["status"] == "FAILED").sum()) if len(frame) else 0,
               "not_run": sum(entry is None or entry.status in ("pending", "skipped") for entry in entries),
               "credits_spent": sum(entry.credits or 0 for entry in entries if entry is not None),
               **latency_metrics([entry.latency for entry in entries if entry is not None])}
    with _run(mlflow, run_name, experiment, batch.tags, "batch", batch.client, artifacts) as run, \
            tempfile.TemporaryDirectory(prefix="imagekit-mlflow-") as scratch:
        mlflow.log_params(_params({**constants, **{f"axis.{k}": v for k, v in axes.items()}}))
        if batch.stopped:
            mlflow.set_tag("imagekit.stopped", batch.stopped)
        mlflow.log_metrics(metrics)
        mlflow.log_dict({"axes": axes, "defaults": constants}, "grid.json")
        names = _image_names(done)
        frame["artifact"] = [names.get(index) for index in frame.index]
        mlflow.log_table(_table(frame), "results.json")
        mlflow.log_figure(batch.contact_sheet(), "contact_sheet.png")
        if images:
            sources = [(record["file"] or int(record["image_id"]), names[index])
                       for index, record in zip(done.index, done.to_dict("records"))]
            _log_images(mlflow, batch.client, sources, Path(scratch))
        return str(run.info.run_id)


def log_chain(result: ChainResult[Any], run_name: str | None = None, *, experiment: str | None = None,
              images: bool = True) -> str:
    """Record an edit chain's run: its steps and source image as params; steps done, failures,
    credits and step latency p50/p95 as metrics; ``lineage.json`` (the lineage table),
    ``lineage.png`` and, with ``images``, the source and every step's image under ``images/``."""
    mlflow = require("mlflow", "mlflow")
    lineage = result.lineage
    params: dict[str, Any] = {"source_id": result.source.id, "steps": len(result.chain.steps)}
    params.update({f"step.{n}": str(step) for n, step in enumerate(result.chain.steps)})
    metrics = {"steps_done": int((lineage["status"] == "done").sum()),
               "failures": int((lineage["status"] != "done").sum()),
               "credits_spent": float(lineage["credits"].fillna(0).sum()),
               **latency_metrics(lineage["latency"].tolist())}
    client = result.source.client
    with _run(mlflow, run_name, experiment, result.chain.tags, "chain", client) as run, \
            tempfile.TemporaryDirectory(prefix="imagekit-mlflow-") as scratch:
        mlflow.log_params(_params(params))
        mlflow.log_metrics(metrics)
        mlflow.log_table(_table(lineage), "lineage.json")
        mlflow.log_figure(result.plot(), "lineage.png")
        if images:
            made = lineage[lineage["status"] == "done"]
            sources = [(result.source.id, f"source-{result.source.id}.png")] + [
                (int(record["image_id"]), f"{int(record['step']):02d}-{record['op']}-{int(record['image_id'])}."
                 f"{'svg' if record['op'] == 'vectorize' else 'png'}") for record in made.to_dict("records")]
            _log_images(mlflow, client, sources, Path(scratch))
        return str(run.info.run_id)


def log_usage(client: Client, run_name: str | None = None, *, experiment: str | None = None,
              days: float = 7.0) -> str:
    """Record ``client``'s usage report (``imagekit.reports.usage_report``): the balance, credits
    spent and the forecast's daily rate as metrics, spend by operation as ``by_operation.json``, and
    the report's CSV tables and PNG plots under ``usage/``."""
    from ..reports import usage_report

    mlflow = require("mlflow", "mlflow")
    with _run(mlflow, run_name, experiment, {}, "usage", client) as run, \
            tempfile.TemporaryDirectory(prefix="imagekit-mlflow-") as scratch:
        report = usage_report(client, scratch, days=days)
        mlflow.log_params({"forecast_days": days})
        mlflow.log_metrics({"balance": report.forecast.balance, "credits_per_day": report.forecast.per_day,
                            "credits_spent": float(report.by_operation["credits"].sum()),
                            "operations": int(report.by_operation["calls"].sum())})
        mlflow.log_table(_table(report.by_operation.reset_index()), "by_operation.json")
        mlflow.log_artifacts(scratch, "usage")
        return str(run.info.run_id)


def latency_metrics(latencies: Sequence[float | None]) -> dict[str, float]:
    """``latency_p50`` and ``latency_p95`` in seconds, over the known latencies (none: no metrics)."""
    known = sorted(float(value) for value in latencies if value is not None and value == value)
    if not known:
        return {}

    def quantile(q: float) -> float:  # linear between closest ranks, as numpy's and pandas' default
        position = q * (len(known) - 1)
        low = int(position)
        high = min(low + 1, len(known) - 1)
        return known[low] + (known[high] - known[low]) * (position - low)

    return {"latency_p50": round(quantile(0.5), 4), "latency_p95": round(quantile(0.95), 4)}


@contextmanager
def _run(mlflow: Any, run_name: str | None, experiment: str | None, tags: Mapping[str, str], kind: str,
         client: Client | AsyncClient, artifacts: str | None = None) -> Iterator[Any]:
    """An MLflow run in ``experiment`` (or MLflow's active one; made with ``artifacts`` as its
    artifact location when new), nested in the active run if any, tagged with the imagekit tags in
    effect, ``tags`` over them, and what was logged from where."""
    with _quiet("mlflow", "alembic"):
        parent = mlflow.active_run()
        experiment_id = parent.info.experiment_id if parent is not None else None
        if experiment is not None:
            found = mlflow.get_experiment_by_name(experiment)
            experiment_id = found.experiment_id if found is not None else \
                mlflow.create_experiment(experiment, artifact_location=artifacts)
        labels = {**current_tags(), **tags, "imagekit.kind": kind, "imagekit.service": client.config.service}
        with mlflow.start_run(run_name=run_name, experiment_id=experiment_id, nested=parent is not None,
                              tags=labels) as run:
            yield run


@contextmanager
def _quiet(*loggers: str) -> Iterator[None]:
    """MLflow's own INFO lines (creating its tables, 'View run at') kept out of the user's output
    while imagekit logs a run: warnings and errors still show. The levels are restored after."""
    kept = {name: logging.getLogger(name).level for name in loggers}
    for name in loggers:
        logging.getLogger(name).setLevel(max(logging.WARNING, kept[name]))
    try:
        yield
    finally:
        for name, level in kept.items():
            logging.getLogger(name).setLevel(level)


def _params(values: Mapping[str, Any]) -> dict[str, str]:
    """Params as MLflow keeps them: text, lists as JSON; a value past MLflow's length limit says how
    many values it had (``grid.json`` keeps them all)."""
    from mlflow.utils.validation import MAX_PARAM_VAL_LENGTH

    params = {}
    for name, value in values.items():
        text = json.dumps(value, default=str) if isinstance(value, list) else str(value)
        if len(text) > MAX_PARAM_VAL_LENGTH:
            text = f"{len(value) if isinstance(value, list) else len(text)} values (see grid.json)"
        params[name] = text
    return params


def _table(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` for ``log_table``: plain Python values (pandas 3's text columns would make MLflow's
    dtype check warn), missing ones as None."""
    plain = frame.astype(object)
    return plain.where(plain.notna(), None)


def _image_names(done: pd.DataFrame) -> dict[Any, str]:
    """The artifact path each finished image of a batch is logged under, by table index."""
    names = {}
    for index, record in zip(done.index, done.to_dict("records")):
        file = record.get("file")
        names[index] = f"images/{Path(file).name}" if file else f"images/{int(record['image_id'])}.png"
    return names


def _log_images(mlflow: Any, client: Client | AsyncClient, sources: list[tuple[str | int, str]],
                scratch: Path) -> None:
    """Log each image under ``images/``: a saved file as it is, an image id read from the service
    into ``scratch`` under its name."""
    from ..reports.sheets import read_now
    from ..storage import is_url, opened

    for source, name in sources:
        path = Path(source) if isinstance(source, str) and not is_url(source) else scratch / Path(name).name
        if isinstance(source, int):
            path.write_bytes(read_now(client, source, path.suffix.lstrip(".")))
        elif is_url(source):  # saved in object storage: copied here first
            with opened(source) as stored:
                path.write_bytes(stored.read())
        mlflow.log_artifact(str(path), "images")
