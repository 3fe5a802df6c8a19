"""Exports: a batch's and a chain's images as datasets, read back by Hugging Face datasets, pyarrow
and pandas (never by the toolkit), in a folder, a Parquet file or an S3 bucket (moto on loopback)."""

from __future__ import annotations

import io
import json

import datasets
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import s3fs
from PIL import Image

import imagekit
from imagekit.ownership import MANIFEST
from imagekit.workflows import grid
from imagekit.workflows.batches.export import BATCH_COLUMNS, CHAIN_COLUMNS
from tests.helpers import control

COLUMNS = list(BATCH_COLUMNS)


def load(kind: str, tmp_path, **where) -> datasets.Dataset:
    return datasets.load_dataset(kind, split="train", cache_dir=str(tmp_path / "hf-cache"), **where)


def pixels(image: Image.Image) -> bytes:
    return image.convert("RGBA").tobytes()


@pytest.fixture
def finished(connect):
    """A run whose rows end three ways: five done, one refused (a style that does not exist), one
    skipped (the budget); and its table."""
    ik = connect()
    style = ik.styles()[0]
    rows = grid(prompt=["a red fox", "a blue whale", "a castle"], ratio=["1:1", "16:9"], style=style.style_id)
    batch = ik.batch([{"prompt": "a lost style", "style": 987654}, *rows], tags={"experiment": "export"})
    batch.run(budget=5 * style.credit_cost, concurrency=1, progress=False)
    frame = batch.to_pandas()
    assert frame["row_status"].value_counts().to_dict() == {"done": 5, "failed": 1, "skipped": 1}
    return ik, batch, frame, frame[frame["status"] == "COMPLETED"]


def test_an_imagefolder_export_loads_with_datasets_one_row_per_image(finished, tmp_path):
    ik, batch, frame, done = finished
    export = batch.export(tmp_path / "ds", progress=False)
    assert export.images == 5 and "2 left out" in str(export)  # how many, and why
    assert [(n, why.split(" (")[0]) for why, n in export.left_out.items()] == [(1, "failed"), (1, "skipped")]
    assert "style_not_found" in str(export) and "budget of" in str(export)

    ds = load("imagefolder", tmp_path, data_dir=str(tmp_path / "ds"))
    assert ds.column_names == ["image", *COLUMNS] and len(ds) == len(done)
    rows = sorted(ds, key=lambda row: row["image_id"])
    for row, line in zip(rows, done.sort_values("image_id").itertuples()):
        assert (row["image_id"], row["prompt"], row["ratio"], row["row"]) == (line.image_id, line.prompt, line.ratio, line.row)
        assert (row["style"], row["style_label"], row["count"]) == (line.style, line.style_name, 1)
        assert (row["credits"], row["latency"]) == (line.credits, line.latency) and row["request_id"]
        assert json.loads(row["tags"])["experiment"] == "export" and row["created_at"] is not None
        assert pixels(row["image"]) == pixels(ik.image(line.image_id).pil())
        assert row["image"].info["image_id"] == str(line.image_id)  # the provenance inside each file


def test_a_parquet_export_reads_with_pandas_pyarrow_and_datasets(finished, tmp_path):
    ik, batch, frame, done = finished
    path = tmp_path / "batch.parquet"
    export = batch.export(path, format="parquet", progress=False)
    assert export.location == str(path) and export.images == len(done)

    table = pq.read_table(path)
    assert table.column_names == ["image", *COLUMNS] and table.num_rows == len(done)
    assert table.schema.field("image").type.names == ["bytes", "path"]
    read = pd.read_parquet(path)
    assert sorted(read["image_id"]) == sorted(done["image_id"]) and set(read["prompt"]) == set(done["prompt"])
    first = read.iloc[0]
    with Image.open(io.BytesIO(first["image"]["bytes"])) as picture:
        assert pixels(picture) == pixels(ik.image(int(first["image_id"])).pil())
        assert picture.text["prompt"] == first["prompt"]

    ds = load("parquet", tmp_path, data_files=str(path))
    assert isinstance(ds.features["image"], datasets.Image) and ds.column_names == ["image", *COLUMNS]
    assert ds[0]["image"].size == Image.open(io.BytesIO(first["image"]["bytes"])).size


def test_exported_files_come_from_the_run_folder_when_there_is_one(connect, tmp_path):
    ik = connect()
    batch = ik.batch(["a kite", "a boat"], style=ik.styles()[0]).run(out_dir=tmp_path / "out", progress=False)
    batch.export(tmp_path / "ds", progress=False)
    saved = {p.name: p.read_bytes() for p in (tmp_path / "out").glob("*.png")}
    exported = {p.name: p.read_bytes() for p in (tmp_path / "ds").glob("*.png")}
    assert exported == saved and len(saved) == 2


