"""Without the notebook extra (pandas, ipywidgets, anywidget missing), every path of the Python API
that needs it says so in one line naming ``imagekit[notebook]``: a ConfigError, never a raw
ModuleNotFoundError from deep inside; and what does not need it (a sweep run from the terminal) runs
without it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers import balance, console_script, uninstalled
from tests.utils.users import make_user

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import imagekit
from imagekit.errors import ConfigError
from imagekit.ledger import Ledger

client = imagekit.Client("http://127.0.0.1:9", "iks_x", ledger=False)
ledger = Ledger("ledger.sqlite")
paths = {
    "ledger.to_pandas": ledger.to_pandas,
    "ledger.reconciliation": lambda: ledger.reconciliation(),
    "batch.to_pandas": lambda: client.batch(["a kite"], style=1).to_pandas(),
    "log_usage": lambda: __import__("imagekit.integrations.mlflow", fromlist=["log_usage"]).log_usage(client),
    "imagekit.reports": lambda: __import__("imagekit.reports"),
    "widgets": lambda: __import__("imagekit.widgets", fromlist=["PromptStudio"]).PromptStudio,
}
for name, call in paths.items():
    try:
        call()
    except ConfigError as exc:
        print(name, "|", exc)
    except BaseException as exc:
        print(name, "| RAW", type(exc).__name__, exc)
    else:
        print(name, "| ran")
"""


def test_each_path_that_needs_the_notebook_extra_names_it(tmp_path):
    blocked = uninstalled(tmp_path / "blocked", "pandas", "ipywidgets", "anywidget")
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT)], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": f"{blocked}:{ROOT}", "IMAGEKIT_HOME": str(tmp_path / "home"),
                               "PATH": "/usr/bin:/bin"}, timeout=120)
    said = dict(line.split(" | ", 1) for line in done.stdout.splitlines())
    assert set(said) == {"ledger.to_pandas", "ledger.reconciliation", "batch.to_pandas", "log_usage",
                         "imagekit.reports", "widgets"}, done.stdout + done.stderr
    for name, answer in said.items():
        assert answer.startswith("this needs ") and answer.endswith("which is not installed: pip install "
                                                                   "'imagekit[notebook]'"), (name, answer)


def test_a_sweep_runs_from_the_terminal_without_the_notebook_extra(box, tmp_path):
    """``pip install imagekit[sandbox]`` and a sweep file: the run, its summary line (the credits summed
    from its journal) and its rerun need neither pandas nor ipywidgets. The summary had needed pandas,
    and told a user who had just paid for the run to install it."""
    _, key = make_user(box, "pro")
    client = __import__("imagekit").Client(box.url, key, ledger=False)
    style = client.styles()[0]
    (tmp_path / "kites.toml").write_text(f'[axes]\nprompt = ["a kite", "a boat"]\n[defaults]\nstyle = {style.style_id}\n')
    before = balance(client)
    env = {"IMAGEKIT_BASE_URL": box.url, "IMAGEKIT_API_KEY": key, "IMAGEKIT_HOME": str(tmp_path / "home"),
           "PYTHONPATH": f"{uninstalled(tmp_path / 'blocked', 'pandas', 'ipywidgets')}:{ROOT}"}
    for paid in (2 * style.credit_cost, 0):
        run = console_script("sweep", "run", "kites.toml", cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        printed = run.communicate(timeout=120)[0]
        assert run.returncode == 0, printed
        spent = f"{2 * style.credit_cost:g} credits spent" + (f" in all, {paid:g} by this run" if not paid else "")
        assert f"sweep kites: 2 of 2 rows done, {spent}" in printed, printed
    assert before - balance(client) == 2 * style.credit_cost
