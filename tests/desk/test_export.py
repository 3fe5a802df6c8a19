"""Decisions leave the notebook: the votes as a Pick-a-Pic preference set, and a batch's export with its
ratings, selections and scores, each read back by Hugging Face datasets and pyarrow (never by imagekit)."""

from __future__ import annotations

import json

import datasets
import pyarrow.parquet as pq
import pytest
from PIL import Image

import imagekit
from imagekit.desk.export import PREFERENCE_COLUMNS
from imagekit.workflows.batches.export import BATCH_COLUMNS, DECISION_COLUMNS


def load(tmp_path, **where) -> datasets.Dataset:
    return datasets.load_dataset(split="train", cache_dir=str(tmp_path / "hf-cache"), **where)


def test_the_votes_export_in_the_pick_a_pic_layout_and_load_with_datasets(four, tmp_path):
    a, b, c, d = four
    desk = imagekit.review(four)
    with pytest.raises(imagekit.ValidationError, match="^there are no votes to export: vote first"):
        desk.export_preferences(tmp_path / "none.parquet")
    assert not (tmp_path / "none.parquet").exists()
    desk.vote(b, a)
    desk.vote(c, d, tie=True)
    desk.vote(a, d)
    path = tmp_path / "prefs.parquet"
    assert desk.export_preferences(path) == 3
    ds = load(tmp_path, path="parquet", data_files=str(path))
    assert ds.column_names == list(PREFERENCE_COLUMNS)
    assert isinstance(ds.features["image_0"], datasets.Image) and isinstance(ds.features["image_1"], datasets.Image)
    rows = [{k: v for k, v in row.items() if not k.startswith("image_") or k.endswith("uid")} for row in ds]
    assert rows == [
        {"caption": "a lighthouse at dusk", "image_0_uid": str(a.id), "image_1_uid": str(b.id), "label_0": 0.0,
         "label_1": 1.0, "best_image_uid": str(b.id)},
        {"caption": "a lighthouse at dusk", "image_0_uid": str(c.id), "image_1_uid": str(d.id), "label_0": 0.5,
         "label_1": 0.5, "best_image_uid": ""},
        {"caption": "a lighthouse at dusk", "image_0_uid": str(a.id), "image_1_uid": str(d.id), "label_0": 1.0,
         "label_1": 0.0, "best_image_uid": str(a.id)},
    ]
    first = ds[0]["image_0"]
    assert first.size == a.pil().size and first.convert("RGB").tobytes() == a.pil().convert("RGB").tobytes()
    assert first.info["image_id"] == str(a.id)  # the provenance inside the file
    with pytest.raises(FileExistsError, match="exists: pass overwrite=True to replace it"):
        desk.export_preferences(path)
    desk.undo()
    assert desk.export_preferences(path, overwrite=True) == 2 and pq.read_table(path).num_rows == 2


def test_a_batch_export_carries_what_the_desk_decided(ik, tmp_path):
    batch = ik.batch(["a red kite", "a green kite"], style=ik.styles()[0], count=2)
    batch.run(journal=tmp_path / "journal.sqlite", progress=False)
    plain = batch.export(tmp_path / "before.parquet", format="parquet", progress=False)
    assert pq.read_table(plain.location).column_names == ["image", *BATCH_COLUMNS]  # nothing decided: as before
    ids = batch.to_pandas()["image_id"].tolist()
    desk = imagekit.review(batch)
    desk.rate(ids[0], 5)
    desk.rate(ids[2], 2)
    desk.select(ids[2])
    desk.vote(ids[0], ids[1])
    scores = desk.decisions().set_index("image_id")["score"]
    batch.export(tmp_path / "after.parquet", format="parquet", progress=False)
    ds = load(tmp_path, path="parquet", data_files=str(tmp_path / "after.parquet"))
    assert ds.column_names == ["image", *BATCH_COLUMNS, *DECISION_COLUMNS]
    rows = sorted(ds, key=lambda row: row["image_id"])
    assert [row["image_id"] for row in rows] == sorted(ids)
    by_id = {row["image_id"]: row for row in rows}
    assert [by_id[i]["rating"] for i in ids] == [5, None, 2, None]
    assert [by_id[i]["selected"] for i in ids] == [False, False, True, False]
    assert [by_id[i]["score"] for i in ids] == pytest.approx([scores[i] for i in ids]) and by_id[ids[0]]["score"] > 0
    batch.export(tmp_path / "folder", progress=False)
    lines = [json.loads(line) for line in (tmp_path / "folder" / "metadata.jsonl").read_text().splitlines()]
    assert {line["image_id"]: (line["rating"], line["selected"]) for line in lines} == {
        ids[0]: (5, False), ids[1]: (None, False), ids[2]: (2, True), ids[3]: (None, False)}
    with Image.open(tmp_path / "folder" / lines[0]["file_name"]) as picture:
        assert picture.text["image_id"] == str(lines[0]["image_id"])  # the provenance inside, as always