def test_an_export_replaces_only_its_own_files_and_only_when_asked(finished, tmp_path):
    _, batch, _, done = finished
    ds = tmp_path / "ds"
    batch.export(ds, progress=False)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        batch.export(ds, progress=False)
    (ds / "notes.txt").write_text("mine")  # the user's, beside the export, and named in its manifest:
    manifest = json.loads((ds / MANIFEST).read_text())  # the record under IMAGEKIT_HOME says what is ours
    manifest["names"].append("notes.txt")
    (ds / MANIFEST).write_text(json.dumps(manifest))
    batch.export(ds, overwrite=True, progress=False)
    assert (ds / "notes.txt").read_text() == "mine"
    assert len(load("imagefolder", tmp_path, data_dir=str(ds))) == len(done)
    assert pd.read_json(ds / "metadata.jsonl", lines=True)["image_id"].tolist() == sorted(done["image_id"])
    with pytest.raises(ValueError, match="imagefolder, parquet"):
        batch.export(tmp_path / "other", format="csv")


def test_a_planted_manifest_makes_no_folder_an_exports(finished, tmp_path):
    """``export(..., overwrite=True)`` into a project holding a manifest that lists its files (copied
    from an export's folder, token and all): refused in one line, nothing touched."""
    _, batch, _, _ = finished
    batch.export(tmp_path / "ds", progress=False)
    root = tmp_path / "project"
    files = {"src/main.py": b"print('mine')", "thesis.tex": b"tex", "README.md": b"# mine"}
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    copied = json.loads((tmp_path / "ds" / MANIFEST).read_text()) | {"names": ["src", "thesis.tex", "README.md"]}
    (root / MANIFEST).write_text(json.dumps(copied))
    before = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with pytest.raises(FileExistsError, match="was not written there by imagekit") as refused:
        batch.export(root, overwrite=True, progress=False)
    assert "\n" not in str(refused.value)
    assert {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_an_export_never_writes_into_a_folder_of_the_users(connect, tmp_path):
    """Exporting into the run's own folder (images, journal, the user's notebook) is refused, even
    with overwrite=True, and changes nothing there: the next run of the batch pays for nothing."""
    ik = connect()
    work = tmp_path / "work"
    work.mkdir()
    batch = ik.batch(["a kite", "a boat"], style=ik.styles()[0])
    batch.run(out_dir=work, journal=work / "journal.sqlite", progress=False)
    (work / "notes.md").write_text("my notes")  # put beside the run's files: it stays the user's
    before = {path.name: path.read_bytes() for path in work.iterdir()}
    with pytest.raises(FileExistsError, match="work holds what a batch wrote, not an export: name an empty or new"):
        batch.export(work, overwrite=True, progress=False)
    assert {path.name: path.read_bytes() for path in work.iterdir()} == before
    again = ik.batch(["a kite", "a boat"], style=ik.styles()[0]).run(out_dir=work, journal=work / "journal.sqlite",
                                                                      progress=False)
    assert again.spent == 0
    with pytest.raises(FileExistsError, match="is a file"):
        batch.export(work / "notes.md", progress=False)
    batch.export(work / "dataset", progress=False)
    assert len(load("imagefolder", tmp_path, data_dir=str(work / "dataset"))) == 2


def test_a_chain_exports_with_its_lineage(connect, tmp_path):
    ik = connect()
    source = ik.create("a red robot on a beach", style=ik.styles()[0]).images[0]
    result = imagekit.chain(ik, tags={"step": "cut-out"}).enhance("2x").remove_bg().run(source)
    export = result.export(tmp_path / "chain", progress=False)
    assert export.images == 2 and not export.left_out
    ds = load("imagefolder", tmp_path, data_dir=str(tmp_path / "chain"))
    assert ds.column_names == ["image", *CHAIN_COLUMNS]
    lineage = result.lineage
    assert [row["op"] for row in ds] == list(lineage["op"]) and [row["parent_id"] for row in ds] == [
        source.id, result.images[0].id]
    assert [row["credits"] for row in ds] == list(lineage["credits"]) and json.loads(ds[0]["tags"]) == {"step": "cut-out"}
    assert ds[1]["image"].mode == "RGBA" and ds[1]["image"].info["operation"] == "removeBg"


def test_a_failed_chain_step_is_left_out_and_said(connect, tmp_path):
    ik = connect()
    source = ik.create("a kite", style=ik.styles()[0]).images[0]
    width, height = map(int, source.resolution.split("x"))
    nothing = np.zeros((2 * height, 2 * width), bool)  # the enhanced image's size; the service refuses it empty (400)
    result = imagekit.chain(ik).enhance("2x").clean_up(nothing).run(source)
    assert not result.ok
    export = result.export(tmp_path / "chain", format="parquet", progress=False)
    assert export.images == 1 and list(export.left_out.values()) == [1] and "failed" in str(export)
    assert pq.read_table(tmp_path / "chain").column("op").to_pylist() == ["enhance"]


def test_an_export_to_s3_reads_back_through_s3fs(finished, s3, tmp_path):
    _, batch, _, done = finished
    bucket = s3.bucket()
    batch.export(f"s3://{bucket}/datasets/grid", progress=False)
    fs = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)
    fs.pipe(f"{bucket}/datasets/grid/README.md", b"the user's")
    batch.export(f"s3://{bucket}/datasets/grid", overwrite=True, progress=False)  # the export's files only
    assert fs.cat(f"{bucket}/datasets/grid/README.md") == b"the user's"
    fs.rm(f"{bucket}/datasets/grid/README.md")
    batch.export(f"s3://{bucket}/datasets/grid.parquet", format="parquet", progress=False)
    fs.get(f"{bucket}/datasets/grid/", str(tmp_path / "copy"), recursive=True)
    assert len(load("imagefolder", tmp_path, data_dir=str(tmp_path / "copy"))) == len(done)
    with fs.open(f"{bucket}/datasets/grid.parquet", "rb") as stored:
        assert sorted(pq.read_table(stored).column("image_id").to_pylist()) == sorted(done["image_id"])


