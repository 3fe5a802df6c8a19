"""A folder we own (imagekit.ownership), on a local disk and through an fsspec URL alike: we write
only into an empty folder or one holding our manifest, replace only what it lists, leave what a
person put beside it, and a run that fails removes what it wrote (and the folder it made)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import fsspec
import pytest

from imagekit.ownership import MANIFEST, FolderInUseError, NotOursError, owned, undone_on_failure


@pytest.fixture(params=["local", "memory"])
def where(request, tmp_path):
    """A folder that does not exist yet, and an fsspec file system to look into it with."""
    if request.param == "local":
        return str(tmp_path / "out"), fsspec.filesystem("file"), str(tmp_path / "out")
    prefix = f"/owned-{uuid.uuid4().hex}"
    return f"memory://{prefix}", fsspec.filesystem("memory"), prefix


def names(fs, root: str) -> set[str]:
    return {path.rstrip("/").rsplit("/", 1)[-1] for path in fs.ls(root, detail=False)} if fs.exists(root) else set()


def write(folder, name: str, data: bytes = b"ours") -> None:
    with folder.writer(name) as sink:
        sink.write(data)


def test_a_second_run_replaces_only_what_the_first_wrote(where):
    location, fs, root = where
    with owned(location, "a test") as folder:
        write(folder, "a.png")
        write(folder, "b.png")
    fs.pipe(f"{root}/notes.txt", b"mine")  # the user's, beside ours
    with owned(location, "a test") as folder:
        assert sorted(folder.earlier) == ["a.png", "b.png"]
        write(folder, "c.png")
    assert names(fs, root) == {"c.png", "notes.txt", MANIFEST}
    with pytest.raises(NotOursError, match="notes.txt exists and a test did not write it"), \
            owned(location, "a test") as folder:
        write(folder, "notes.txt")
    # Undone: in a local folder the earlier run's c.png, set aside, is back (an object store's was
    # removed when the run began: it has no cheap move).
    kept = set() if "://" in str(location) else {"c.png"}
    assert fs.cat(f"{root}/notes.txt") == b"mine" and names(fs, root) == {"notes.txt", MANIFEST, *kept}
    with owned(location, "a test") as folder:  # still ours: a failed run keeps the mark
        assert folder.earlier == sorted(kept)
        write(folder, "d.png")
    with pytest.raises(NotOursError, match="pass overwrite=True"):
        owned(location, "a test", replace=False).__enter__()
    assert names(fs, root) == {"d.png", "notes.txt", MANIFEST}


def test_a_folder_of_someone_elses_is_refused_and_left_alone(where):
    location, fs, root = where
    fs.makedirs(f"{root}/images", exist_ok=True)
    fs.pipe(f"{root}/images/holiday.png", b"photo")
    fs.pipe(f"{root}/index.html", b"<p>mine</p>")
    with pytest.raises(NotOursError, match="did not write .*images, index.html.*empty or new folder"):
        owned(location, "a test").__enter__()
    assert fs.cat(f"{root}/images/holiday.png") == b"photo" and names(fs, root) == {"images", "index.html"}


def test_a_folder_another_command_wrote_is_refused_and_left_alone(where):
    """The demo's folder is not the usage report's, nor an export's: each replaces only its own."""
    location, fs, root = where
    with owned(location, "imagekit demo") as folder:
        write(folder, "index.html")
    for other in ("imagekit usage", "an export"):
        with pytest.raises(NotOursError, match="holds what imagekit demo wrote, not " + other):
            owned(location, other).__enter__()
    assert fs.cat(f"{root}/index.html") == b"ours" and names(fs, root) == {"index.html", MANIFEST}
    with owned(location, "imagekit demo") as folder:  # the demo itself goes on replacing its own
        assert folder.earlier == ["index.html"]


def test_a_failed_run_leaves_nothing_behind(where):
    location, fs, root = where
    with pytest.raises(KeyboardInterrupt), owned(location, "a test", adopt=["usage-*"]) as folder:
        write(folder, "a.png")
        fs.pipe(f"{root}/usage-by-day.csv", b"written by a library call")
        raise KeyboardInterrupt  # Ctrl+C, or a closed pipe
    assert not fs.exists(f"{root}/a.png") and not fs.exists(f"{root}/usage-by-day.csv")
    assert not fs.exists(f"{root}/{MANIFEST}")


def test_a_failed_setup_removes_only_what_it_made(tmp_path):
    data = tmp_path / "data"
    with pytest.raises(OSError), undone_on_failure(data):
        data.mkdir()
        (data / "sandbox.db").write_bytes(b"half made")
        raise OSError("cannot listen")
    assert not data.exists()
    data.mkdir()
    (data / "keep.txt").write_text("mine")
    with pytest.raises(OSError), undone_on_failure(data):
        (data / "serve.lock").write_text("")
        raise OSError("cannot listen")
    assert [path.name for path in data.iterdir()] == ["keep.txt"]


