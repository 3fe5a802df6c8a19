"""A read-only IMAGEKIT_HOME (a read-only mount: even root cannot write there): ``connect()``, the
ledger, ``usage`` and the demo say so in one line before anything is sent, and a client that keeps
no ledger still works. Before, a create was sent and paid for, nothing was recorded, and each
request printed a traceback (``usage``: an OperationalError)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import imagekit
from imagekit.cli import main
from imagekit.errors import ConfigError
from imagekit.ledger import Entry, Ledger, Status
from tests.disk import mount_tmpfs, unmount
from tests.helpers import balance
from tests.utils.users import make_user

READ_ONLY = "cannot be written: it is on a read-only file system"


@pytest.fixture
def read_only_home(tmp_path, monkeypatch) -> Iterator[Path]:
    """IMAGEKIT_HOME on a tmpfs holding a ledger with one entry, then mounted read-only."""
    home = tmp_path / "home"
    mount_tmpfs(home, "16m")
    try:
        record = ("from imagekit.ledger import Entry, Ledger, Source, Status; import sys; Ledger(sys.argv[1], account='a')"
                  ".record(Entry(operation='create', status=Status.ANSWERED, credits=2.0, source=Source.PRICED, tags={}))")
        subprocess.run([sys.executable, "-c", record, str(home / "ledger.sqlite")], check=True, timeout=120)
        subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
        monkeypatch.setenv("IMAGEKIT_HOME", str(home))
        for name in ("IMAGEKIT_BASE_URL", "IMAGEKIT_API_KEY", "IMAGEKIT_LEDGER_URL"):
            monkeypatch.delenv(name, raising=False)
        yield home
    finally:
        unmount(home)


@pytest.mark.slow(10)
def test_connect_says_in_one_line_that_the_home_cannot_keep_its_sandbox_or_ledger(read_only_home, sandbox,
                                                                                 monkeypatch):
    with pytest.raises(ConfigError) as embedded:
        imagekit.connect()
    assert str(embedded.value) == (f"IMAGEKIT_HOME={read_only_home} {READ_ONLY}; imagekit keeps its local sandbox "
                                   "(no IMAGEKIT_BASE_URL is set) there: set IMAGEKIT_HOME to a folder you can write")

    _, key = make_user(sandbox)
    monkeypatch.setenv("IMAGEKIT_BASE_URL", sandbox.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    credits = balance(sandbox, key)
    with pytest.raises(ConfigError) as served:
        imagekit.connect()
    assert str(served.value) == (f"IMAGEKIT_HOME={read_only_home} {READ_ONLY}; imagekit keeps its ledger "
                                 "(ledger=False in Python keeps none) there: set IMAGEKIT_HOME to a folder you can write")
    assert balance(sandbox, key) == credits  # nothing sent, nothing paid

    with imagekit.connect(ledger=False) as ik:  # what it can do without keeping anything: it does
        made = ik.images.create(prompt="a lighthouse", style=ik.styles()[0].style_id)
    assert made.images and balance(sandbox, key) < credits


def test_usage_and_the_demo_say_so_in_one_line(read_only_home, tmp_path, capsys):
    for command in (["usage"], ["demo", "--out", str(tmp_path / "out")]):
        code = main(command)
        err = capsys.readouterr().err
        assert code == 1 and len(err.splitlines()) == 1 and str(read_only_home) in err, (command, err)
        assert "Traceback" not in err and "OperationalError" not in err
    assert not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match=rf"{read_only_home / 'other.sqlite'} cannot be written: {read_only_home} is "
                                          r"read-only to this process"):
        Ledger(read_only_home / "other.sqlite").record(Entry(operation="create", status=Status.ANSWERED, tags={}))
