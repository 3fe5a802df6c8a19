"""Mistakes in a batch or a sweep file are caught before anything is sent or priced, all of them in
one answer; a style may be named; an estimate says which prices it bounded and how. On both faces."""

from __future__ import annotations

import textwrap

import pytest

import imagekit
from imagekit.cli import main
from imagekit.workflows.sweep_file import load_sweep
from tests.helpers import balance
from tests.utils.service import public_style, server_images
from tests.utils.users import make_user


def test_a_batch_with_rows_that_cannot_run_is_refused_naming_each_row(connect, box):
    ik = connect()
    before = balance(ik)
    rows = [{"prompt": "a fox", "style": 1}, {"prompt": "a kite", "ratio": "3:2", "style": 1},
            {"prompt": "a boat"}, {"prompt": "a cat", "style": 1, "count": 3}]
    with pytest.raises(imagekit.ValidationError) as refused:
        ik.batch(rows)
    assert str(refused.value) == (
        "3 rows cannot be sent: row 1: ratio = '3:2': one of square, vertical, horizontal, 1:1, 3:4, 4:3, 9:16, 16:9; "
        "row 2: no style, image or collection: a create names exactly one of a style, a reference image or a "
        "collection; row 3: count = 3: the interface makes 1, 2 or 4 images a request")
    assert balance(ik) == before and server_images(box, ik.user_id) == []


def test_a_style_named_in_a_batch_becomes_its_id_and_keeps_the_rows_keys(connect, box, tmp_path, caplog):
    ik = connect()
    mine = ik.styles()[0]
    named = ik.batch(["a fox", "a kite"], style=mine.main_text)
    assert named.estimate() == 2 * mine.credit_cost and named.estimate().exact
    assert f"style {mine.main_text!r} is style {mine.style_id} of this account" in caplog.text
    named.run(progress=False, journal=tmp_path / "journal.sqlite")
    assert named.spent == 2 * mine.credit_cost
    by_id = ik.batch(["a fox", "a kite"], style=mine.style_id).run(progress=False, journal=tmp_path / "journal.sqlite")
    assert by_id.spent == 0 and [row.key for row in by_id.rows] == [row.key for row in named.rows]
    assert len(server_images(box, ik.user_id)) == 2


def test_a_batch_naming_its_style_runs_again_into_its_folder_and_knows_what_it_spent(connect, box, tmp_path):
    """Run twice as a script or a sweep file runs (a new batch each time, never estimated): the second
    finds its own files and rows, not a stranger's, and the journal's spend counts against a budget."""
    ik = connect()
    mine = ik.styles()[0]

    def again():
        return ik.batch(["a fox", "a kite"], style=mine.main_text, name="named")

    first = again().run(progress=False, out_dir=tmp_path / "out")
    assert first.spent == 2 * mine.credit_cost
    second = again()
    assert second.recorded_credits(out_dir=tmp_path / "out") == first.spent
    second.run(progress=False, out_dir=tmp_path / "out")
    assert second.spent == 0 and not second.changed and len(server_images(box, ik.user_id)) == 2


def test_an_unknown_style_name_is_refused_at_the_estimate_naming_the_account_styles(connect, box):
    ik = connect()
    before = balance(ik)
    batch = ik.batch(["a fox"], style="My Fotos")
    with pytest.raises(imagekit.ValidationError, match=r"^1 row cannot be sent: row 0: style = 'My Fotos': no style "
                                                       r"of yours has this name \(yours: \d+ 'My "):
        batch.estimate()
    with pytest.raises(imagekit.ValidationError):
        batch.run(progress=False)
    assert balance(ik) == before and server_images(box, ik.user_id) == []
    assert ik.ledger.entries() == [] or all(entry.style_id is None for entry in ik.ledger.entries())


def test_an_unknown_price_is_bounded_and_said_and_a_budget_it_passes_warned(connect, box):
    ik = connect()
    public = public_style(box)
    mine = ik.styles()[0]
    costs = {c.type: float(c.credit) for c in ik.me().plan.credit_cost_info}
    dearest = max(costs[kind] for kind in ("generate", "reference", "collection", "collection-2x"))
    batch = ik.batch(imagekit.grid(prompt=["a fox", "a kite"], style=[public, mine.style_id]))
    with pytest.warns(imagekit.BudgetWarning, match=r"more than the budget of 5"):
        estimate = batch.estimate(budget=5)
    assert not estimate.exact and estimate == 2 * dearest + 2 * mine.credit_cost
    assert estimate.unknown == {f"style:{public}": 2}
    assert estimate.notes()[0].startswith(f"2 images of style {public}, whose price this account "
                                          f"has not seen: counted at {dearest:g} (collection-2x) an image")


def test_a_sweep_file_gets_every_mistake_in_one_answer_and_nothing_is_sent(box, tmp_path, monkeypatch, capsys):
    user_id, key = make_user(box, "pro")
    monkeypatch.setenv("IMAGEKIT_BASE_URL", box.url)
    monkeypatch.setenv("IMAGEKIT_API_KEY", key)
    path = tmp_path / "sweep.toml"
    path.write_text(textwrap.dedent("""
        [sweep]
        budjet = 4
        [axes]
        prompt = ["a", "b"]
        ratio = ["1:1", "3:2"]
        [defaults]
        count = 3
        style = 1
    """))
    assert main(["sweep", "estimate", str(path)]) == 1
    rows = ("4 rows cannot be sent: rows 0, 1, 2, 3: count = 3: the interface makes 1, 2 or 4 images a request; "
            "rows 1, 3: ratio = '3:2': one of square, vertical, horizontal, 1:1, 3:4, 4:3, 9:16, 16:9")
    assert capsys.readouterr().err == f"error: {path}: [sweep] budjet is not a sweep setting: did you mean budget?; {rows}\n"
    path.write_text(path.read_text().replace("budjet", "budget"))
    for argv in (["sweep", "estimate", str(path)], ["sweep", "run", str(path), "--no-progress"]):
        assert main(argv) == 1
        assert capsys.readouterr().err == f"error: {path}: {rows}\n"
    assert server_images(box, user_id) == []
    with pytest.raises(imagekit.ValidationError) as refused:
        load_sweep(path)
    assert refused.value.where == str(path) and refused.value.field == "count"
