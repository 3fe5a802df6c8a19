"""The quality frame's choice of which earlier image a near-duplicate repeats."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import imagekit
from imagekit.errors import ValidationError
from tests.signals.scenes import cropped, scene


def test_a_copy_of_a_copy_names_the_first_image_both_repeat():
    """The copy of a copy is nearer the copy (2 bits) than the original (6): it names the original,
    as the copy does, so a group of near-duplicates points at one image (CI once saw a recompressed
    file named where the service's image was expected)."""
    original = scene(1)
    copy = cropped(original, 0.02)
    copy_of_copy = cropped(copy, 0.015)
    frame = imagekit.quality([Image.fromarray(picture) for picture in (original, copy, copy_of_copy)])
    hashes = [int(value, 16) for value in frame["phash"]]
    assert (hashes[2] ^ hashes[1]).bit_count() < (hashes[2] ^ hashes[0]).bit_count()  # what the test is about
    assert frame["dup_of"].isna().tolist() == [True, False, False] and frame["dup_of"].tolist()[1:] == [0, 0]
    assert frame["distance"].tolist()[1:] == [(hashes[1] ^ hashes[0]).bit_count(), (hashes[2] ^ hashes[0]).bit_count()]


def test_pictures_of_other_shapes_are_not_copies_of_each_other():
    """A grid's 1:1 and 16:9 pictures of one prompt share their layout (a walk saw them flagged 8
    bits apart); squashed to 16:9 a square picture hashes the same, yet it is not a copy. Cropped 2 %
    on one side only, it keeps its shape and is."""
    square = scene(2)
    wide = np.asarray(Image.fromarray(square).resize((512, 288), Image.LANCZOS))
    one_side = square[:, : round(square.shape[1] * 0.98)]
    frame = imagekit.quality([Image.fromarray(picture) for picture in (square, wide, one_side)])
    hashes = [int(value, 16) for value in frame["phash"]]
    assert (hashes[1] ^ hashes[0]).bit_count() <= 2  # what the test is about: the hash alone would match
    assert frame["dup_of"].isna().tolist() == [True, True, False] and frame["dup_of"][2] == 0


def test_a_folder_is_its_pictures_by_name_and_one_without_any_is_one_line(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    for name, seed in (("b.PNG", 1), ("a.jpg", 2)):
        Image.fromarray(scene(seed, 128)).save(folder / name)
    (folder / "notes.txt").write_text("not a picture")
    (folder / ".hidden.png").write_bytes(b"")
    (folder / "inner").mkdir()
    frame = imagekit.quality(folder)
    assert frame["path"].tolist() == [str(folder / "a.jpg"), str(folder / "b.PNG")]
    assert frame["width"].tolist() == [128, 128] and frame["image_id"].isna().all()
    with pytest.raises(ValidationError, match=r"^\S+/inner holds no PNG, JPEG or WebP file to measure$"):
        imagekit.quality(folder / "inner")