def test_failed_generations_are_left_out(connect, box, tmp_path):
    ik = connect()
    control(box, "POST", "faults", {"fail_generation_rate": 1.0})
    batch = ik.batch(["a fox", "a cat"], style=ik.styles()[0]).run(progress=False)
    control(box, "DELETE", "faults")
    export = batch.export(tmp_path / "ds.parquet", format="parquet", progress=False)
    assert export.images == 0 and list(export.left_out.values()) == [2] and "injected fault" in str(export)
    assert pq.read_table(tmp_path / "ds.parquet").num_rows == 0


def test_an_async_batch_exports_the_same(box, ledger_location, tmp_path):
    import anyio

    from tests.utils.users import make_user

    _, key = make_user(box, "pro")

    async def run() -> imagekit.Batch:
        async with imagekit.AsyncClient(box.url, key, ledger=ledger_location) as aik:
            batch = aik.batch(["a fox", "a cat"], style=(await aik.styles())[0])
            await batch.arun(progress=False)
            batch.export(tmp_path / "ds", progress=False)  # blocking, from async code: read with the blocking twin
            return batch

    batch = anyio.run(run)
    assert len(load("imagefolder", tmp_path, data_dir=str(tmp_path / "ds"))) == len(batch.to_pandas()) == 2


@pytest.mark.parametrize(("dest", "format", "message"), [
    ("thesis.txt", "parquet", r"thesis.txt is named .txt and format='parquet' writes parquet or pq: name it .parquet"),
    ("data.csv", "parquet", r"data.csv is named .csv and format='parquet' writes parquet or pq"),
    ("data.parquet", "imagefolder", r"data.parquet is named .parquet and format='imagefolder' writes a folder: name it "
                                    r"without a suffix, or give format='parquet'"),
])
def test_an_export_whose_name_says_another_format_is_refused(connect, tmp_path, dest, format, message):
    """``export("thesis.txt", format="parquet")`` wrote Parquet into a .txt: refused in one line, and
    the file of that name (the user's) and the folder stay as they were."""
    from imagekit.errors import ConfigError

    ik = connect()
    batch = ik.batch(["a kite"], style=ik.styles()[0]).run(progress=False)
    (tmp_path / "thesis.txt").write_text("my thesis")
    with pytest.raises(ConfigError, match=message) as refused:
        batch.export(tmp_path / dest, format, overwrite=True, progress=False)
    assert "\n" not in str(refused.value)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(("home", "ledger"))) == ["thesis.txt"]
    assert (tmp_path / "thesis.txt").read_text() == "my thesis"
    assert batch.export(tmp_path / "data.pq", "parquet", progress=False).images == 1  # .pq is Parquet's too
