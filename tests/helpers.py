"""Helpers shared by the test packages, each defined once: the error-shape check, sandbox controls,
retry policies for tests, and waiting on a sandbox's state by polling it (never by sleeping)."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import imagekit

ROOT = Path(__file__).resolve().parents[1]
"""The checkout under test."""

on_both_databases = pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True, scope="session")
"""A module marked with this (``pytestmark = on_both_databases``) runs every test on a sandbox over
SQLite and again over PostgreSQL: the ``sandbox``, ``own_sandbox`` and ``sandbox_on`` fixtures follow.
The PostgreSQL runs carry the ``postgres`` marker."""


SIZE = 512
"""The long side of the session sandboxes' images (``sandbox``, ``spec_sandbox``; the service's is
1024): a quarter of the pixels, where drawing, encoding and editing full-size images was most of the
API tests' time. What they check holds at any size; the default's sizes are checked by ratio."""

TLS = httpx.create_ssl_context()
"""One TLS context for the tests' own httpx clients (``verify=TLS``): without it each new client
loads the whole CA bundle, tens of ms, a cost the suite paid a few thousand times."""


CONSOLE_SCRIPT = Path(sys.executable).parent / "imagekit"
"""The ``imagekit`` script the package installs, run as a user runs it."""


def console_script(*args: str, cwd: Path, env: dict[str, str] | None = None, **popen: Any) -> subprocess.Popen:
    """``imagekit ARGS`` through the console script, in ``cwd``, importing this checkout (any worktree)
    with only the IMAGEKIT_* variables of ``env``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("IMAGEKIT_")}
    root = str(Path(__file__).resolve().parents[1])
    return subprocess.Popen([str(CONSOLE_SCRIPT), *args], cwd=cwd, text=True,
                            env={**clean, "PYTHONPATH": root, **(env or {})}, **popen)


def uninstalled(folder: Path, *modules: str) -> Path:
    """``folder``, holding packages that fail to import as missing ones do: first on PYTHONPATH, a
    process then runs as in a venv without them (an extra not installed)."""
    for module in modules:
        (folder / module).mkdir(parents=True, exist_ok=True)
        (folder / module / "__init__.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{module}'\", name={module!r})\n")
    return folder


def user_env(base_url: str, key: str, ledger: str, home: Path) -> dict[str, str]:
    """The environment of an ``imagekit`` command run by the user of ``key`` on ``base_url``, with
    that ledger and IMAGEKIT_HOME, importing this checkout."""
    return {**os.environ, "IMAGEKIT_BASE_URL": base_url, "IMAGEKIT_API_KEY": key, "IMAGEKIT_LEDGER_URL": ledger,
            "IMAGEKIT_HOME": str(home), "PYTHONPATH": str(ROOT)}


