"""A batch journal belongs to the account it was written against: another sandbox or another user
is refused (saying which is which) before anything is sent; the same account after a restart on a
new port resumes."""

from __future__ import annotations

import pytest

import imagekit
from imagekit.sandbox import EmbeddedSandbox
from tests.helpers import balance
from tests.utils.service import server_images

ROWS = ["a red robot", "a black cat"]


def run(ik: imagekit.Client, journal) -> imagekit.Batch:
    return ik.batch(ROWS, style=ik.styles()[0]).run(progress=False, journal=journal)


def test_a_journal_from_another_sandbox_is_refused_uncharged(tmp_path):
    journal = tmp_path / "grid.sqlite"
    with EmbeddedSandbox(tmp_path / "first", base_size=128) as first, \
            imagekit.Client(first.url, first.api_key, ledger=False) as ik:
        assert run(ik, journal).spent > 0
    with EmbeddedSandbox(tmp_path / "second", base_size=128) as second, \
            imagekit.Client(second.url, second.api_key, ledger=False) as ik:
        before = balance(ik)
        with pytest.raises(imagekit.JournalMismatchError) as info:
            run(ik, journal)
        assert balance(ik) == before and server_images(second, ik.me().user_id) == []
    text = str(info.value)
    assert first.url in text and second.url in text and "another journal file" in text


def test_another_user_of_the_same_sandbox_is_refused(connect, box, tmp_path):
    journal = tmp_path / "grid.sqlite"
    run(connect(), journal)
    other = connect()
    with pytest.raises(imagekit.JournalMismatchError, match=f"user {other.user_id} "):
        run(other, journal)
    assert server_images(box, other.user_id) == []


def test_the_same_account_after_a_restart_on_a_new_port_resumes(tmp_path):
    journal, data = tmp_path / "grid.sqlite", tmp_path / "sandbox"
    for session in range(2):
        with EmbeddedSandbox(data, base_size=128) as box, imagekit.Client(box.url, box.api_key, ledger=False) as ik:
            batch = run(ik, journal)
            assert set(batch.to_pandas()["row_status"]) == {"done"}
            assert batch.spent == (0 if session else 2 * ik.styles()[0].credit_cost)
            assert len(server_images(box, ik.me().user_id)) == 2


def test_a_journal_or_ledger_location_of_another_kind_is_refused_and_nothing_made(connect, tmp_path, monkeypatch):
    """A SQLite file whose folder exists or a postgresql:// URL; anything else is one ConfigError from
    the toolkit itself (not only the command line), before a folder or a file is made."""
    ik = connect()
    before = sorted(tmp_path.rglob("*"))
    refused = {"mysql://a@b/c": "postgresql://", str(tmp_path / "nowhere" / "j.sqlite"): "no folder",
               str(tmp_path): "is a folder"}
    for location, says in refused.items():
        with pytest.raises(imagekit.ConfigError, match=says):
            ik.batch(ROWS, style=1).run(progress=False, out_dir=tmp_path / "out", journal=location)
        with pytest.raises(imagekit.ConfigError, match=says):
            imagekit.Ledger(location)
    monkeypatch.setenv("IMAGEKIT_LEDGER_URL", "mysql://a@b/c")
    with pytest.raises(imagekit.ConfigError, match="postgresql://"):
        imagekit.Ledger()
    assert sorted(tmp_path.rglob("*")) == before
