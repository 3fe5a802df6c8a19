"""The one price model: what an operation costs, from the plan, the caller's styles and what the
ledger has learned. The recorder prices entries with it; ``Batch.estimate`` and ``Chain.estimate``
price work before it runs with it.

Prices are kept by key, as the ledger stores them: ``cost:<CreditCostInfo type>`` (the plan's rows:
``generate``, ``reference``, ``collection``, ``enhance-2x``, ``removeBg``...), ``style:<id>`` and
``collection:<id>`` (credits per image). A create names exactly one of a style, a collection or a
reference image; an edit's CreditCostInfo type is its operation's name (enhance: per scale).

A style the caller does not own (a public one) has no price the API shows; until a charge, an
image's creditCost or the balances show the real one, it is assumed to cost the dearest generation
price known (an upper bound, so a budget is never passed by a guess), and an ``Estimate`` says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..models import Style, User

__all__ = ["Prices", "Estimate", "create_key", "edit_key", "GENERATION_TYPES", "FREE_OPERATIONS"]

GENERATION_TYPES = ("generate", "reference", "collection", "collection-2x")
"""CreditCostInfo types that price a generated image."""
FREE_OPERATIONS = ("cancelEdit",)
"""Operations that never cost anything."""
_COST, _STYLE, _COLLECTION = "cost:", "style:", "collection:"


def create_key(style: int | None = None, collection: int | None = None) -> str:
    """The price key of one image of a create: by its style, else its collection, else a
    reference image's (the spec's three kinds of create)."""
    if style is not None:
        return f"{_STYLE}{int(style)}"
    if collection is not None:
        return f"{_COLLECTION}{int(collection)}"
    return f"{_COST}reference"


def edit_key(operation: str, scale: str | None = None) -> str:
    """The price key of an edit (``operation`` as the request names it: enhance, cleanUp, removeBg...;
    enhance is priced per scale)."""
    return f"{_COST}enhance-{scale or '2x'}" if operation == "enhance" else f"{_COST}{operation}"


@dataclass
class Prices:
    """Credit prices of one account, by key (see the module)."""

    known: dict[str, float] = field(default_factory=dict)
    """Price key -> credits per operation (an edit) or per image (a create)."""
    simultaneous_limit: int = 1
    """The plan's (or the enterprise's) concurrent generation limit."""

    @classmethod
    def of_account(cls, user: User, styles: Iterable[Style] = (), learned: Mapping[str, float] | None = None) -> Prices:
        """Prices from ``me()``, ``styles()`` and those a ledger learned (``Ledger.prices()``); what the
        service shows now wins over what was learned."""
        plan = user.plan
        known = dict(learned or {})
        known.update({f"{_COST}{cost.type}": float(cost.credit) for cost in (plan and plan.credit_cost_info) or []
                      if cost.type and cost.credit is not None})
        known.update({create_key(style=style.style_id): float(style.credit_cost) for style in styles
                      if style.style_id is not None and style.credit_cost is not None})
        limits = [getattr(user.enterprise, "simultaneous_limit", None), plan and plan.simultaneous_limit]
        return cls(known, next((int(limit) for limit in limits if limit), 1))

    def learn(self, key: str, credits: float) -> None:
        """Remember the real price of ``key``."""
        self.known[key] = float(credits)

    def exact(self, key: str) -> float | None:
        """The price of ``key`` when known (never guessed)."""
        return self.known.get(key)

    def per_image(self, style: int | None = None, collection: int | None = None) -> float:
        """Credits one image of a create costs: its price, else an upper bound."""
        return self.bound(style, collection)[0]

    def bound(self, style: int | None = None, collection: int | None = None) -> tuple[float, str | None]:
        """(credits, basis) of one image of a create: its price and None when known, else an upper
        bound and the price key it was taken from (the dearest of its kind the account shows)."""
        known = self.exact(create_key(style, collection))
        if known is not None:
            return known, None
        if collection is not None:  # premium collections cost collection-2x; the API does not say which are
            keys: tuple[str, ...] = (f"{_COST}collection", f"{_COST}collection-2x")
        else:
            keys = (*(f"{_COST}{kind}" for kind in GENERATION_TYPES),
                    *(key for key in self.known if key.startswith((_STYLE, _COLLECTION))))
        dearest = max((key for key in keys if key in self.known), key=self.known.__getitem__, default=None)
        return (0.0, "") if dearest is None else (self.known[dearest], dearest)

    def estimate(self, creates: Iterable[tuple[int | None, int | None, int]]) -> Estimate:
        """What creates cost (each ``(style, collection, count)``), saying which prices are bounds."""
        total, unknown, bases = 0.0, dict[str, int](), set[tuple[float, str]]()
        for style, collection, count in creates:
            credits, basis = self.bound(style, collection)
            total += credits * count
            if basis is not None:
                key = create_key(style, collection)
                unknown[key] = unknown.get(key, 0) + count
                bases.add((credits, basis))
        return Estimate(total, unknown=unknown, bounds=sorted(bases))

    def create(self, style: int | None = None, collection: int | None = None, count: int = 1) -> float:
        """Credits a create of ``count`` images costs (an upper bound while its price is unknown)."""
        return self.per_image(style, collection) * count

    def edit_estimate(self, operation: str, scale: str | None = None) -> Estimate:
        """What an edit costs, saying so when its price is a bound (the dearest edit price known)."""
        credits, key = self.edit(operation, scale), edit_key(operation, scale)
        if operation in FREE_OPERATIONS or self.exact(key) is not None:
            return Estimate(credits)
        dearest = max((k for k in self.known if k.startswith(_COST) and self.known[k] == credits
                       and k.removeprefix(_COST) not in GENERATION_TYPES), default="")
        return Estimate(credits, unknown={key: 1}, bounds=[(credits, dearest)])

    def edit(self, operation: str, scale: str | None = None) -> float:
        """Credits an edit costs: its price, else the dearest edit price known (0 when none is)."""
        if operation in FREE_OPERATIONS:
            return 0.0
        known = self.exact(edit_key(operation, scale))
        if known is not None:
            return known
        generation = {f"{_COST}{kind}" for kind in GENERATION_TYPES}
        return self._dearest(*(key for key in self.known if key.startswith(_COST) and key not in generation))

    def _dearest(self, *keys: str) -> float:
        return max((self.known[key] for key in keys if key in self.known), default=0.0)


class Estimate(float):
    """Credits work costs before it runs: the number a budget can trust (an upper bound where a price
    is unknown), with what it rests on. ``unknown``: price key -> images whose price this account has
    not seen; ``bounds``: the (credits per image, price key) each of those was counted at."""

    unknown: dict[str, int]
    bounds: list[tuple[float, str]]

    def __new__(cls, credits: float, *, unknown: Mapping[str, int] | None = None,
                bounds: Iterable[tuple[float, str]] = ()) -> Estimate:
        made = super().__new__(cls, credits)
        made.unknown, made.bounds = dict(unknown or {}), list(bounds)
        return made

    @property
    def exact(self) -> bool:
        """Whether every price was known (else the figure is an upper bound)."""
        return not self.unknown

    def notes(self, budget: float | None = None, spent: float = 0.0) -> list[str]:
        """What the figure rests on, in words: the prices it bounded and how, and a warning when it
        passes what is left of ``budget`` once ``spent`` (by earlier runs) is taken off."""
        lines = []
        if self.unknown:
            images = sum(self.unknown.values())
            how = " or ".join(f"{credits:g} ({key.removeprefix(_COST)})" if key else "0 (no price known)"
                              for credits, key in self.bounds)
            lines.append(f"{images} image{'s' if images != 1 else ''} of {_listed(self.unknown)}, whose price this "
                         f"account has not seen: counted at {how} an image, the dearest price of its kind the plan "
                         f"shows; the charges will show the real one")
        if budget is not None and self > budget - spent:
            limit = f"the {max(budget - spent, 0):g} credits left of the budget of {budget:g}" if spent else \
                f"the budget of {budget:g}"
            lines.append(f"warning: {'' if self.exact else 'up to '}{self:g} credits, more than {limit}: the run "
                         f"stops rather than pass it")
        return lines

    def __repr__(self) -> str:
        return f"{float(self)!r}" if self.exact else f"{float(self)!r} (at most: {len(self.unknown)} price(s) unknown)"


def _listed(keys: Iterable[str]) -> str:
    """Price keys in words: ``styles 1 and 2``, ``collection 4``, ``reference images``."""
    named: dict[str, list[str]] = {}
    for key in keys:
        kind, _, value = key.partition(":")
        named.setdefault(kind if kind in ("style", "collection") else value, []).append(value)
    parts = []
    for kind, values in named.items():
        if kind not in ("style", "collection"):
            parts.append("reference images" if kind == "reference" else kind)
        else:
            parts.append(f"{kind}{'s' if len(values) > 1 else ''} " + (", ".join(values[:-1]) + " and " + values[-1]
                                                                     if len(values) > 1 else values[0]))
    return " and ".join(parts)
