"""The picks go on, priced first: the quote is the charge, and what may not be sent is refused in one line."""

from __future__ import annotations

import math

import pytest

import imagekit
from imagekit.desk.send import Quote
from tests.helpers import balance


def charged(client: imagekit.Client, desk) -> float:
    """What the ledger recorded for the requests of the runs that made ``desk``'s images."""
    requests = {request for result in desk.results for request in result.lineage["request_id"]}
    return sum(entry.credits or 0.0 for entry in client.ledger.entries() if entry.request_id in requests)


def test_the_price_shown_is_the_price_charged_and_the_results_remember_their_parents(ik, four):
    desk = imagekit.review(four)
    picks = [four[2], four[0], four[3]]
    for image in picks:
        desk.select(image)
    chain = imagekit.chain().enhance("2x").remove_bg()
    before = balance(ik)
    shown = desk.send(chain)
    assert isinstance(shown, Quote) and balance(ik) == before  # a quote sends nothing
    assert shown.picks == 3 and shown.per_image == chain.estimate(ik) > 0
    assert shown.credits == 3 * shown.per_image and shown.balance == before
    assert str(shown) == (f"chain().enhance(scale='2x').remove_bg() on 3 selected images: {shown.credits:g} credits "
                          f"({shown.per_image:g} each); balance {before:g} -> {before - shown.credits:g}. "
                          "Send with confirm=True.")
    results = desk.send(chain, confirm=True)
    assert before - balance(ik) == shown.credits == charged(ik, results)  # charged = shown
    frame = results.decisions()
    assert frame["parent_id"].tolist() == [image.id for image in picks]
    assert frame["credits"].tolist() == [shown.per_image] * 3
    assert set(frame["prompt"]) == {"a lighthouse at dusk"} and results.parent is desk
    assert [result.lineage["parent_id"][0] for result in results.results] == [image.id for image in picks]
    assert results.decisions()["rating"].isna().all()  # a new desk: the results are new images


def test_what_may_not_be_sent_is_refused_in_one_line_and_charges_nothing(connect):
    ik = connect("free")  # maxMultiSelect 4
    images = list(ik.create("a fox", style=ik.styles()[0], count=4).images)
    images += list(ik.create("a fox", style=ik.styles()[0], count=1).images)
    desk = imagekit.review(images)
    chain = imagekit.chain().enhance("2x")
    with pytest.raises(imagekit.ValidationError, match=r"^nothing is selected: select the images to send first"):
        desk.send(chain)
    for image in images:
        desk.select(image)
    before, entries = balance(ik), len(ik.ledger.entries())
    with pytest.raises(imagekit.ValidationError) as caught:
        desk.send(chain, confirm=True)
    assert str(caught.value) == ("5 images are selected, more than this plan's maxMultiSelect of 4: unselect some; "
                                 "nothing was sent")
    desk.unselect(images[4])
    with pytest.raises(imagekit.BudgetExceededError) as caught:
        desk.send(chain, confirm=True, budget=1)
    assert str(caught.value) == (f"chain().enhance(scale='2x') on 4 images costs {4 * chain.estimate(ik):g} credits, "
                                 "more than the budget of 1: unselect some; nothing was sent")
    dear = imagekit.chain()
    for _ in range(math.ceil(before / (4 * chain.estimate(ik))) + 1):
        dear = dear.enhance("2x")
    with pytest.raises(imagekit.BudgetExceededError, match=r"credits and the balance is .*: unselect some or add credits"):
        desk.send(dear, confirm=True)
    with pytest.raises(imagekit.ValidationError, match=r"^the chain has no step"):
        desk.send(imagekit.chain(), confirm=True)
    assert balance(ik) == before and len(ik.ledger.entries()) == entries  # nothing was sent, nothing charged
