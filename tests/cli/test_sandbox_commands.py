"""The command-line contract: init and user add print the key last; serve answers on its port."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest

from tests.helpers import TLS, db_args, on_both_databases

from ..sandbox.serving import imagekit, serving

pytestmark = on_both_databases


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, backend):
    """One data folder per database backend: a folder initialised on SQLite is not one on PostgreSQL
    (shared, the second ``init`` was refused whenever this module ran on its own)."""
    return tmp_path_factory.mktemp(f"cli-{backend}")


@pytest.fixture(scope="module")
def db(new_database) -> list[str]:
    """``--db URL`` of the module's database (nothing on SQLite: the file in the data folder)."""
    return db_args(new_database())


def test_init_then_user_add_then_serve_with_latency(data_dir, db):
    demo_key = imagekit("sandbox", "init", "--data", str(data_dir), *db).stdout.strip().splitlines()[-1]
    assert demo_key.startswith("iks_")
    pro_key = imagekit("sandbox", "user", "add", "--data", str(data_dir), *db, "--email", "p@x.io",
                       "--plan", "pro").stdout.strip().splitlines()[-1]
    with serving(data_dir, *db, "--latency", "0.5") as served, httpx.Client(base_url=served.url, timeout=30, verify=TLS) as client:
        assert client.get("/api/users/me", headers={"X-Api-Key": demo_key}).json()["email"] == "demo@imagekit.local"
        me = client.get("/api/users/me", headers={"X-Api-Key": pro_key}).json()
        assert me["Plan"]["grade"] == "pro"
        style = client.get("/api/users/me/styles", headers={"X-Api-Key": pro_key}).json()[0]["styleId"]
        started = time.monotonic()
        made = client.post("/api/images/create", headers={"X-Api-Key": pro_key},
                           json={"prompt": "slow", "styleId": style})
        assert made.status_code == 200 and time.monotonic() - started >= 0.5


def test_user_add_refuses_unknown_plan_and_uninitialised_dir(tmp_path, new_database):
    own = db_args(new_database())  # a folder of its own, initialised here: the answer is about the plan
    imagekit("sandbox", "init", "--data", str(tmp_path / "box"), *own)
    for args, says in ((["--data", str(tmp_path / "box"), *own, "--email", "q@x.io", "--plan", "platinum"],
                        "Unknown plan 'platinum'; the plans are free, "),
                       (["--data", str(tmp_path / "empty"), *db_args(new_database()), "--email", "q@x.io"],
                        "holds no sandbox")):
        result = subprocess.run([sys.executable, "-m", "imagekit.cli", "sandbox", "user", "add", *args],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 2 and says in result.stderr, result.stderr