def test_a_file_where_a_folder_goes_is_refused(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(NotOursError, match="is a file, not a folder"):
        owned(tmp_path / "afile", "a test").__enter__()
    assert (tmp_path / "afile").read_text() == "x"


def test_an_interrupted_run_that_rewrote_the_earlier_runs_names_puts_them_back(where):
    """The demo run twice, Ctrl+C in the second: what it wrote under the first run's names (a folder
    of images too) goes, and the first run's results come back exactly as they were."""
    location, fs, root = where
    with owned(location, "a test") as folder:
        write(folder, "index.html", b"first")
        folder.claim("images")
        fs.makedirs(f"{root}/images", exist_ok=True)
        fs.pipe(f"{root}/images/0.png", b"first")
    with pytest.raises(KeyboardInterrupt), owned(location, "a test") as folder:
        write(folder, "index.html", b"second")
        folder.claim("images")
        fs.makedirs(f"{root}/images", exist_ok=True)
        fs.pipe(f"{root}/images/1.png", b"second")
        raise KeyboardInterrupt
    local = "://" not in str(location)  # an object store's earlier results went when the run began
    assert names(fs, root) == ({"index.html", "images", MANIFEST} if local else {MANIFEST})
    if local:
        assert fs.cat(f"{root}/index.html") == b"first" and names(fs, f"{root}/images") == {"0.png"}


@pytest.mark.parametrize("moved", [1, 2, 3])
def test_ctrl_c_while_the_earlier_results_are_set_aside_puts_every_one_back(tmp_path, monkeypatch, moved):
    """Ctrl+C lands right after the ``moved``-th of three earlier results was set aside (before the
    run could note it): all three are back, byte for byte, and the manifest lists them."""
    import json
    import os

    from imagekit import ownership

    location = tmp_path / "out"
    with owned(location, "a test") as folder:
        for name in ("a.csv", "b.csv", "c.csv"):
            write(folder, name, name.encode())
    replace, calls = os.replace, []

    def interrupted(source, target):
        replace(source, target)
        calls.append(target)
        if len(calls) == moved:
            raise KeyboardInterrupt

    monkeypatch.setattr(ownership.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt), owned(location, "a test"):
        pass
    monkeypatch.setattr(ownership.os, "replace", replace)
    assert {p.name: p.read_bytes() for p in location.iterdir() if p.name != MANIFEST} == {
        "a.csv": b"a.csv", "b.csv": b"b.csv", "c.csv": b"c.csv"}
    assert sorted(json.loads((location / MANIFEST).read_text())["names"]) == ["a.csv", "b.csv", "c.csv"]


def project(root) -> dict[str, bytes]:
    """A person's project: what a planted manifest names."""
    files = {"src/main.py": b"print('mine')", "thesis.tex": b"\\documentclass{article}", "README.md": b"# mine"}
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return files


def contents(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("token", [None, "0" * 32])
def test_a_planted_manifest_claims_nothing(tmp_path, token):
    """A manifest listing the user's files (planted, or committed to their repository; with or without
    a token) is refused in one line and every file stays, the manifest included."""
    root = tmp_path / "project"
    files = project(root)
    planted = {"writer": "a test", "names": ["src", "thesis.tex", "README.md"]} | ({"token": token} if token else {})
    (root / MANIFEST).write_text(json.dumps(planted))
    before = contents(root)
    with pytest.raises(NotOursError) as refused:
        owned(root, "a test").__enter__()
    assert "\n" not in str(refused.value) and "was not written there by imagekit" in str(refused.value)
    assert "name an empty or new folder" in str(refused.value)
    assert contents(root) == before and all(before[name] == data for name, data in files.items())


def test_a_copied_folder_with_its_manifest_is_not_ours(tmp_path):
    """A project folder copied (cp -r) with the manifest a run wrote in it: the copy is another folder,
    refused; the original stays ours."""
    original = tmp_path / "project"
    with owned(original, "a test") as folder:
        write(folder, "result.csv", b"ours")
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    (copy / "result.csv").write_bytes(b"mine now")
    project(copy)
    before = contents(copy)
    with pytest.raises(NotOursError, match="was not written there by imagekit"):
        owned(copy, "a test").__enter__()
    assert contents(copy) == before
    with owned(original, "a test") as folder:  # the original is still ours
        assert folder.earlier == ["result.csv"]


def test_a_file_the_user_edited_since_is_kept_and_said(where, caplog):
    """A second run replaces the first's files still as written, keeps one the user changed (and
    says so), and refuses to write over it in one line; once moved, the run goes on."""
    location, fs, root = where
    with owned(location, "a test") as folder:
        write(folder, "a.csv", b"first a")
        write(folder, "b.csv", b"first b")
    fs.pipe(f"{root}/b.csv", b"the user's edit")
    with owned(location, "a test") as folder:
        write(folder, "a.csv", b"second a")
    assert fs.cat(f"{root}/b.csv") == b"the user's edit" and fs.cat(f"{root}/a.csv") == b"second a"
    assert any("b.csv changed since a test wrote it: kept" in record.getMessage() for record in caplog.records)
    with owned(location, "a test") as folder:  # b.csv is the user's now: no longer listed, never removed
        assert folder.earlier == ["a.csv"]
        write(folder, "c.csv", b"third")
    fs.pipe(f"{root}/c.csv", b"edited again")
    with pytest.raises(NotOursError, match=r"c.csv changed since a test wrote it, so it was kept: move it"), \
            owned(location, "a test") as folder:
        write(folder, "c.csv", b"fourth")
    assert fs.cat(f"{root}/c.csv") == b"edited again" and fs.cat(f"{root}/b.csv") == b"the user's edit"


def test_a_changed_file_a_library_call_would_write_again_is_refused_before_the_block_runs(where):
    """``imagekit usage --out`` and the demo let the report write its usage-*.csv files and record them
    after (``adopt``): an edited one was said to be kept, then written over. Now the run stops first,
    and everything stays as it was."""
    location, fs, root = where
    with owned(location, "a test", adopt=["usage-*"]) as folder:
        fs.pipe(f"{root}/usage-by-day.csv", b"the report's")
        fs.pipe(f"{root}/usage-by-style.csv", b"the report's")
        write(folder, "index.html", b"first page")
    fs.pipe(f"{root}/usage-by-day.csv", b"the report's, and the user's note")
    ran = []
    with pytest.raises(NotOursError, match=r"usage-by-day.csv changed since a test wrote it, so it was kept: move it"), \
            owned(location, "a test", adopt=["usage-*"]):
        ran.append(True)
    assert not ran and fs.cat(f"{root}/usage-by-day.csv") == b"the report's, and the user's note"
    assert fs.cat(f"{root}/usage-by-style.csv") == b"the report's" and fs.cat(f"{root}/index.html") == b"first page"


def test_the_third_run_replaces_the_second_as_the_second_replaced_the_first(where):
    """The second run recorded only names the first had not used (files in a folder it writes into,
    files a library call wrote): the third found the second's unrecorded and refused the folder
    (make demo, a third time: 'dataset holds an earlier result of an export')."""
    location, fs, root = where
    for run in range(3):
        with owned(location, "a test", adopt=["usage-*"]) as folder:
            # the earlier run's files are its own, so they are out of the way (set aside, or removed)
            assert not fs.exists(f"{root}/images/0000.png") and not fs.exists(f"{root}/usage-by-day.csv"), run
            folder.claim("images")
            fs.makedirs(f"{root}/images", exist_ok=True)
            fs.pipe(f"{root}/images/0000.png", f"run {run}".encode())
            fs.pipe(f"{root}/usage-by-day.csv", f"run {run}".encode())
            write(folder, "index.html", f"run {run}".encode())
        assert fs.cat(f"{root}/images/0000.png") == fs.cat(f"{root}/usage-by-day.csv") == f"run {run}".encode()
    assert names(fs, root) == {"images", "usage-by-day.csv", "index.html", MANIFEST}


def test_a_folder_we_wrote_into_is_ours_file_by_file(where):
    """A run that wrote images/ owns the files it wrote there, not the folder: a user's file put in
    it stays through the next run, a failed one, and a successful one."""
    location, fs, root = where

    def run(fail: bool = False) -> None:
        with owned(location, "a test") as folder:
            folder.claim("images")
            fs.makedirs(f"{root}/images", exist_ok=True)
            fs.pipe(f"{root}/images/0.png", b"ours")
            if fail:
                raise KeyboardInterrupt

    run()
    fs.pipe(f"{root}/images/holiday.png", b"photo")
    with pytest.raises(KeyboardInterrupt):
        run(fail=True)
    kept = {"0.png"} if "://" not in str(location) else set()  # an object store's went when the run began
    assert names(fs, f"{root}/images") == {*kept, "holiday.png"}
    run()
    assert names(fs, f"{root}/images") == {"0.png", "holiday.png"} and fs.cat(f"{root}/images/holiday.png") == b"photo"
    listed = json.loads(fs.cat(f"{root}/{MANIFEST}"))
    assert listed["names"] == ["images"]


HOLDER = """
import sys, time
from imagekit.ownership import owned
with owned(sys.argv[1], "a test") as folder:
    with folder.writer("a.csv") as sink:
        sink.write(b"first")
    print("holding", flush=True)
    sys.stdin.readline()
"""


def test_a_folder_in_use_by_another_process_is_refused_in_one_line(tmp_path):
    """While one process writes a folder, another is refused (naming that process) and changes
    nothing; once the first ends the folder is free, and no lock file is left behind."""
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(FolderInUseError) as refused:
            owned(out, "a test").__enter__()
        assert str(refused.value) == (f"{out} is being written by another imagekit run (process {holder.pid}): "
                                      "wait for it to end, or name another folder")
        assert (out / "a.csv").read_bytes() == b"first"
    finally:
        holder.communicate("\n", timeout=60)
    assert holder.returncode == 0
    with owned(out, "a test") as folder:
        assert folder.earlier == ["a.csv"]
    assert not list((Path(os.environ["IMAGEKIT_HOME"]) / "owned").glob("*.lock"))
