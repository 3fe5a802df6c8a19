"""The HTTP recorder: the hook a client wires into its HTTP layer to feed its ledger.

Requests say what they are where they are built (``Call.operation`` for operations, ``Call.read``
for reads), and the recorder dispatches on those names, never on URLs. An entry's credits come, in
order of preference, from:

- ``reported``: the credit headers of its answer (a sandbox extension; a service may not send them);
- ``priced``: the account's prices (see ``prices``), learned from the reads the toolkit makes anyway:
  the plan's CreditCostInfo (``me``), the caller's styles' creditCost (``styles``), and an image's
  creditCost (its metadata, ``image``), which prices the create that made it and every later create
  with the same style or collection;
- ``reconciled``: the balances the service reported (see ``reconcile``).

Every name on the wire it reads comes from the client's ``Wire``; names the spec shows (``images``,
``creditCost``, ``CreditCostInfo``...) are written here as the spec spells them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._http import ME, Call, Response, charge_of
from ..tags import current_tags
from .book import Ledger
from .columns import Unfit, integer
from .entries import Entry, Source, Status, answered, service_of, user_account
from .prices import FREE_OPERATIONS, Prices, create_key, edit_key

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["Recorder"]

_BUCKETS = ("dailyCredit", "monthlyCredit", "defaultCredit")
"""The three balances the spec shows on a user and in a create's answer."""


