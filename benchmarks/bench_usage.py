"""``imagekit usage``'s wall time on a small ledger, side by side with what it was (issue 33, item 3).

One IMAGEKIT_HOME holds the local sandbox's data and a ledger of a few creates (made once, by a child
process that connects and creates). Each row is the console command run as a person runs it (a new
Python process, in a new working folder), and is timed from start to exit:

- ``before``: the command of an earlier commit (``--before``, default the one before this work),
  unpacked by ``git archive``: it starts the embedded sandbox to ask for the balance, and writes
  ``./usage`` (CSV and PNG files, drawn with matplotlib) every time;
- ``ledger``: ``imagekit usage`` now: the ledger alone, printed (no sandbox, no files);
- ``ledger --out``: the same, writing the CSV and PNG files;
- ``--refresh``: asking the local sandbox (started for it), printed;
- ``imports alone``: ``python -c "import imagekit.cli, pandas"``, the floor of the ledger row.

The rows run in turn in each of ``--rounds`` rounds, and each row's ratio to ``before`` is taken
within its round (load from elsewhere on a shared machine drifts slowly, and hits both sides of a
ratio alike); the medians over the rounds are printed, of the wall time and of the CPU time the
command's processes used (less swayed by other load). Goal: within a second.

Measured on the shared 2-core machine beside two other agents' work (load average 4 to 16), 3 creates,
9 rounds, medians (wall; CPU within a few percent of it): before 7.10 s (the issue measured 6.7 s);
ledger 1.72 s (0.25 of before, side by side); ledger --out 3.47 s (0.48); --refresh 5.40 s (0.68);
imports alone 1.41 s (0.19). The report's own work is about 0.3 s: what keeps the ledger row above a
second here is importing pandas (with NumPy and pyarrow; about 1 s of CPU) and ``imagekit`` (httpx,
which loads its click/rich command line when they are installed, and pydantic: about 0.45 s).

Run: ``.venv/bin/python benchmarks/bench_usage.py [--rounds 5] [--creates 3] [--before REV]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "39217ccf287a834e69d7732aa552ea8fbf928f33"
"""The commit before the report read the ledger alone."""
CLI = ["-m", "imagekit.cli"]
ROWS = {"ledger": [*CLI, "usage"], "ledger --out": [*CLI, "usage", "--out", "report"],
        "--refresh": [*CLI, "usage", "--refresh"], "imports alone": ["-c", "import imagekit.cli, pandas"]}


def unpacked(rev: str, folder: Path) -> Path:
    """The package as it was at ``rev``, unpacked into ``folder`` (nothing in the repository changes)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "imagekit"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def cpu() -> float:
    """CPU seconds (user and system) of this process's children that have ended."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(args: list[str], source: Path, env: dict[str, str], scratch: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``python ARGS`` run from ``source``, in a new folder."""
    cwd = Path(tempfile.mkdtemp(dir=scratch))
    started, spent = time.perf_counter(), cpu()
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(source)})
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"imagekit {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return seconds, cpu() - spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--creates", type=int, default=3, help="creates in the ledger")
    parser.add_argument("--before", default=BEFORE, help="the commit whose command is the 'before' row")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-usage-") as tmp:
        scratch = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("IMAGEKIT_")}
        env["IMAGEKIT_HOME"] = str(scratch / "home")
        spend = ("import imagekit; ik = imagekit.connect(); style = ik.styles()[0]\n"
                 f"for n in range({args.creates}): ik.create(f'a fox {{n}}', style=style)\n")
        subprocess.run([sys.executable, "-c", spend], check=True, env={**env, "PYTHONPATH": str(ROOT)})
        before = unpacked(args.before, scratch / "before")
        rows: dict[str, list[tuple[float, float]]] = {"before": [], **{name: [] for name in ROWS}}
        for number in range(args.rounds):
            rows["before"].append(timed([*CLI, "usage"], before, env, scratch))
            for name, command in ROWS.items():
                rows[name].append(timed(command, ROOT, env, scratch))
            print(f"round {number + 1}: " + ", ".join(f"{name} {times[-1][0]:.2f} s" for name, times in rows.items()),
                  flush=True)
    print(f"\n{'row':14} {'wall':>7} {'to before':>10} {'cpu':>7} {'to before':>10}   wall each round")
    for name, times in rows.items():
        wall, used = (statistics.median(t[i] for t in times) for i in (0, 1))
        ratio = [statistics.median(t[i] / b[i] for t, b in zip(times, rows["before"], strict=True)) for i in (0, 1)]
        print(f"{name:14} {wall:6.2f}s {ratio[0]:10.2f} {used:6.2f}s {ratio[1]:10.2f}   "
              f"{' '.join(f'{t[0]:.2f}' for t in times)}")
    print(f"\n{args.creates} creates in the ledger; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
