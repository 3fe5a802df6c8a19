"""How ledger entries get their credits, with or without the sandbox's extensions.

An entry's credits come, in order of preference, from:

- ``reported``: the credit headers of its answer (a sandbox extension; a service may not send them);
- ``priced``: the account's prices, which this module learns from the reads the toolkit makes
  anyway: the plan's CreditCostInfo (``me()``), the caller's styles' ``creditCost`` (``styles()``),
  and an image's ``creditCost`` (its metadata), which prices the create that made it and every later
  create with the same style or collection;
- ``reconciled``: the balances the service reported (the three in every create answer, and each
  ``me()``/``usage()``, read when a batch or chain starts and ends and when a report is made): what a
  stretch between two readings spent beyond the entries that are known is given to those that are not.

The reconciliation view lays the two side by side per stretch, so records that disagree with the
bill (work from another machine, a grant, a charge whose answer was lost) show at once.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from .ledger import BALANCE, Entry, Ledger
from .tags import current_tags
from .workflows.pricing import GENERATION_TYPES

if TYPE_CHECKING:
    import pandas as pd

    from ._http import Call, Response
    from .config import Config

__all__ = ["Recorder", "reconcile", "reconciliation", "create_price_key", "edit_price_key"]

_META_PATH = re.compile(r"^/api/images/(\d+)$")
_ACCOUNT_READS = ("/api/users/me", "/api/users/me/styles", "/api/users/me/usage")
_FREE = ("cancelEdit",)
"""Operations that never cost anything."""
_CANCELLED, _FINISHED = "cancelled", "not_running"
"""cancelEdit's answers: the edit was stopped (nothing charged) / had finished (charged)."""


def create_price_key(options: dict[str, Any]) -> str | None:
    """The prices key of one image of a create with these options (the client's names)."""
    if options.get("style") is not None:
        return f"style:{int(options['style'])}"
    if options.get("collection") is not None:
        return f"collection:{int(options['collection'])}"
    return "cost:reference" if options.get("image") is not None else None


def edit_price_key(operation: str, scale: str | None = None) -> str:
    """The prices key of an edit (the CreditCostInfo type; enhance is priced per scale)."""
    return f"cost:enhance-{scale or '2x'}" if operation == "enhance" else f"cost:{operation}"


