"""One book for a row's money: what a row costs is written in three places (the journal's row, the
ledger, the run's ``RunState``), and only here, all three together, so they never disagree.

The runner asks it to ``reserve`` credits before a create (held against the budget), to record a
create that ran (``charged``: in this run or an ``earlier``, interrupted one), a price its images'
metadata showed (``price_seen``), a failed image's refund (``refund``), the price the ledger's entry
lacked (``priced``) and a create found by the probe (``recovered``).
"""

from __future__ import annotations

from ...ledger import Entry, Ledger, Prices, Source, Status
from ...models import FAILED
from .journals.journal import ImageRecord, Journal, RowRecord
from .rows import Row
from .state import Hold, RunState

__all__ = ["RowBook"]


class RowBook:
    """The money of a run's rows, kept in the journal, the ledger and the run's state together."""

    def __init__(self, journal: Journal, ledger: Ledger | None, state: RunState, prices: Prices) -> None:
        self.journal, self.ledger, self.state, self.prices = journal, ledger, state, prices
        self._charged_here: set[str] = set()
        """Rows whose create this run charged (not an earlier, interrupted one)."""
        self._reported: set[str] = set()
        """Rows whose create's answer said what it cost (its ledger entry has it: ``priced`` skips them)."""

    def reserve(self, cost: float) -> Hold:
        """``cost`` held against the budget until the create is answered (``Hold.release``)."""
        return Hold(self.state, cost)

    def reported(self, row: Row, images: list[ImageRecord], charged: float) -> None:
        """The create's answer said what it cost: its ledger entry has it, and a whole set of images
        teaches the price."""
        self._reported.add(row.key)
        if images and all(image["status"] != FAILED for image in images):
            self.prices.learn(row.price_key, charged / len(images))

    def charged(self, row: Row, entry: RowRecord, images: list[ImageRecord], charged: float | None,
                earlier: bool = False) -> None:
        """The row's create ran (in an ``earlier``, interrupted run, or this one); ``charged`` is what
        it cost, when the service said so. Otherwise its price is known (then exact) or guessed high,
        and the guess is corrected once the images' metadata shows their creditCost (``price_seen``).
        After an attempt whose images partly failed, its images take the failed ones' places."""
        asked = row.remaking(entry.to_remake).count
        if charged is None:
            unit = self.prices.exact(row.price_key)
            billed = [image for image in images if image["status"] != FAILED]  # failed at once: refunded
            if unit is None:
                unit = self.prices.per_image(row.style, row.collection)
                for image in billed:
                    image["guess"] = unit
            charged = unit * len(billed)
        entry.made(images, charged, asked)
        entry.status = "created"
        if not earlier:
            self.state.spent += charged
            self._charged_here.add(row.key)
        self.journal.save(entry)

    def recovered(self, row: Row, entry: RowRecord, charged: float) -> None:
        """The probe found the images of a create whose answer was lost: the ledger hears of it."""
        self._book(Entry(operation="create", status=Status.RECOVERED, image_ids=entry.image_ids,
                         group_id=entry.group_id, credits=charged, source=Source.PRICED, style_id=row.style,
                         error="answer lost; images found by probing"))

    def price_seen(self, row: Row, entry: RowRecord, image: ImageRecord, unit: float) -> None:
        """An image's metadata showed its price: the guess it was charged at, corrected."""
        correction = unit - image.pop("guess")
        if row.key in self._charged_here:
            self.state.spent += correction
        entry.credits = (entry.credits or 0) + correction
        self.prices.learn(row.price_key, unit)

    def refund(self, entry: RowRecord, image: ImageRecord) -> None:
        """The service refunds a failed image's share; the answer that charged it came long before."""
        self.state.spent -= image["credits"]
        entry.credits = (entry.credits or 0) - image["credits"]
        self._book(Entry(operation="refund", status=Status.REFUNDED, image_ids=[image["id"]],
                         group_id=entry.group_id, credits=-image["credits"], source=Source.PRICED,
                         error=image["error"]))

    def priced(self, row: Row, entry: RowRecord) -> None:
        """Tell the ledger what the row's create cost, as its images' metadata showed (before the
        refunds, which are entries of their own), where its answer did not say: a share of a
        balance the reconciliation gave it earlier is corrected, so its entry is the row's."""
        made = entry.attempt_images()
        shown = [image["credits"] for image in made if image.get("credits") is not None]
        if self.ledger is None or row.key in self._reported or not entry.group_id or not shown or entry.credits is None:
            return
        refunded = sum(image["credits"] for image in made if image["status"] == FAILED and image.get("credits") is not None)
        earlier = sum(entry.image_credits(image) or 0.0 for image in entry.images if image not in made)
        ledger, group_id, credits = self.ledger, entry.group_id, entry.credits - earlier + refunded
        ledger.later(lambda: ledger.price_create(group_id, credits))  # off the loop: the database may not answer

    def _book(self, entry: Entry) -> None:
        """Record ``entry`` in the ledger on its writer's thread: a shared ledger's database that stops
        answering never holds up the loop that sends the requests."""
        ledger = self.ledger
        if ledger is not None:
            ledger.later(lambda: ledger.record(entry))
