"""The one price model, as pure arithmetic: keys, what is known, and the upper bounds used while a
price is not."""

from __future__ import annotations

import pytest

from imagekit import models
from imagekit.ledger.prices import Prices, create_key, edit_key

PLAN_COSTS = {"generate": 2, "reference": 3, "collection": 3, "collection-2x": 6, "enhance-2x": 2,
              "enhance-4x": 4, "removeBg": 1, "cleanUp": 2}


def user(costs: dict[str, float] = PLAN_COSTS, limit: int | None = 2, enterprise_limit: int | None = None) -> models.User:
    payload = {"Plan": {"simultaneousLimit": limit,
                        "CreditCostInfo": [{"type": kind, "credit": str(credit)} for kind, credit in costs.items()]}}
    if enterprise_limit is not None:
        payload["Enterprise"] = {"simultaneousLimit": enterprise_limit}
    return models.User.model_validate(payload)


@pytest.mark.parametrize(("style", "collection", "key"), [
    (7, None, "style:7"), (None, 3, "collection:3"), (None, None, "cost:reference"), ("7", None, "style:7")])
def test_a_create_is_priced_by_its_style_else_its_collection_else_as_a_reference(style, collection, key):
    assert create_key(style, collection) == key


@pytest.mark.parametrize(("operation", "scale", "key"), [
    ("enhance", None, "cost:enhance-2x"), ("enhance", "4x", "cost:enhance-4x"), ("removeBg", None, "cost:removeBg"),
    ("cleanUp", None, "cost:cleanUp"), ("textToPrompt", None, "cost:textToPrompt")])
def test_an_edit_is_priced_by_its_operation_and_enhance_by_its_scale(operation, scale, key):
    assert edit_key(operation, scale) == key


def test_the_plan_the_styles_and_what_was_learned_make_one_price_list():
    styles = [models.Style.model_validate({"styleId": 7, "creditCost": 5}), models.Style.model_validate({"styleId": 8})]
    learned = {"style:7": 1.0, "style:9": 4.0, "collection:3": 6.0, "cost:generate": 99.0}
    prices = Prices.of_account(user(), styles, learned)
    # What the service shows now (plan rows, styles' creditCost) wins over what was learned before.
    assert prices.exact("style:7") == 5 and prices.exact("cost:generate") == 2
    assert prices.exact("style:9") == 4 and prices.exact("collection:3") == 6  # learned only
    assert prices.exact("style:8") is None  # a style without creditCost is not guessed here
    assert prices.simultaneous_limit == 2


def test_an_enterprise_limit_wins_over_the_plan_and_one_is_the_floor():
    assert Prices.of_account(user(enterprise_limit=5)).simultaneous_limit == 5
    assert Prices.of_account(user(limit=None)).simultaneous_limit == 1
    assert Prices.of_account(models.User.model_validate({})).known == {}


def test_an_unknown_style_costs_the_dearest_generation_price_known_until_learned():
    prices = Prices.of_account(user(), [models.Style.model_validate({"styleId": 7, "creditCost": 8})])
    assert prices.per_image(style=7) == 8
    assert prices.per_image(style=42) == 8  # the dearest of the generation types and the known styles
    assert prices.create(style=42, count=4) == 32
    prices.learn(create_key(style=42), 2.5)
    assert prices.create(style=42, count=4) == 10


def test_an_unknown_collection_costs_the_premium_price_until_learned():
    prices = Prices.of_account(user())
    assert prices.per_image(collection=3) == 6  # collection-2x: the API does not say which are premium
    prices.learn("collection:3", 3)
    assert prices.create(collection=3, count=2) == 6
    assert prices.create() == 3  # a reference create: the plan's reference row


def test_an_edit_costs_its_plan_row_else_the_dearest_edit_price_known():
    prices = Prices.of_account(user())
    assert prices.edit("enhance") == 2 and prices.edit("enhance", "4x") == 4 and prices.edit("removeBg") == 1
    # An edit the plan does not list is assumed dear (never a generation's price) so a budget holds enough.
    assert prices.edit("vectorize") == 4
    assert prices.edit("cancelEdit") == 0
    assert Prices().edit("vectorize") == 0 and Prices().create(style=1) == 0  # nothing known yet
