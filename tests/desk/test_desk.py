"""The review desk from Python, against both faces of a real sandbox: decisions, their table, their errors."""

from __future__ import annotations

import pytest

import imagekit
from imagekit.desk.desk import COLUMNS


def test_decisions_are_one_row_per_image_with_what_was_decided(ik, four):
    desk = imagekit.review(four)
    a, b, c, d = four
    desk.rate(a, 4)
    desk.rate(b, 2)
    desk.select(c)
    desk.select(a)
    desk.vote(a, b)
    desk.vote(c, a, tie=True)
    desk.note(d, "too dark")
    frame = desk.decisions().set_index("image_id")
    assert list(desk.decisions().columns) == COLUMNS
    assert [image.id for image in desk.selected] == [c.id, a.id]  # the order chosen
    assert frame.loc[a.id, ["rating", "selected", "wins", "losses", "ties"]].tolist() == [4, True, 1, 0, 1]
    assert frame.loc[b.id, ["rating", "selected", "wins", "losses", "ties"]].tolist() == [2, False, 0, 1, 0]
    assert frame.loc[c.id, "ties"] == 1 and frame.loc[d.id, "note"] == "too dark"
    assert frame["rating"].isna().tolist() == [False, False, True, True]
    assert set(frame["prompt"]) == {"a lighthouse at dusk"} and set(frame["style"]) == {ik.styles()[0].style_id}
    assert frame["credits"].gt(0).all() and frame["credits"].sum() == pytest.approx(ik.ledger.total())  # the one create
    assert frame.loc[a.id, "score"] > frame.loc[b.id, "score"] and frame.loc[d.id, "score"] == 0


def test_clearing_unselecting_and_undo(four):
    desk = imagekit.review(four)
    a, b = four[:2]
    desk.rate(a, 5)
    desk.rate(a, 3)
    desk.select(a)
    desk.select(b)
    desk.unselect(a)
    assert [image.id for image in desk.selected] == [b.id]
    desk.undo()  # the unselect: a is back, in its place
    assert [image.id for image in desk.selected] == [a.id, b.id]
    desk.undo()
    desk.undo()  # both selections gone
    assert desk.selected == []
    desk.undo()  # the second rating: the first shows again
    assert desk.decisions().set_index("image_id").loc[a.id, "rating"] == 5
    desk.rate(a, 0)
    assert desk.decisions()["rating"].isna().all()
    desk.rate(a, None)
    desk.note(a, "x")
    desk.note(a, None)
    assert desk.decisions()["note"].isna().all()
    assert all(desk.undo() for _ in range(5)) and not desk.undo()  # what is left of the eleven
    assert repr(desk) == "Desk(4 images, 0 rated, 0 selected, 0 votes)"


@pytest.mark.parametrize(("call", "message"), [
    (lambda desk, a, b: desk.rate(a, 7), "a rating is 1 to 5 stars (0 or None clears it), not 7"),
    (lambda desk, a, b: desk.rate(a, True), "a rating is 1 to 5 stars (0 or None clears it), not True"),
    (lambda desk, a, b: desk.rate(a, 2.5), "a rating is 1 to 5 stars (0 or None clears it), not 2.5"),
    (lambda desk, a, b: desk.rate(123456789, 3), "image 123456789 is not on this desk (it holds 2 images)"),
    (lambda desk, a, b: desk.select("first"), "an image on the desk is an Image or its id, not str"),
    (lambda desk, a, b: desk.vote(a, a), "a vote compares two images, not image {a} with itself"),
    (lambda desk, a, b: desk.note(a, 3), "a note is text, not int"),
])
def test_a_mistake_is_one_line_and_records_nothing(four, call, message):
    desk = imagekit.review(four[:2])
    with pytest.raises(ValueError) as caught:
        call(desk, *four[:2])
    assert str(caught.value) == message.format(a=four[0].id) and "\n" not in message
    assert isinstance(caught.value, imagekit.ValidationError)
    assert repr(desk) == "Desk(2 images, 0 rated, 0 selected, 0 votes)" and not desk.undo()


def test_what_a_desk_reviews(ik, four):
    with pytest.raises(imagekit.ValidationError, match="^nothing to review: the list of images is empty$"):
        imagekit.review([])
    with pytest.raises(imagekit.ValidationError, match="^a desk reviews Images, chain results, a batch or a folder, not int$"):
        imagekit.review([1, 2])
    assert len(imagekit.review(four + four[:1])) == 4  # an image given twice is on the desk once
    results = imagekit.chain().remove_bg().map(four[:2])
    desk = imagekit.review(results)
    frame = desk.decisions()
    assert frame["image_id"].tolist() == [r.image.id for r in results]
    assert frame["parent_id"].tolist() == [image.id for image in four[:2]]
    assert set(frame["prompt"]) == {"a lighthouse at dusk"}  # an edit's prompt is its source's


