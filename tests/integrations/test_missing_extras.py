"""Without the notebook extra (pandas, ipywidgets, anywidget missing), every path of the Python API
that needs it says so in one line naming ``imagekit[notebook]``: a ConfigError, never a raw
ModuleNotFoundError from deep inside."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

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
    blocked = tmp_path / "blocked"
    for module in ("pandas", "ipywidgets", "anywidget"):
        (blocked / module).mkdir(parents=True)
        (blocked / module / "__init__.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{module}'\", name={module!r})\n")
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT)], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": f"{blocked}:{ROOT}", "IMAGEKIT_HOME": str(tmp_path / "home"),
                               "PATH": "/usr/bin:/bin"}, timeout=120)
    said = dict(line.split(" | ", 1) for line in done.stdout.splitlines())
    assert set(said) == {"ledger.to_pandas", "ledger.reconciliation", "batch.to_pandas", "log_usage",
                         "imagekit.reports", "widgets"}, done.stdout + done.stderr
    for name, answer in said.items():
        assert answer.startswith("this needs ") and answer.endswith("which is not installed: pip install "
                                                                   "'imagekit[notebook]'"), (name, answer)
