"""A plain client's request loads neither the workflows nor pandas (the ledger's layers are
import-linter contracts in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys

from tests.utils.users import make_user


def test_a_plain_client_loads_neither_the_workflows_nor_pandas(sandbox, tmp_path):
    _, key = make_user(sandbox)
    script = (f"import sys, imagekit\n"
              f"ik = imagekit.Client({sandbox.url!r}, {key!r}, ledger={str(tmp_path / 'ledger.sqlite')!r})\n"
              "ik.me(); ik.usage()\n"
              "assert ik.ledger.entries(readings=True), 'the ledger recorded the balance'\n"
              "print(sorted(m for m in sys.modules if m.startswith('imagekit.workflows') or m.split('.')[0] == 'pandas'))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
