"""Batch rows as pure data: how a list of rows splits back into the grid's axes and its constants, and
what a row makes again after some of its images failed."""

from __future__ import annotations

from imagekit.workflows import grid
from imagekit.workflows.batches.journals.journal import RowRecord
from imagekit.workflows.batches.rows import make_rows, split_grid


def test_a_grid_splits_into_its_axes_and_the_defaults():
    rows = make_rows(grid(prompt=["a", "b"], style=[2, 1], ratio="1:1"), {"count": 4, "seed": 7})
    axes, constants = split_grid(rows)
    assert axes == {"prompt": ["a", "b"], "style": [2, 1]}  # values in order of first use
    assert constants == {"ratio": "1:1", "count": 4, "seed": 7}


def test_a_field_some_rows_leave_out_is_an_axis_with_none():
    axes, constants = split_grid(make_rows([{"prompt": "a", "seed": 1}, "b"], {"style": 3}))
    assert axes == {"prompt": ["a", "b"], "seed": [1, None]} and constants == {"style": 3}


def test_no_rows_no_grid():
    assert split_grid([]) == ({}, {})


def test_a_row_remakes_only_its_failed_images_in_the_counts_the_interface_allows():
    [row] = make_rows(["a fox"], {"style": 1, "count": 4})
    assert row.remaking(None) is row and row.remaking(4) is row
    assert [row.remaking(missing).count for missing in (3, 2, 1)] == [2, 2, 1]
    assert row.remaking(3).key == row.key and row.remaking(3).options["prompt"] == "a fox"


def test_images_made_again_take_the_failed_ones_places_and_the_kept_keep_their_price():
    entry = RowRecord("k", group_id="k.1")
    entry.made([{"id": i, "status": s, "error": None, "file": None} for i, s in
                ((1, "COMPLETED"), (2, "FAILED"), (3, "FAILED"), (4, "FAILED"))], credits=8.0, asked=4)
    entry.credits -= 6.0  # three refunds
    assert entry.to_remake == 3 and [entry.image_credits(image) for image in entry.images] == [2.0, 0.0, 0.0, 0.0]
    entry.group_id = "k.2"
    entry.made([{"id": i, "status": "COMPLETED", "error": None, "file": None} for i in (5, 6)], credits=4.0, asked=2)
    assert [image["id"] for image in entry.images] == [1, 5, 6, 4] and entry.to_remake == 1
    assert [image["group"] for image in entry.images] == ["k.1", "k.2", "k.2", "k.1"]
    assert [image["id"] for image in entry.attempt_images()] == [5, 6] and entry.credits == 6.0
    assert [entry.image_credits(image) for image in entry.images] == [2.0, 2.0, 2.0, 0.0]
