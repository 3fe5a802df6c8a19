"""Every command and subcommand, given the mistakes people make (ports, numbers, paths, URLs, a file
where a folder goes, a folder of the user's own, a missing extra, an unreachable service), through
the real console script: the exit code the README gives (never 0), at most three lines, no traceback, and nothing
created or changed in the working folder or IMAGEKIT_HOME.

The cases run as processes side by side (each in a folder of its own), so the table costs a few
process starts of time, not one per case."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import console_script, uninstalled

ROOT = Path(__file__).resolve().parents[2]
USERS = {"mine/holiday.png": b"photo", "home/ledger.sqlite": b"the user's ledger", "AFILE": b"a file",
         "sweep.toml": b'[sweep]\nname = "kites"\n[axes]\nprompt = ["a kite"]\nstyle = [1]\n'}
"""What every case's folder holds before it runs, and must hold, unchanged, afterwards."""


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@dataclass
class Case:
    args: str
    says: str = "error: "
    env: dict[str, str] = field(default_factory=dict)
    code: int = 2
    """The exit code (the README's rule): 2 for the command line itself (a value, a missing or a
    lone option) and a sandbox folder or port; 1 for what the command met as it ran."""
    process: subprocess.Popen | None = None
    folder: Path | None = None

    def start(self, folder: Path, blocked: Path) -> None:
        """Run in ``folder`` (a file ``AFILE``, a folder ``mine`` of the user's, an IMAGEKIT_HOME
        ``home`` holding their ledger, a sweep file ``sweep.toml``)."""
        self.folder = folder
        for name, data in USERS.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        env = {"IMAGEKIT_HOME": str(folder / "home"), **self.env}
        if env.pop("BLOCK", None):  # a venv without the extra: importing the package fails as when it is missing
            env["PYTHONPATH"] = f"{blocked}{os.pathsep}{ROOT}"
        args = [arg.replace("HOME", str(folder / "home")) for arg in self.args.split()]
        self.process = console_script(*args, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def listing(folder: Path) -> dict[str, Path]:
    return {str(path.relative_to(folder)): path for path in folder.rglob("*")}


def cases(closed: int, busy: int) -> list[Case]:
    unreachable = {"IMAGEKIT_BASE_URL": f"http://127.0.0.1:{closed}", "IMAGEKIT_API_KEY": "iks_x"}
    pg = f"postgresql://me:secret@127.0.0.1:{closed}/db"
    return [
        Case("--versoin"), Case("sandbox serv --data D"), Case("demo --outt d"),
        Case("sandbox serve --data D --port 70000", "not a port"),
        Case("sandbox serve --data D --port -5", "not a port"),
        Case("sandbox serve --data D --port eighty", "not an integer"),
        Case("sandbox serve --data D --latency -1", "0 or more"),
        Case("sandbox serve --data D --workers 0"), Case("sandbox serve --data D --base-size 99999"),
        Case("sandbox serve --data D --render-cache-mb -1"),
        Case("sandbox serve --data D --db mysql://a@b/c", "not a database URL"),
        Case("sandbox serve --data AFILE", "is a file"), Case("sandbox serve --data mine", "not a sandbox's"),
        Case("sandbox init --data mine", "not a sandbox's"), Case("sandbox serve --data nowhere/D", "no folder"),
        Case(f"sandbox serve --data D --port {busy}", "cannot listen"),
        Case(f"sandbox init --data D --db {pg}"), Case("sandbox init --data AFILE", "is a file"),
        Case("sandbox user add --data D --email a@b.c", "holds no sandbox"),
        Case("sandbox user add --data mine --email a@b.c", "holds no sandbox"),
        Case("sandbox token --data D", "holds no sandbox"), Case("sandbox user add --data D"),
        Case("demo --out AFILE", "is a file"), Case("demo --out nowhere/out", "no folder"),
        Case("demo --out mine", "did not write", code=1), Case("demo --out HOME", "did not write", code=1),
        Case("demo --out out", "pip install 'imagekit[notebook]'", {"BLOCK": "1"}, code=1),
        Case("usage --days 0", "from 1 to 3660"), Case("usage --days -3", "from 1 to 3660"), Case("usage --days soon"),
        Case("usage --days 1e308", "from 1 to 3660"),
        Case("usage --by team --period fortnight", "invalid choice"), Case("usage --by team --period Week"),
        Case("usage --by team --period week --tz Mars/Olympus", "not a time zone"),
        Case("usage --by team --period week --tz ../../etc/passwd", "not a time zone"),
        Case("usage --period week", "give --by TAG too"), Case("usage --tz Europe/Berlin", "--tz sets the days"),
        Case("usage --by team --refresh", "reads the ledger alone"),
        Case("usage --ledger mysql://a@b/c", "postgresql://"), Case("usage --ledger /nonexistent/dir/l.sqlite", "no folder"),
        Case("usage --ledger mine", "is a folder"), Case("usage --ledger nope.sqlite", "no ledger at nope.sqlite"),
        Case("usage export spend.csv --ledger nope.sqlite", "no ledger at nope.sqlite"), Case("usage --out AFILE", "is a file"),
        Case("usage --ledger AFILE", "not a SQLite database"), Case("sweep status kites --journal AFILE", "not a SQLite database"),
        Case("usage --out mine", "did not write", unreachable, code=1),
        Case("usage", "Could not reach", unreachable, code=1), Case("usage --by team --ledger mysql://a@b/c"),
        Case("usage", "pip install 'imagekit[notebook]'", {"BLOCK": "1"}, code=1),
        Case("sweep status kites", "the sweep's journal"), Case("sweep status kites --journal mysql://a@b/c"),
        Case(f"sweep status kites --journal {pg}", "cannot open the journal", code=1),
        Case("sweep run nofile.toml", "no such sweep file"), Case("sweep run AFILE", code=1),
        Case("sweep run mine", "is a folder"), Case("sweep estimate mine", "is a folder"),
        Case("usage --by=", "tag name"), Case("usage --by=a/b", "tag name"),
        Case("sweep run sweep.toml", "Could not reach", unreachable, code=1),
        Case("sweep estimate sweep.toml", "Could not reach", unreachable, code=1),
        Case("usage export AFILE", "exists: add --overwrite", code=1), Case("usage export mine", "is a folder"),
        Case("usage export nowhere/spend.csv", "nowhere is not a folder that exists"), Case("usage export spend.csv --format xls"),
        Case("usage export spend.csv --format focus", "--format focus needs --credit-price: what one credit costs"),
        Case("usage export spend.json", "is named .json and --format csv writes csv: name it .csv"),
        Case("usage --by experiment --days 3", "--days sets the rate of a forecast: give --period with --by"),
        Case("usage --days 0.5", "give a number of days from 1 to 3660"),
        Case("usage export spend.csv --format focus --credit-price -1", "0 or more"),
        Case("usage export spend.csv --since yesterday", "not a date"),
        Case("usage export spend.csv --format focus --credit-price 0.002 --currency euro", "ISO 4217"),
        Case("usage export spend.csv --credit-price 0.5", "--credit-price is for --format focus"),
        Case("usage export spend.csv --format parquet", "is named .csv and --format parquet writes parquet"),
        Case("usage export spend.csv --since 2026-12-01 --until 2026-11-01", "is not after since"),
        Case("sweep status kites --journal nowhere.sqlite", "no journal at nowhere.sqlite"),
        Case("usage export spend.csv --ledger mine", "is a folder"),
        Case("usage", "IMAGEKIT_HOME=AFILE is a file", {"IMAGEKIT_HOME": "AFILE"}, code=1),
        Case("sweep run sweep.toml", "IMAGEKIT_HOME=AFILE/x is inside AFILE, a file", {"IMAGEKIT_HOME": "AFILE/x"},
             code=1),
    ]


@pytest.fixture(scope="module")
def blocked(tmp_path_factory) -> Path:
    """A folder that, first on the path, makes pandas look uninstalled (the `imagekit[notebook]` extra)."""
    return uninstalled(tmp_path_factory.mktemp("blocked"), "pandas")


@pytest.mark.slow(30)
def test_every_mistake_is_one_line_an_exit_code_and_leaves_nothing(tmp_path, blocked):
    with busy_port() as busy:
        table = cases(closed_port(), busy)
        for number, case in enumerate(table):
            case.start(tmp_path / f"case{number}", blocked)
        outcomes = [(case, *case.process.communicate(timeout=300)) for case in table if case.process]
    problems = []
    for case, output, _ in outcomes:
        assert case.folder is not None and case.process is not None
        code, lines = case.process.returncode, output.strip().splitlines()
        if code != case.code or not 1 <= len(lines) <= 3 or "Traceback" in output or case.says not in output:
            problems.append(f"imagekit {case.args}: exit {code}, {len(lines)} lines: {output.strip()[-400:]}")
        found = {path: (case.folder / path).read_bytes() for path in listing(case.folder)
                 if (case.folder / path).is_file()}
        if found != USERS or listing(case.folder).keys() != USERS.keys() | {"mine", "home"}:
            problems.append(f"imagekit {case.args}: left {sorted(set(found) - set(USERS))} "
                            f"(the user's files {'changed' if set(USERS) <= set(found) else 'gone'})")
    assert not problems, "\n".join(problems)
