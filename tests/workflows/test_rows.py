"""Batch rows as pure data: how a list of rows splits back into the grid's axes and its constants."""

from __future__ import annotations

from imagekit.workflows import grid
from imagekit.workflows.rows import make_rows, split_grid


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
