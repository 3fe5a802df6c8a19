"""The mistakes of running a sweep on an engine (a wrong address, the engine's extra not installed):
one line, exit 1, nothing sent, nothing made. Refused before any cluster is reached, so no cluster is
started for them."""

from __future__ import annotations

import subprocess
import sys

import pytest

import imagekit
from tests.engines.runs import ROOT, sweep_file, sweep_run, sweep_run_env
from tests.helpers import balance
from tests.utils.service import public_style
from tests.utils.users import make_user


@pytest.mark.slow(20)
def test_a_wrong_address_or_a_missing_extra_is_one_line_and_nothing_is_made(_boxes, tmp_path):
    # Refused before anything is sent: one face of the sandbox is enough.
    box = _boxes("extended")
    ik = imagekit.Client(box.url, make_user(box, "pro")[1], ledger=str(tmp_path / "ledger.sqlite"))
    before = balance(ik)
    path = sweep_file(tmp_path, public_style(box), 2)
    refused = sweep_run(path, ik, tmp_path / "home", "--engine", "dask", "--address", "tcp://127.0.0.1:1")
    out, err = refused.communicate(timeout=120)
    assert (refused.returncode, out) == (1, "")
    assert err == "error: no Dask scheduler answered at 'tcp://127.0.0.1:1' within 10 s: check the address " \
                  "(tcp://host:8786) and that the scheduler runs\n"
    on_ray = sweep_run(path, ik, tmp_path / "home", "--engine", "ray", "--address", "127.0.0.1:1")
    assert on_ray.communicate(timeout=120)[1] == "error: no Ray cluster answers at '127.0.0.1:1' within 10 s: check " \
                                                 "the address (host:6379, or ray://host:10001) and that the cluster runs\n"
    unknown = sweep_run(path, ik, tmp_path / "home", "--engine", "dask", "--address", "nonsense://host")
    assert unknown.communicate(timeout=120)[1] == "error: address='nonsense://host': a Dask scheduler's address " \
                                                  "looks like tcp://host:8786 (schemes: inproc, tcp, tls, ucx, ws, wss)\n"
    without = subprocess.run([sys.executable, "-c", "import sys; sys.modules['distributed'] = None\n"
                              "from imagekit.cli import main; sys.exit(main())", "sweep", "run", str(path),
                              "--engine", "dask", "--address", "tcp://127.0.0.1:1"],
                             cwd=ROOT, env=sweep_run_env(ik, tmp_path / "home"), text=True, capture_output=True)
    assert (without.returncode, without.stderr) == (1, "error: this needs distributed, which is not installed: "
                                                       "pip install 'imagekit[dask]'\n")
    assert not (tmp_path / "out").exists() and balance(ik) == before
    ik.close()
