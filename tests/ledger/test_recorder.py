"""The recorder on its own: requests as the resources build them, answers as httpx gives them, a real
SQLite ledger; no server. It dispatches on the names requests carry and reads wire names from Wire."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from imagekit import Wire
from imagekit._http import Call
from imagekit.config import Config
from imagekit.errors import APITimeoutError, ImageNotFoundError
from imagekit.ledger import Ledger, Source, Status
from imagekit.ledger.recorder import Recorder
from imagekit.resources.edits import cancel_call, enhance_call, prepare
from imagekit.resources.images import create_call, meta_call
from imagekit.resources.users import ME, STYLES, USAGE

# Every name the recorder reads from the wire spelled otherwise: a literal left in it would miss.
WIRE = Wire(style_id="style", collection_id="collection", group_id="group", count="n", enhance_scale="factor",
            cancelled="stopped", not_running="done", credits_charged_header="X-Spent",
            credits_remaining_header="X-Left")
CONFIG = Config("http://service.test", "key", wire=WIRE)
BALANCES = {"defaultCredit": 10, "dailyCredit": 0, "monthlyCredit": 90}


def answer(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, content=json.dumps(payload).encode(), headers=headers)


@pytest.fixture
def ledger(tmp_path) -> Ledger:
    return Ledger(tmp_path / "ledger.sqlite", account="acct")


@pytest.fixture
def recorder(ledger) -> Recorder:
    return Recorder(ledger, CONFIG)


def plan(recorder: Recorder, costs: dict[str, float]) -> None:
    recorder(ME, answer({"Plan": {"CreditCostInfo": [{"type": k, "credit": str(v)} for k, v in costs.items()]},
                         **BALANCES}), None, 0.01)


def test_reads_teach_prices_and_balances_by_their_names(recorder, ledger):
    plan(recorder, {"generate": 2, "enhance-4x": 4})
    recorder(STYLES, answer([{"styleId": 7, "creditCost": 3}, {"styleId": 8}]), None, 0.01)
    recorder(USAGE, answer({"currentCredit": 95}), None, 0.01)
    assert ledger.prices() == {"cost:generate": 2, "cost:enhance-4x": 4, "style:7": 3}
    assert [entry.balance for entry in ledger.entries(readings=True)] == [100, 95]
    # A read without a name (a binary, say) teaches nothing, whatever its path or body.
    recorder(Call("GET", "/api/users/me"), answer({"Plan": {"CreditCostInfo": [{"type": "x", "credit": 1}]}}),
             None, 0.01)
    assert "cost:x" not in ledger.prices()


def test_a_create_is_priced_by_its_style_as_the_wire_names_it(recorder, ledger):
    plan(recorder, {"generate": 2})
    recorder(STYLES, answer([{"styleId": 7, "creditCost": 3}]), None, 0.01)
    call = create_call(CONFIG, "a fox", {"style": 7, "count": 2, "group_id": "g"})
    images = [{"imageId": 11, "generationStatus": "COMPLETED"}, {"imageId": 12, "generationStatus": "FAILED"}]
    recorder(call, answer({"images": images, **BALANCES}), None, 0.2)
    [entry] = ledger.entries()
    assert (entry.status, entry.http_status, entry.group_id, entry.style_id) == (Status.ANSWERED, 200, "g", 7)
    # The image that failed at once was never charged: one image at the style's price.
    assert (entry.credits, entry.source, entry.image_ids, entry.balance) == (3, Source.PRICED, [11, 12], 100)


def test_an_unpriced_create_is_settled_by_its_images_metadata(recorder, ledger):
    call = create_call(CONFIG, "a fox", {"style": 9, "count": 2})
    recorder(call, answer({"images": [{"imageId": 21}, {"imageId": 22}]}), None, 0.2)
    assert ledger.entries()[0].credits is None
    recorder(meta_call(99), answer({"creditCost": 100}), None, 0.01)  # another image: nothing to learn
    recorder(meta_call(22), answer({"creditCost": 2.5}), None, 0.01)
    [entry] = ledger.entries()
    assert (entry.credits, entry.source) == (5, Source.PRICED) and ledger.prices()["style:9"] == 2.5


def test_reported_credits_win_and_teach_the_price(recorder, ledger):
    call = create_call(CONFIG, "a fox", {"collection": 3, "count": 2})
    recorder(call, answer({"images": [{"imageId": 1}, {"imageId": 2}]}, headers={"X-Spent": "6", "X-Left": "94"}),
             None, 0.2)
    [entry] = ledger.entries()
    assert (entry.credits, entry.source, entry.balance) == (6, Source.REPORTED, 94)
    assert ledger.prices() == {"collection:3": 3}


def test_an_enhance_is_priced_by_its_scale(recorder, ledger):
    plan(recorder, {"enhance-2x": 2, "enhance-4x": 4})
    call, _ = prepare(CONFIG, enhance_call(CONFIG, 5, "4x"), "r-1", None)
    recorder(call, answer({"image": {"imageId": 6}}), None, 0.3)
    [entry] = ledger.entries()
    assert (entry.operation, entry.credits, entry.source_id, entry.request_id) == ("enhance", 4, 5, "r-1")


def test_a_refused_operation_is_failed_with_its_http_status(recorder, ledger):
    call, _ = prepare(CONFIG, enhance_call(CONFIG, 5, "2x"), "r-2", None)
    recorder(call, None, ImageNotFoundError("gone", status=404, data="image_not_found"), 0.1)
    [entry] = ledger.entries()
    assert (entry.status, entry.http_status, entry.error, entry.credits) == (Status.FAILED, 404, "image_not_found", None)


@pytest.mark.parametrize(("cancel_answer", "credits"), [("stopped", 0), ("done", 4)])
def test_a_lost_edit_is_settled_by_its_cancels_answer(recorder, ledger, cancel_answer, credits):
    plan(recorder, {"enhance-4x": 4})
    call, _ = prepare(CONFIG, enhance_call(CONFIG, 5, "4x"), "r-3", None)
    recorder(call, None, APITimeoutError("no answer", may_have_executed=True), 30.0)
    recorder(cancel_call("r-3"), answer(cancel_answer), None, 0.05)
    edit, cancel = ledger.entries()
    assert (edit.status, edit.credits, edit.source) == (Status.NO_RESPONSE, credits, Source.PRICED)
    assert (cancel.operation, cancel.credits, cancel.request_id) == ("cancelEdit", 0, "r-3")