def test_a_folder_of_saved_files(ik, four, tmp_path):
    folder = tmp_path / "picked"
    folder.mkdir()
    for image in four[:3]:
        image.save(folder / f"{image.id}.png")
    (folder / "notes.txt").write_text("mine")
    (folder / "holiday.png").write_bytes(four[0].read())  # a PNG imagekit did not write: not reviewed
    desk = imagekit.review(folder, ik)
    assert sorted(desk.decisions()["image_id"]) == sorted(image.id for image in four[:3])
    assert set(desk.decisions()["prompt"]) == {"a lighthouse at dusk"}
    (tmp_path / "empty").mkdir()
    with pytest.raises(imagekit.ValidationError, match="holds no image imagekit saved"):
        imagekit.review(tmp_path / "empty", ik)
    with pytest.raises(imagekit.ValidationError, match="is not a folder of images imagekit saved"):
        imagekit.review(folder / "notes.txt", ik)
    assert sorted(p.name for p in folder.iterdir()) == sorted(["notes.txt", "holiday.png",
                                                              *(f"{i.id}.png" for i in four[:3])])


def test_a_folder_opens_from_its_files_when_the_service_that_made_them_is_gone(ik, four, tmp_path, monkeypatch):
    """A demo's folder names a throwaway sandbox: its images open from their files, decisions are kept
    under the service the files name, and what needs the service is one line."""
    from imagekit.desk.saved import SavedImage
    from imagekit.provenance.record import service_of

    folder = tmp_path / "out"
    folder.mkdir()
    for n, image in enumerate(four[:3]):
        image.save(folder / f"{n}.png")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", "http://127.0.0.1:9")  # another service, nothing listening
    monkeypatch.setenv("IMAGEKIT_API_KEY", "elsewhere")
    desk = imagekit.review(folder)
    assert desk.client is None and desk.service == service_of(ik.config.base_url)
    assert all(isinstance(image, SavedImage) for image in desk.images)
    assert desk.decisions()["image_id"].tolist() == [image.id for image in four[:3]]
    assert desk.decisions()["credits"].tolist() == [image.credits for image in four[:3]]
    assert all(desk.widget().thumbnails)  # drawn from the files
    desk.rate(four[0].id, 4)
    desk.select(four[1].id)
    chain = imagekit.chain().enhance("2x")
    with pytest.raises(imagekit.ValidationError) as caught:
        desk.send(chain)
    assert str(caught.value) == (f"pricing the picks needs the service: the images of {folder} are opened from their "
                                 f"files (made by {desk.service}), and no client of it was given: open the desk with "
                                 f"one, imagekit.review({str(folder)!r}, client)")
    assert imagekit.review(folder, ik).decisions()["rating"].fillna(0).tolist() == [4, 0, 0]  # the same images
    monkeypatch.setenv("IMAGEKIT_BASE_URL", ik.config.base_url)  # the service configured: sending reaches it
    monkeypatch.setenv("IMAGEKIT_API_KEY", ik.config.api_key)
    assert desk.send(chain).credits == chain.estimate(ik) and [i.id for i in desk.selected] == [four[1].id]


def test_a_sweep_by_its_file_or_its_name(ik, tmp_path, monkeypatch):
    """A sweep run before opens by its file (its rows and journal) or by its name with its journal:
    the images its journal recorded, nothing sent again; decisions go to that journal too."""
    from imagekit.workflows.sweep_file import load_sweep

    file = tmp_path / "kites.toml"
    file.write_text(f'[sweep]\nname = "kites"\nout_dir = "out"\n\n[axes]\nprompt = ["a red kite", "a blue kite"]\n\n'
                    f'[defaults]\nstyle = {ik.styles()[0].style_id}\ncount = 2\n')
    with pytest.raises(imagekit.ValidationError, match=r"the sweep has not run yet"):
        imagekit.review(file, ik)
    made = load_sweep(file).run(ik, progress=False).batch.to_pandas()
    spent = ik.ledger.total()
    desk = imagekit.review(str(file), ik)
    assert desk.decisions()["image_id"].tolist() == made["image_id"].tolist()
    assert desk.decisions()["prompt"].tolist() == made["prompt"].tolist()
    assert desk.decisions()["credits"].tolist() == made["credits"].tolist()
    desk.rate(made["image_id"][1], 5)
    journal = tmp_path / "out" / "journal.sqlite"
    by_name = imagekit.review("kites", ik, journal=journal)
    assert by_name.decisions()["image_id"].tolist() == made["image_id"].tolist()
    assert by_name.decisions()["prompt"].tolist() == made["prompt"].tolist()  # from the files' provenance
    assert by_name.decisions()["rating"].fillna(0).tolist() == [0, 5, 0, 0] and ik.ledger.total() == spent
    monkeypatch.setenv("IMAGEKIT_JOURNAL_URL", str(journal))
    assert len(imagekit.review("kites", ik)) == 4
    with pytest.raises(imagekit.ValidationError, match=r"^no sweep named 'gulls' in .*journal.sqlite \(it holds 'kites'\)$"):
        imagekit.review("gulls", ik)
    monkeypatch.delenv("IMAGEKIT_JOURNAL_URL")
    with pytest.raises(imagekit.ValidationError) as caught:
        imagekit.review("gulls", ik)
    assert str(caught.value) == ("gulls is not a folder or a sweep file; a sweep named 'gulls' is read from its journal: "
                                 "give it (imagekit.review('gulls', journal=...)) or set IMAGEKIT_JOURNAL_URL")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(imagekit.ValidationError, match=r"IMAGEKIT_JOURNAL_URL \(or did you mean kites.toml\?\)$"):
        imagekit.review("kites", ik)
    with pytest.raises(imagekit.ValidationError, match=r"^nowhere/: no such folder or sweep file$"):
        imagekit.review("nowhere/", ik)
