"""Sending a desk's picks on: an edit chain over the selected images, quoted before it runs.

The quote is the chain's estimate (the plan's prices, ``Chain.estimate``) times the picks, with the
balance before and after; it is refused in one line, before anything is sent, past the plan's
``maxMultiSelect``, a budget, or what the balance (and the plan's ``minusCreditAllowed``) allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import BudgetExceededError, ValidationError
from ..images import Image

if TYPE_CHECKING:
    from ..workflows.chain import Chain, ChainResult
    from .desk import Desk

__all__ = ["Quote", "quote", "sent", "credits_of"]


@dataclass(frozen=True)
class Quote:
    """What sending the picks through a chain costs, before it is sent."""

    picks: int
    """Images selected."""
    per_image: float
    """Credits the chain costs on one image."""
    credits: float
    """Credits in all: ``per_image`` times ``picks``."""
    balance: float
    """The balance now."""
    chain: str
    """The chain, as written."""

    @property
    def balance_after(self) -> float:
        """The balance once the chain has run on every pick."""
        return self.balance - self.credits

    @property
    def summary(self) -> str:
        """The price in one line, as the desk's widget shows it beside its Send button."""
        return (f"{self.chain} on {self.picks} selected image{'' if self.picks == 1 else 's'}: {self.credits:g} credits "
                f"({self.per_image:g} each); balance {self.balance:g} -> {self.balance_after:g}.")

    def __str__(self) -> str:
        return f"{self.summary} Send with confirm=True."

    def _repr_html_(self) -> str:
        import html

        return f"<p>{html.escape(str(self))}</p>"


def quote(desk: Desk, chain: Chain, budget: float | None = None) -> Quote:
    """The price of ``chain`` over ``desk``'s selection, refused in one line when it may not be sent."""
    picks = desk.selected
    if not picks:
        raise ValidationError("nothing is selected: select the images to send first (desk.select(image))",
                              field="selected")
    if not len(chain):
        raise ValidationError("the chain has no step: add edits first (imagekit.chain().enhance('2x'))",
                              field="chain")
    client = desk._reach("pricing the picks")
    user = client.me()
    plan = user.plan
    most = getattr(plan, "max_multi_select", None)
    if most is not None and len(picks) > int(most):
        raise ValidationError(f"{len(picks)} images are selected, more than this plan's maxMultiSelect of {int(most)}: "
                              "unselect some; nothing was sent", field="selected", value=len(picks))
    per_image = float(chain.estimate(client))
    total = per_image * len(picks)
    balance = float(client.usage().current_credit or 0)
    shown = Quote(len(picks), per_image, total, balance, repr(chain))
    if budget is not None and total > budget:
        raise BudgetExceededError(f"{shown.chain} on {len(picks)} images costs {total:g} credits, more than the budget "
                                  f"of {budget:g}: unselect some; nothing was sent", budget=budget, cost=total)
    allowed = float(getattr(plan, "minus_credit_allowed", 0) or 0)
    if shown.balance_after < -allowed:
        raise BudgetExceededError(f"{shown.chain} on {len(picks)} images costs {total:g} credits and the balance is "
                                  f"{balance:g}: unselect some or add credits; nothing was sent",
                                  budget=balance + allowed, cost=total)
    return shown


def sent(desk: Desk, chain: Chain, shown: Quote) -> list[ChainResult[Image]]:
    """Run ``chain`` over the picks ``shown`` priced (refused when the selection changed since)."""
    picks = desk.selected
    if len(picks) != shown.picks:
        raise ValidationError(f"the selection changed since it was priced ({shown.picks} then, {len(picks)} now): "
                              "price it again; nothing was sent", field="selected")
    results: list[ChainResult[Image]] = chain.map([pick for pick in picks if isinstance(pick, Image)])
    if not any(result.images for result in results):
        failed = next((result.error for result in results if result.error is not None), None)
        raise ValidationError(f"the chain made no image: {failed}", field="chain")
    return results


def credits_of(result: ChainResult[Image]) -> float | None:
    """What a chain's run cost, from its lineage (None when a step's price is unknown)."""
    steps: list[float | None] = [record.get("credits") for record in result._lineage]
    known = [float(value) for value in steps if value is not None]
    return None if len(known) < len(steps) else sum(known)
