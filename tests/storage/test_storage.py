"""A batch's images in object storage: ``out_dir`` as an fsspec URL, against moto's S3 server on
loopback. What was stored is read back through s3fs and Pillow, never through the toolkit."""

from __future__ import annotations

import io
import json
import sqlite3
import uuid
from contextlib import closing

import pytest
import s3fs
from PIL import Image

import imagekit
from imagekit.ownership import MANIFEST
from imagekit.workflows import grid
from imagekit.workflows.batches.journals.local import LocalJournal


@pytest.fixture
def bucket(s3) -> tuple[s3fs.S3FileSystem, str]:
    """A fresh bucket name, and an s3fs client of the test's own (no caches shared with the toolkit's)."""
    return s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False), s3.bucket()


def stored(fs: s3fs.S3FileSystem, prefix: str) -> dict[str, dict[str, str]]:
    """Each object under ``prefix``: its name and the provenance Pillow reads from it."""
    found = {}
    for path in fs.ls(prefix, detail=False):
        if path.endswith(MANIFEST):  # the batch's list of what it may write there
            continue
        with Image.open(io.BytesIO(fs.cat_file(path))) as picture:
            found[path.rsplit("/", 1)[-1]] = dict(picture.text)
    return found


def test_images_stream_to_s3_with_provenance_and_the_journal_stays_local(connect, box, bucket, tmp_path):
    fs, name = bucket
    ik = connect()
    style = ik.styles()[0]
    batch = ik.batch(grid(prompt=["a red fox", "a blue whale"], ratio=["1:1", "16:9"]), style=style)
    batch.run(out_dir=f"s3://{name}/runs/one", journal=tmp_path / "journal.sqlite", progress=False)
    frame = batch.to_pandas()
    assert set(frame["status"]) == {"COMPLETED"}
    assert sorted(frame["file"]) == sorted(f"s3://{name}/runs/one/{n}" for n in stored(fs, f"{name}/runs/one"))
    for line in frame.itertuples():  # each object says which request made it
        text = stored(fs, f"{name}/runs/one")[line.file.rsplit("/", 1)[-1]]
        assert (text["image_id"], text["prompt"], text["ratio"]) == (str(line.image_id), line.prompt, line.ratio)
        assert (text["style"], text["count"], float(text["credits"])) == (str(style.style_id), "1", line.credits)
        assert text["service"] == box.url and text["request_id"]
    assert fs.ls(name, detail=False) == [f"{name}/runs"]  # nothing but the images: the journal is where it was put
    assert (tmp_path / "journal.sqlite").exists()
    figure = batch.contact_sheet()  # read back from the store
    assert sum(len(ax.images) for ax in figure.axes) == len(frame)


def test_a_resumed_run_uploads_nothing_twice(connect, bucket, tmp_path):
    fs, name = bucket
    ik = connect()
    style = ik.styles()[0]
    prompts = [f"a lighthouse {i}" for i in range(6)]
    journal = tmp_path / "journal.sqlite"
    out = f"s3://{name}/resumed"
    first = ik.batch(prompts, style=style).run(budget=3 * style.credit_cost, out_dir=out, journal=journal, progress=False)
    assert first.to_pandas()["row_status"].value_counts().to_dict() == {"done": 3, "skipped": 3}
    for path in fs.ls(f"{name}/resumed", detail=False):  # a mark an upload over it would not keep
        fs.put_tags(path, {"run": "first"})

    # A run that died after its last upload, before its journal heard of it: the file is in the
    # store, the journal says "created". The next run takes the stored file as it is.
    # The journal never writes a done row back, so the crash's state is written beside it.
    store = LocalJournal(journal)
    last = max(store.load().values(), key=lambda entry: entry.images[0]["id"] if entry.images else -1)
    store.close()
    last.images[0]["file"] = None
    with closing(sqlite3.connect(journal)) as db, db:
        db.execute("UPDATE rows SET status = 'created', images = ? WHERE key = ?", (json.dumps(last.images), last.key))

    second = ik.batch(prompts, style=style).run(out_dir=out, journal=journal, progress=False)
    frame = second.to_pandas()
    assert set(frame["status"]) == {"COMPLETED"} and frame["file"].notna().all()
    marks = {path.rsplit("/", 1)[-1]: fs.get_tags(path).get("run") for path in fs.ls(f"{name}/resumed", detail=False)
             if not path.endswith(MANIFEST)}
    assert sorted(marks.values(), key=str) == [None] * 3 + ["first"] * 3, marks


def test_any_fsspec_url_works_the_same(connect):
    ik = connect()
    # fsspec's memory file system is one per process: each run gets its own folder in it.
    out_dir = f"memory://imagekit-test/kites-{uuid.uuid4().hex}"
    batch = ik.batch(["a kite"], style=ik.styles()[0]).run(out_dir=out_dir, progress=False)
    file = batch.to_pandas()["file"].iloc[0]
    import fsspec

    with fsspec.open(file, "rb") as stored, Image.open(stored) as picture:
        assert picture.text["prompt"] == "a kite"


def test_a_store_whose_library_is_missing_says_how_to_install_it(connect):
    ik = connect()
    with pytest.raises(imagekit.ConfigError, match=r"nosuchfs://x"):
        ik.batch(["a kite"], style=1).run(out_dir="nosuchfs://x", progress=False)