class Recorder:
    """The HTTP hook that feeds one ledger: entries for operations, prices and balances from reads."""

    def __init__(self, ledger: Ledger, config: Config) -> None:
        self.ledger, self.config = ledger, config
        self._unpriced: dict[int, tuple[Entry, str | None, int]] = {}
        """Image id -> the unpriced create that made it, its prices key and the images it was charged
        for: the image's metadata shows the price."""
        self._in_doubt: dict[str, tuple[Entry, float | None]] = {}
        """Request id -> an edit whose answer never came, and its price: its cancel's answer tells
        whether it was charged."""
        self._holds: dict[int, int] = {}
        """id() of a call in flight -> the budget hold taken for it (see ``budgets``)."""

    def before(self, call: Call) -> None:
        """Hold a tagged operation's estimated cost against its tags' budgets (which may refuse it)."""
        tags = current_tags()
        if call.operation is None or call.operation in _FREE or not tags:
            return
        hold = self.ledger.hold(tags, self._estimate(call.operation, call.json if isinstance(call.json, dict) else {}))
        if hold is not None:
            self._holds[id(call)] = hold

    def __call__(self, call: Call, response: Response | None, error: BaseException | None, seconds: float) -> None:
        operation = call.operation
        if operation is not None:
            entry, charged_images = self.entry(call, response, error, seconds, operation)
            self.ledger.record(entry, hold=self._holds.pop(id(call), None))
            body = call.json if isinstance(call.json, dict) else {}
            if entry.operation == "create" and entry.status.startswith("2"):
                self._created(entry, _create_key(self.config, body), charged_images)
            elif entry.request_id and getattr(error, "may_have_executed", False):
                self._in_doubt[entry.request_id] = (entry, self._price(operation, body, 1))
            elif operation == "cancelEdit" and response is not None:
                self._cancelled(call.request_id, _json(response))
        elif call.method == "GET" and response is not None:
            self.read(call.path, response)

    # --- reads: prices and balances ------------------------------------------------------------

    def read(self, path: str, response: Response) -> None:
        """Learn what a read shows: prices (``me``, ``styles``, image metadata) and the balance."""
        meta = _META_PATH.match(path)
        if not (path in _ACCOUNT_READS or (meta and int(meta.group(1)) in self._unpriced)):
            return  # a status poll or a binary (perhaps streamed, unread): nothing to learn
        payload = _json(response)
        if path == "/api/users/me" and isinstance(payload, dict):
            plan = payload.get("Plan") or {}
            for cost in plan.get("CreditCostInfo") or []:
                if isinstance(cost, dict) and cost.get("type") and (credit := _number(cost.get("credit"))) is not None:
                    self.ledger.learn_price(f"cost:{cost['type']}", credit, "priced")
            buckets = [_number(payload.get(name)) for name in ("defaultCredit", "dailyCredit", "monthlyCredit")]
            known = [bucket for bucket in buckets if bucket is not None]
            if len(known) == len(buckets):
                self.ledger.reading(sum(known))
        elif path == "/api/users/me/styles" and isinstance(payload, list):
            for style in payload:
                if isinstance(style, dict) and style.get("styleId") and (style_cost := _number(style.get("creditCost"))) is not None:
                    self.ledger.learn_price(f"style:{int(style['styleId'])}", style_cost, "priced")
        elif path == "/api/users/me/usage" and isinstance(payload, dict):
            if (current := _number(payload.get("currentCredit"))) is not None:
                self.ledger.reading(current)
        elif meta and isinstance(payload, dict) and (image_cost := _number(payload.get("creditCost"))) is not None:
            self._priced_by_image(int(meta.group(1)), image_cost)

    def _created(self, entry: Entry, key: str | None, images: int) -> None:
        """A create's price: learned when reported, else awaited from its images' metadata."""
        if entry.credits is None:
            self._unpriced.update((image_id, (entry, key, images)) for image_id in entry.image_ids)
        elif entry.source == "reported" and key is not None and images:
            self.ledger.learn_price(key, entry.credits / images, "reported")

    def _cancelled(self, request_id: str | None, answer: Any) -> None:
        """A cancel's answer settles the edit it cancelled, if that edit's own answer was lost."""
        entry, price = self._in_doubt.pop(request_id, (None, None)) if request_id else (None, None)
        if entry is None:
            return
        if answer == _CANCELLED:
            self.ledger.settle(_seq(entry), 0.0, "priced")
        elif answer == _FINISHED and price is not None:
            self.ledger.settle(_seq(entry), price, "priced")

    def _priced_by_image(self, image_id: int, unit: float) -> None:
        """An image's creditCost prices the create that made it, and later ones of its kind."""
        entry, key, images = self._unpriced.pop(image_id)
        for other in entry.image_ids:
            self._unpriced.pop(other, None)
        self.ledger.settle(_seq(entry), unit * images, "priced")
        if key is not None:
            self.ledger.learn_price(key, unit, "priced")

    # --- operations ----------------------------------------------------------------------------

    def entry(self, call: Call, response: Response | None, error: BaseException | None, seconds: float,
              operation: str) -> tuple[Entry, int]:
        """The ledger entry of one finished request, with its credits when they can be known, and
        how many images the answer charged for (an image that failed at once was refunded at once)."""
        from ._http import charge_of  # here: reading a ledger (reports, the CLI) needs no HTTP stack

        wire, body = self.config.wire, call.json if isinstance(call.json, dict) else {}
        entry = Entry(operation=operation, status="no_response", latency=round(seconds, 4), source_id=call.source_id,
                      request_id=call.request_id, group_id=body.get(wire.group_id),
                      style_id=body.get(wire.style_id))
        if error is not None:  # refused or unanswered: nothing known to be charged (a lost answer is
            # settled by the workflow that sent it, or shows in the reconciliation)
            entry.status = str(getattr(error, "status", None) or "no_response")
            entry.error = getattr(error, "data", None) or type(error).__name__
            if getattr(error, "may_have_executed", False):
                entry.error += " (may have run)"
            return entry, 0
        assert response is not None
        entry.status = str(response.status_code)
        charged, remaining = charge_of(response, self.config)
        entry.balance = None if remaining is None else float(remaining)
        if charged is not None:
            entry.credits, entry.source = float(charged), "reported"
        payload = _json(response)
        images = _images(payload) if isinstance(payload, dict) else []
        charged_images = sum(image.get("generationStatus") != "FAILED" for image in images)
        if isinstance(payload, dict):
            entry.image_ids = [int(i["imageId"]) for i in images]
            buckets = {name: _number(payload.get(name)) for name in ("dailyCredit", "monthlyCredit", "defaultCredit")}
            entry.daily_credit, entry.monthly_credit, entry.default_credit = buckets.values()
            known = [bucket for bucket in buckets.values() if bucket is not None]
            if entry.balance is None and len(known) == len(buckets):
                entry.balance = sum(known)
        if entry.credits is None:
            entry.credits = self._price(operation, body, charged_images)
            entry.source = None if entry.credits is None else "priced"
        return entry, charged_images

    def _estimate(self, operation: str, body: dict) -> float:
        """An operation's cost before it is sent: its price, else the dearest price known for its kind
        (0 while the ledger knows none: reading ``me()`` teaches it the plan's)."""
        count = int(body.get(self.config.wire.count) or 1) if operation == "create" else 1
        price = self._price(operation, body, count)
        if price is not None:
            return price
        kinds = ("style:", "collection:", *(f"cost:{kind}" for kind in GENERATION_TYPES))
        known = [credits for key, credits in self.ledger.prices().items()
                 if key.startswith(kinds if operation == "create" else ("cost:",))]
        return max(known, default=0.0) * count

    def _price(self, operation: str, body: dict, images: int) -> float | None:
        if operation in _FREE:
            return 0.0
        prices = self.ledger.prices()
        if operation == "create":
            key = _create_key(self.config, body)
            return None if key not in prices else prices[key] * images
        scale = body.get("scaleSize") if operation == "enhance" else None
        return prices.get(edit_price_key(operation, scale))