class Recorder:
    """The HTTP hook that feeds one ledger: entries for operations, prices and balances from reads."""

    def __init__(self, ledger: Ledger, config: Config, *, adopts: bool = True) -> None:
        self.ledger, self.config, self.wire = ledger, config, config.wire
        self.adopts = adopts
        """Whether the user a ``me()`` shows names the ledger's account (not when one was given)."""
        self._unpriced: dict[int, tuple[Entry, str, int]] = {}
        """Image id -> the unpriced create that made it, its price key and the images it was charged
        for: the image's metadata shows the price."""
        self._in_doubt: dict[str, tuple[Entry, float | None]] = {}
        """Request id -> an edit whose answer never came, and its price: its cancel's answer tells
        whether it was charged."""
        self._holds: dict[int, int] = {}
        """id() of a call in flight -> the budget hold taken for it (see ``budgets``)."""
        self._plan: dict[str, float] | None = None
        """The plan's prices (``cost:<type>``) from this client's last ``me()`` answer; None before one."""
        self._reads: dict[str, Callable[[Call, Response], None]] = {
            "me": self._read_me, "styles": self._read_styles, "usage": self._read_usage, "image": self._read_image}
        """What each named read teaches (the names ``Call.read`` gives)."""

    def before(self, call: Call) -> Call | None:
        """Hold an operation's estimated cost against the budgets of its tags and account (which may
        refuse it). While a budget applies, the operation's price is not known exactly and no ``me()``
        has answered, the read of the plan's prices to send first: a budget holds from the first call."""
        tags = current_tags()
        if call.operation is None or call.operation in FREE_OPERATIONS:
            return None
        try:
            hold = self.ledger.hold(tags, lambda: self._estimate(call))  # estimated only when a budget applies
        except _Unpriced:
            return ME
        if hold is not None:
            self._holds[id(call)] = hold
        return None

    def __call__(self, call: Call, response: Response | None, error: BaseException | None, seconds: float) -> None:
        """Record one finished request: on the ledger's writer, never on the thread (or event loop)
        that sends requests, for a shared database may stop answering (see ``writer``). The plan's
        prices a ``me()`` shows are kept at once, for the next hold."""
        if call.read == "me" and response is not None:
            payload = _json(response)
            self._plan = _plan_prices(payload) if isinstance(payload, dict) else {}
        self.ledger.later(lambda: self._record(call, response, error, seconds))

    def _record(self, call: Call, response: Response | None, error: BaseException | None, seconds: float) -> None:
        if call.operation is not None:
            self._operation(call, call.operation, response, error, seconds)
        elif call.read in self._reads and response is not None:
            self._reads[call.read](call, response)

    # --- operations ----------------------------------------------------------------------------

    def _operation(self, call: Call, operation: str, response: Response | None, error: BaseException | None,
                   seconds: float) -> None:
        entry, charged_images = self.entry(call, response, error, seconds)
        self.ledger.record(entry, hold=self._holds.pop(id(call), None))
        if operation == "create" and answered(entry):
            self._created(entry, self._create_key(call), charged_images)
        elif entry.request_id and getattr(error, "may_have_executed", False):
            self._in_doubt[entry.request_id] = (entry, self._price(call, 1))
        elif operation == "cancelEdit" and response is not None:
            self._cancelled(call.request_id, _json(response))

    def entry(self, call: Call, response: Response | None, error: BaseException | None,
              seconds: float) -> tuple[Entry, int]:
        """The ledger entry of one finished request, with its credits when they can be known, and
        how many images the answer charged for (an image that failed at once was refunded at once)."""
        assert call.operation is not None
        body = _body(call)
        entry = Entry(operation=call.operation, status=Status.NO_RESPONSE, latency=round(seconds, 4),
                      source_id=call.source_id, request_id=call.request_id, group_id=body.get(self.wire.group_id),
                      style_id=_integer(body.get(self.wire.style_id)))
        if error is not None:  # refused or unanswered: nothing known to be charged (a lost answer is
            # settled by the workflow that sent it, or shows in the reconciliation)
            entry.http_status = getattr(error, "status", None)
            entry.status = Status.FAILED if entry.http_status else Status.NO_RESPONSE
            entry.error = getattr(error, "data", None) or type(error).__name__
            if getattr(error, "may_have_executed", False):
                entry.error += " (may have run)"
            return entry, 0
        assert response is not None
        entry.status, entry.http_status = Status.ANSWERED, response.status_code
        charged, remaining = charge_of(response, self.config)
        entry.balance = None if remaining is None else float(remaining)
        if charged is not None:
            entry.credits, entry.source = float(charged), Source.REPORTED
        payload = _json(response)
        images = _images(payload) if isinstance(payload, dict) else []
        charged_images = sum(image.get("generationStatus") != "FAILED" for image in images)
        if isinstance(payload, dict):
            entry.image_ids = [image["imageId"] for image in images]  # held to ids when recorded
            entry.daily_credit, entry.monthly_credit, entry.default_credit = (
                _number(payload.get(name)) for name in _BUCKETS)
            if entry.balance is None:
                entry.balance = _total(payload)
        if entry.credits is None:
            entry.credits = self._price(call, charged_images)
            entry.source = None if entry.credits is None else Source.PRICED
        return entry, charged_images

    def _created(self, entry: Entry, key: str, images: int) -> None:
        """A create's price: learned when reported, else awaited from its images' metadata."""
        if entry.credits is None:
            self._unpriced.update((image_id, (entry, key, images)) for image_id in entry.image_ids)
        elif entry.source == Source.REPORTED and images:
            self.ledger.learn_price(key, entry.credits / images, Source.REPORTED)

    def _cancelled(self, request_id: str | None, answer: Any) -> None:
        """A cancel's answer settles the edit it cancelled, if that edit's own answer was lost."""
        entry, price = self._in_doubt.pop(request_id, (None, None)) if request_id else (None, None)
        if entry is None:
            return
        if answer == self.wire.cancelled:
            self.ledger.settle(entry, 0.0, Source.PRICED)
        elif answer == self.wire.not_running and price is not None:
            self.ledger.settle(entry, price, Source.PRICED)

    def _estimate(self, call: Call) -> float:
        """An operation's cost before it is sent: its price, else the dearest price known for its kind
        (the ledger's and the plan's). _Unpriced when that is not exact and the plan was not read yet."""
        prices, body = Prices({**self.ledger.prices(), **(self._plan or {})}), _body(call)
        if call.operation == "create":
            count = _integer(body.get(self.wire.count)) or 1
            style, collection = _integer(body.get(self.wire.style_id)), _integer(body.get(self.wire.collection_id))
            exact = prices.bound(style, collection)[1] is None
            cost = prices.create(style, collection, count)
        else:
            assert call.operation is not None
            exact = prices.exact(edit_key(call.operation, self._scale(call))) is not None
            cost = prices.edit(call.operation, self._scale(call))
        if not exact and self._plan is None:
            raise _Unpriced
        return cost

    def _price(self, call: Call, images: int) -> float | None:
        """What an operation cost, when its price is known (``images``: those a create was charged for)."""
        if call.operation in FREE_OPERATIONS:
            return 0.0
        prices = Prices(self.ledger.prices())
        if call.operation == "create":
            unit = prices.exact(self._create_key(call))
            return None if unit is None else unit * images
        assert call.operation is not None
        return prices.exact(edit_key(call.operation, self._scale(call)))

    def _create_key(self, call: Call) -> str:
        body = _body(call)
        return create_key(_integer(body.get(self.wire.style_id)), _integer(body.get(self.wire.collection_id)))

    def _scale(self, call: Call) -> str | None:
        return _body(call).get(self.wire.enhance_scale) if call.operation == "enhance" else None

    # --- reads: prices and balances ------------------------------------------------------------

    def _read_me(self, call: Call, response: Response) -> None:
        """Whose the key is, the plan's prices, and the balance."""
        payload = _json(response)
        if not isinstance(payload, dict):
            return
        if self.adopts and (user_id := _integer(payload.get("userId"))) is not None:
            self.ledger.adopt(user_account(service_of(self.config.base_url), user_id))
        for key, credit in _plan_prices(payload).items():
            self.ledger.learn_price(key, credit, Source.PRICED)
        if (total := _total(payload)) is not None:
            self.ledger.reading(total)

    def _read_styles(self, call: Call, response: Response) -> None:
        """The caller's styles' prices."""
        payload = _json(response)
        for style in payload if isinstance(payload, list) else []:
            if isinstance(style, dict) and style.get("styleId") and (cost := _number(style.get("creditCost"))) is not None:
                self.ledger.learn_price(create_key(style=int(style["styleId"])), cost, Source.PRICED)

    def _read_usage(self, call: Call, response: Response) -> None:
        """The balance."""
        payload = _json(response)
        if isinstance(payload, dict) and (current := _number(payload.get("currentCredit"))) is not None:
            self.ledger.reading(current)

    def _read_image(self, call: Call, response: Response) -> None:
        """An image's creditCost prices the create that made it, and later ones of its kind. Only an
        image of an unpriced create is read: a status poll or a binary is left unparsed."""
        if call.source_id not in self._unpriced:
            return
        payload = _json(response)
        if not isinstance(payload, dict) or (unit := _number(payload.get("creditCost"))) is None:
            return
        entry, key, images = self._unpriced.pop(call.source_id)
        for other in entry.image_ids:
            self._unpriced.pop(other, None)
        self.ledger.settle(entry, unit * images, Source.PRICED)
        self.ledger.learn_price(key, unit, Source.PRICED)


