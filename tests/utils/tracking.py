"""An MLflow tracking store for the integration tests, empty and kept per test."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.utils.workflow_fixtures import _boxes, _home, box, connect, ledger_location  # noqa: F401  (shared fixtures)

EXPERIMENT = "imagekit-tests"


@pytest.fixture(scope="session")
def _empty_store(tmp_path_factory) -> Path:
    """An empty SQLite tracking store, made once for the run (pytest-xdist's workers share the run's
    temporary folder): MLflow builds a new one by running its migrations (over a second), a copy
    opens at once."""
    import mlflow
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, above each worker's own
    path = shared / "mlflow-template.db"
    with FileLock(shared / "mlflow-template.lock"):
        if not path.exists():
            building = shared / "mlflow-template-building.db"
            mlflow.MlflowClient(f"sqlite:///{building}").search_experiments()
            building.replace(path)
    return path


@pytest.fixture
def tracking(tmp_path, _empty_store):
    """An MlflowClient on a SQLite tracking store in ``tmp_path`` (no server), where MLflow's own API
    sends runs too; its experiment ``EXPERIMENT`` keeps artifacts in ``tmp_path/artifacts``."""
    import mlflow

    shutil.copyfile(_empty_store, tmp_path / "mlflow.db")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)  # over whatever an earlier test (or a README block) set
    client = mlflow.MlflowClient(uri)
    client.experiment_id = client.create_experiment(EXPERIMENT, artifact_location=(tmp_path / "artifacts").as_uri())
    yield client
    mlflow.set_tracking_uri(None)  # and MLFLOW_TRACKING_URI, which MLflow set to match