def _create_key(config: Config, body: dict) -> str | None:
    wire = config.wire
    return create_price_key({"style": body.get(wire.style_id), "collection": body.get(wire.collection_id),
                             "image": body.get("image")})


def _images(payload: dict) -> list[dict]:
    """The images a create or edit answer shows."""
    images = payload.get("images") or ([payload["image"]] if isinstance(payload.get("image"), dict) else [])
    return [image for image in images if isinstance(image, dict) and image.get("imageId")]



# --- reconciliation ----------------------------------------------------------------------------

def _stretches(entries: list[Entry], quiet: bool = False) -> list[tuple[Entry, Entry, list[Entry]]]:
    """(reading before, reading after, entries after the first up to and including the second).
    Readings are every balance an answer showed, or with ``quiet`` only those of reads (``me()``,
    ``usage()``): a create's answer may already show the charge of another create still in flight,
    while the toolkit reads the balance when nothing of its own is (a batch's or chain's ends)."""
    stretches: list[tuple[Entry, Entry, list[Entry]]] = []
    start: Entry | None = None
    between: list[Entry] = []
    for entry in entries:
        if start is not None:
            between.append(entry)
        if entry.balance is not None and entry.status.startswith("2") and (entry.operation == BALANCE or not quiet):
            if start is not None:
                stretches.append((start, entry, between))
            start, between = entry, []
    return stretches


def _seq(entry: Entry) -> int:
    """An entry's place in the ledger: set by ``Ledger.record`` and read back by ``entries()``,
    the only ways the entries settled here are made."""
    assert entry.seq is not None
    return entry.seq


def _balance(reading: Entry) -> float:
    """The balance of a reading ``_stretches`` chose (it chooses only entries that show one)."""
    assert reading.balance is not None
    return reading.balance


def _unknown(entry: Entry) -> bool:
    return entry.credits is None and entry.operation != BALANCE and entry.status.startswith("2")


def reconcile(ledger: Ledger) -> None:
    """Give each answered operation whose credits are unknown its share of what its stretch spent
    beyond the known entries (by images made, for creates), and learn the price when one create
    had the stretch to itself."""
    for before, after, between in _stretches(ledger.entries(readings=True)):
        unknown = [entry for entry in between if _unknown(entry)]
        if not unknown:
            continue
        spent = _balance(before) - _balance(after)
        unexplained = spent - sum(entry.credits or 0 for entry in between if not _unknown(entry))
        if unexplained < 0:
            continue  # a grant or a refund nobody recorded: leave it to the reconciliation view
        weights = [max(len(entry.image_ids), 1) for entry in unknown]
        for entry, weight in zip(unknown, weights):
            entry.credits = unexplained * weight / sum(weights)
            ledger.settle(_seq(entry), entry.credits, "reconciled")
        alone = len(unknown) == 1 and unknown[0].operation == "create" and unknown[0].image_ids
        if alone and unknown[0].style_id is not None:
            ledger.learn_price(f"style:{int(unknown[0].style_id)}", unexplained / len(unknown[0].image_ids),
                               "reconciled")


def reconciliation(entries: list[Entry]) -> pd.DataFrame:
    """One line per stretch between two balance reads: its times and balances, what the balance
    says was spent, what the ledger says, how many entries are still unknown, and the difference."""
    import pandas as pd

    rows = [{"from": before.time, "to": after.time, "balance_before": before.balance,
             "balance_after": after.balance, "spent_by_balance": _balance(before) - _balance(after),
             "spent_by_ledger": sum(entry.credits or 0 for entry in between),
             "unknown": sum(_unknown(entry) for entry in between)}
            for before, after, between in _stretches(entries, quiet=True)]
    columns = ["from", "to", "balance_before", "balance_after", "spent_by_balance", "spent_by_ledger", "unknown"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["difference"] = frame["spent_by_balance"] - frame["spent_by_ledger"]
    for column in ("from", "to"):
        frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    return frame


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