class _Unpriced(Exception):
    """An operation's price is not known exactly, and the plan's prices were not read yet."""


def _plan_prices(payload: dict[str, Any]) -> dict[str, float]:
    """The plan's prices a user's answer shows, by price key (``cost:<CreditCostInfo type>``)."""
    plan = payload.get("Plan")
    costs = plan.get("CreditCostInfo") if isinstance(plan, dict) else None
    return {f"cost:{cost['type']}": credit for cost in (costs if isinstance(costs, list) else [])
            if isinstance(cost, dict) and cost.get("type") and (credit := _number(cost.get("credit"))) is not None}


def _body(call: Call) -> dict[str, Any]:
    return call.json if isinstance(call.json, dict) else {}


def _images(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The images a create or edit answer shows."""
    images = payload.get("images") or ([payload["image"]] if isinstance(payload.get("image"), dict) else [])
    return [image for image in images if isinstance(image, dict) and image.get("imageId")]


def _total(payload: dict[str, Any]) -> float | None:
    """The total balance a user or a create's answer shows (None unless all three buckets do)."""
    buckets = [_number(payload.get(name)) for name in _BUCKETS]
    known = [bucket for bucket in buckets if bucket is not None]
    return sum(known) if len(known) == len(buckets) else None


def _integer(value: Any) -> int | None:
    """An id or a count as the request gave it; None for what is not one (a style's name:
    the service refuses it, and the ledger holds only ids in its id columns)."""
    try:
        return integer(value)
    except Unfit:
        return None


def _json(response: Response) -> Any:
    try:
        return json.loads(response.content) if response.content else None
    except ValueError:
        return None


def _number(value: Any) -> float | None:
    """A JSON number, or a numeric string (the spec's samples give credits as strings)."""
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
