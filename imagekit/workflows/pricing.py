"""Prices before anything runs: the plan's CreditCostInfo rows, the caller's own styles, and what
the ledger has learned.

A style the caller does not own (a public one) has no price the API shows; it is assumed to cost
the dearest generation price the plan lists until a charge, an image's creditCost or the balances
show the real one (the ledger keeps it, so later estimates use it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Prices", "edit_cost_type", "GENERATION_TYPES"]

GENERATION_TYPES = ("generate", "reference", "collection", "collection-2x")
"""CreditCostInfo types that price a generated image."""


def edit_cost_type(operation: str, params: Mapping[str, Any]) -> str:
    """The CreditCostInfo type that prices an edit (enhance is priced per scale)."""
    if operation == "enhance":
        return f"enhance-{params.get('scale', '2x')}"
    return {"clean_up": "cleanUp", "remove_bg": "removeBg"}.get(operation, operation)


@dataclass
class Prices:
    """Credit prices of one account."""

    costs: dict[str, float]
    """CreditCostInfo type -> credits."""
    styles: dict[int, float] = field(default_factory=dict)
    """Style id -> credits per image, for the styles whose price is known."""
    collections: dict[int, float] = field(default_factory=dict)
    """Collection id -> credits per image, once seen."""
    simultaneous_limit: int = 1
    """The plan's (or the enterprise's) concurrent generation limit."""

    @classmethod
    def from_account(cls, user: Any, styles: list[Any], learned: Mapping[str, float] | None = None) -> Prices:
        """Prices from ``me()`` and ``styles()``, and those a ledger learned (``Ledger.prices()``)."""
        plan = user.plan
        costs = {c.type: float(c.credit) for c in (plan.credit_cost_info or []) if c.type and c.credit is not None}
        limits = [getattr(user.enterprise, "simultaneous_limit", None), plan.simultaneous_limit]
        limit = next((int(x) for x in limits if x), 1)
        prices = cls(costs=costs, simultaneous_limit=limit)
        for key, credits in (learned or {}).items():
            kind, _, ident = key.partition(":")
            if kind in ("style", "collection") and ident.isdigit():
                getattr(prices, f"{kind}s")[int(ident)] = float(credits)
        prices.styles.update({int(s.style_id): float(s.credit_cost) for s in styles
                              if s.style_id is not None and s.credit_cost is not None})
        return prices

    def exact(self, options: Mapping[str, Any]) -> float | None:
        """Credits per image of a create with these options, when known (not guessed)."""
        if options.get("collection") is not None:
            return self.collections.get(int(options["collection"]))
        if options.get("style") is None:
            return self.costs.get("reference")
        return self.styles.get(int(options["style"]))

    def unit(self, options: Mapping[str, Any]) -> float:
        """Credits per image of a create with these options (an upper bound when not known)."""
        known = self.exact(options)
        if known is not None:
            return known
        if options.get("collection") is not None:
            # Premium collections cost collection-2x, and the API does not say which ones are premium.
            return max(self.costs.get("collection", 0), self.costs.get("collection-2x", 0))
        return max([self.costs.get(t, 0) for t in GENERATION_TYPES] + list(self.styles.values()))

    def create(self, options: Mapping[str, Any]) -> float:
        """Credits a create with these options costs."""
        return self.unit(options) * int(options.get("count") or 1)

    def learn(self, options: Mapping[str, Any], unit: float) -> None:
        """Remember the real price of one image of a create with these options."""
        if options.get("collection") is not None:
            self.collections[int(options["collection"])] = unit
        elif options.get("style") is not None:
            self.styles[int(options["style"])] = unit

    def edit(self, operation: str, params: Mapping[str, Any]) -> float:
        """Credits an edit costs."""
        return self.costs.get(edit_cost_type(operation, params), 0)