def sweep_process(path: Path, env: dict[str, str], *options: str) -> subprocess.Popen[str]:
    """``imagekit sweep run PATH --no-progress OPTIONS`` in a process of its own, its output piped."""
    return subprocess.Popen([sys.executable, "-m", "imagekit.cli", "sweep", "run", str(path), "--no-progress", *options],
                            cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def db_args(url: str | None) -> list[str]:
    """The ``--db`` option of the sandbox commands for a database URL (none for SQLite)."""
    return ["--db", url] if url else []

QUICK_RETRIES = imagekit.RetryPolicy(max_retries=2, backoff_base=0.001, backoff_cap=0.01)
"""The default policy's attempts (tests count them), without its waits."""
PATIENT_RETRIES = imagekit.RetryPolicy(max_retries=4, backoff_base=0.01, backoff_cap=0.05)
"""More attempts, still quick: workflows under injected faults must not lose a read to bad luck."""
EDIT_OUTCOMES = frozenset({"completed", "cancelled", "failed", "precancelled"})
"""States of an edit request id once its edit has stopped (or will be refused when it arrives)."""


def free_ports_below_the_ephemeral_range(count: int = 1) -> int:
    """The first of ``count`` ports in a row that bind now, below 32768 (Linux gives the ports of
    outgoing connections from 32768 up): no connection of another test can take one as its own
    port meanwhile, as it can a port ``free_port`` found, before the server meant for it binds it
    (a database's or mkdocs's start takes seconds). Picked at random, so two test processes seldom
    pick the same."""
    import random

    starts = list(range(20000, 32000 - count, count))
    random.shuffle(starts)
    for first in starts:
        try:
            with contextlib.ExitStack() as held:
                for port in range(first, first + count):
                    held.enter_context(socket.socket()).bind(("127.0.0.1", port))
            return first
        except OSError:
            continue
    raise AssertionError("no free ports in 20000-32000")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, for a server the test starts next."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def balance(who: Any, key: str | None = None) -> float:
    """A user's credits (default + daily + monthly) as the service reports them, through the
    interface alone: ``who`` is an imagekit client, an httpx client carrying the user's key, or a
    sandbox (served or embedded: anything with ``url``) with the user's ``key``."""
    if key is not None:
        with httpx.Client(base_url=who.url, headers={"X-Api-Key": key}, timeout=120, verify=TLS) as api:
            return balance(api)
    if isinstance(who, httpx.Client):
        me = who.get("/api/users/me").raise_for_status().json()
        return me["defaultCredit"] + me["dailyCredit"] + me["monthlyCredit"]
    me = who.me()
    return (me.default_credit or 0) + (me.daily_credit or 0) + (me.monthly_credit or 0)


def image_files(folder: Path) -> set[str]:
    """The files in a sandbox's image folder (``<data>/images``), a subject mask (``<id>.subject.png``)
    counted as the pixels' file it belongs to: every name is then one an image row owns, or a leftover."""
    return {path.name.replace(".subject.png", ".png") for path in folder.iterdir() if path.is_file()}


def assert_error(response: httpx.Response, status: int, name: str) -> dict:
    """The response is the spec's error body with this status and error name."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["success"] is False and body["code"] == status and body["data"] == name, body
    assert isinstance(body.get("message"), str) and body["message"]
    return body


def control(box: Any, method: str, path: str, body: Any = None) -> Any:
    """Call one of the sandbox's own controls (under /sandbox) and return its JSON."""
    response = httpx.request(method, f"{box.url}/sandbox/{path.lstrip('/')}", json=body, timeout=30, verify=TLS)
    response.raise_for_status()
    return response.json()


def wait_until(condition: Callable[[], Any], timeout: float = 30.0, what: str = "the condition") -> None:
    """Poll ``condition`` until it is true; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout:g}s"
        time.sleep(0.005)


def release_together(workers: list[subprocess.Popen], barrier: Path) -> None:
    """Wait until every worker has written ``ready-*`` into ``barrier``, then let them all go at once
    (the file ``go``); a worker that ends first fails the test with what it said."""
    deadline = time.monotonic() + 120
    while len(list(barrier.glob("ready-*"))) < len(workers):  # polling files: no event crosses processes
        assert all(worker.poll() is None for worker in workers), [worker.communicate() for worker in workers]
        assert time.monotonic() < deadline, "the workers never got ready"
        time.sleep(0.01)
    (barrier / "go").touch()


def edit_state(box: Any, user_id: int, request_id: str) -> str | None:
    """What an embedded sandbox records for an edit request id: running, completed, cancelled,
    failed, precancelled; None before it arrives."""
    from imagekit.sandbox.store.tables import RequestId

    with box.sandbox.db.read() as session:
        row = session.get(RequestId, (user_id, request_id))
        return row.state if row is not None else None


def wait_for_edit(box: Any, user_id: int, request_id: str, states: frozenset[str] | set[str]) -> None:
    """Poll until the sandbox's record of an edit request id is in one of ``states``."""
    wait_until(lambda: edit_state(box, user_id, request_id) in states, what=f"edit {request_id!r} in {set(states)}")


def wait_idle(box: Any, user_id: int) -> None:
    """Poll until nothing of the user runs in the sandbox (no generation or edit holds a slot)."""
    wait_until(lambda: box.sandbox.gate.running(user_id) == 0, what=f"user {user_id} idle")


def wait_quiet(box: Any, user_id: int, quiet: float = 0.3) -> None:
    """Poll until the embedded sandbox handles no request and runs nothing of the user, for ``quiet``
    seconds on end. After a client is killed, what it sent may still be on its way in (read from the
    socket, not yet holding a slot) while every slot is free; no request of the test may be pending."""
    tasks = box._server.server_state.tasks  # uvicorn's requests in progress
    since = time.monotonic()

    def quiet_long_enough() -> bool:
        nonlocal since
        if tasks or box.sandbox.gate.running(user_id):
            since = time.monotonic()
        return time.monotonic() - since >= quiet

    wait_until(quiet_long_enough, what=f"the sandbox quiet for user {user_id}")


def revealed_types(snippet: str, folder: Path) -> tuple[list[str], str]:
    """What mypy, with the project's settings, reveals for each ``reveal_type`` in ``snippet`` (written
    to ``folder``), and its whole output; fails the test if mypy finds an error.

    The snippets share ``make lint``'s mypy cache in the venv, taken one mypy at a time (the lock
    file beside it, which lint's mypy takes too): imagekit's and its dependencies' types are read
    once for lint and the snippets together (45 to 50 CPU-s in a new venv), not once by lint and
    again by the first snippet, and a new clone on a warm venv starts warm (2 CPU-s)."""
    import fcntl

    from mypy import api

    root = Path(__file__).resolve().parents[1]
    path = folder / "snippet.py"
    path.write_text(textwrap.dedent(snippet))
    cache = Path(sys.prefix) / "mypy-cache" if os.access(sys.prefix, os.W_OK) else root / ".mypy_cache"
    with cache.with_name(f"{cache.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        out, err, status = api.run(["--config-file", str(root / "pyproject.toml"), "--no-error-summary",
                                    "--cache-dir", str(cache), str(path)])
    assert status == 0 and "error:" not in out, out + err
    return re.findall(r'Revealed type is "(.+)"', out), out


def run_console(*args: str, cwd: Path, env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run the ``imagekit`` console script of this venv on this checkout in ``cwd``, as a person types
    it; ``env`` adds to the environment (``IMAGEKIT_HOME`` at least: nothing reaches the user's own)
    and the service and ledger variables it does not name are left out."""
    script = Path(sys.executable).with_name("imagekit")
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    for name in ("IMAGEKIT_BASE_URL", "IMAGEKIT_API_KEY", "IMAGEKIT_LEDGER_URL"):
        if name not in env:
            full.pop(name, None)
    return subprocess.run([str(script), *args], env=full, capture_output=True, text=True, timeout=timeout, cwd=cwd)
