"""Where a data folder is being served, for another process of the same user to join.

The process serving a folder's embedded sandbox writes ``embedded.json`` into it (readable by the
folder's owner alone: it holds the demo user's key for this local sandbox) and removes it when it
stops. Another process that finds the folder claimed joins that sandbox instead of starting one of
its own, so one user on one folder is one service, one history and one sweep. The record is only
believed while the process it names still holds the folder and the sandbox answers its key.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

RECORD_NAME = "embedded.json"


@dataclass(frozen=True)
class Served:
    """A running embedded sandbox: its address, its demo user's key, its folder's identity, its face."""

    url: str
    api_key: str
    identity: str
    spec_exact: bool
    pid: int


def write_record(data_dir: Path, served: Served) -> None:
    """Record ``served`` in the folder, whole or not at all, readable by the owner alone."""
    path = Path(data_dir) / RECORD_NAME
    partial = path.with_name(f".{RECORD_NAME}.{os.getpid()}")
    handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(handle, "w") as out:
        json.dump(asdict(served), out)
    os.replace(partial, path)


def read_record(data_dir: Path) -> Served | None:
    """The record in ``data_dir`` as written, whether or not its process still serves the folder."""
    return _read(Path(data_dir) / RECORD_NAME)


def remove_record(data_dir: Path) -> None:
    """Remove this process's record (another process's is left alone)."""
    found = read_record(data_dir)
    if found is not None and found.pid == os.getpid():
        (Path(data_dir) / RECORD_NAME).unlink(missing_ok=True)


def running(data_dir: Path) -> Served | None:
    """The sandbox another live process serves from ``data_dir``, if it records one and answers."""
    found = read_record(data_dir)
    if found is None or _holder(Path(data_dir)) != found.pid:
        return None
    try:
        answer = httpx.get(f"{found.url}/api/users/me", headers={"X-Api-Key": found.api_key}, timeout=5)
    except httpx.HTTPError:
        return None
    return found if answer.status_code == 200 else None


def _read(path: Path) -> Served | None:
    try:
        fields = json.loads(path.read_text())
        served = Served(**fields)
    except (OSError, ValueError, TypeError):
        return None
    types = {"url": str, "api_key": str, "identity": str, "spec_exact": bool, "pid": int}
    if not all(isinstance(getattr(served, name), kind) for name, kind in types.items()):
        return None
    if not served.url.startswith(("http://127.0.0.1:", "http://[::1]:", "http://localhost:")):
        return None  # a record that sends our key anywhere but this machine is not ours
    return served


def _holder(data_dir: Path) -> int | None:
    """The pid ``serve.pid`` names (written by the process that claimed the folder)."""
    try:
        return int((data_dir / "serve.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def claimed_at(data_dir: Path) -> float | None:
    """When a process claimed ``data_dir`` to serve it (its ``serve.pid`` written), if one did."""
    try:
        return (Path(data_dir) / "serve.pid").stat().st_mtime
    except OSError:
        return None
