"""The batch journal: what it records of each row, and the interface the batch engine writes through.

Two journals implement ``Journal``: ``LocalJournal`` (a SQLite file, one process) and
``SharedJournal`` (PostgreSQL, any number of processes leasing rows). Each records a request
before it is sent and its result after.

Row states::

    pending ──► sent ──► created ──► done
                  │          └─────► failed      (images FAILED, refunded; retried on the next run)
                  ├────────► pending (no answer, and the probe shows it never ran: safe to send again)
                  └────────► uncertain (no answer, and the probe could not tell: never re-sent blindly)
    pending ──► skipped (the budget, the balance, a full service or the run's own store stopped new
                         work; retried next run)

A ``created`` row whose images could not be stored (its store full or out of reach) keeps its
error ("made, not stored"); the next run stores them without sending anything. A rerun also stores
again any done row's image its store no longer holds (``outputs.store_missing``).

``sent`` rows found when a run starts are the ones a crash interrupted; the runner resolves them
before anything else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ....errors import JournalMismatchError
from ....models.status import FAILED

if TYPE_CHECKING:
    from ..options import RunOptions
    from ..rows import Row
    from ..state import RunState
    from .feed import Feed

__all__ = ["Journal", "RowLost", "RowRecord", "ImageRecord", "FINISHED", "FIELDS", "MADE_NOTHING", "account_identity", "another_grid",
           "grid_digest", "row_values"]

FINISHED = frozenset({"done"})
"""States a re-run leaves alone (``uncertain`` too, unless asked)."""


class RowLost(Exception):
    """A journal refused a write of a row: it is no longer this process's (another process took it
    when this one's lease ran out), or it is done. The runner drops the row and sends nothing for it."""


def account_identity(user: object, base_url: str) -> tuple[str, str]:
    """(identity, description) of the account behind ``user`` (a User from ``me()``).

    The identity is made of interface fields that never change for an account and differ between
    accounts and sandboxes (id, customer key, sign-up time), not of the base URL, whose port an
    embedded sandbox picks afresh each session.
    """
    fields = [getattr(user, name, None) for name in ("user_id", "customer_key", "created_at")]
    email = getattr(user, "email", None)
    return "|".join(map(str, fields)), f"user {fields[0]}{f' <{email}>' if email else ''} at {base_url}"


def grid_digest(keys: Sequence[str]) -> str:
    """What a sweep's journal keeps of its grid: a digest of its row keys, in order."""
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()[:16]


MADE_NOTHING = "status = 'failed' AND images = '[]' AND COALESCE(credits, 0) = 0"
"""A journal row (SQL) that was refused before anything was made or paid. A sweep's grid all of
whose rows are so (every row failed: a style the service does not know) gives way to the grid run
next under its name, instead of locking the name to a mistake; a grid with a row pending (a run
under way or stopped) or one that made anything keeps it."""


def another_grid(name: str, where: str, count: int, given: int) -> JournalMismatchError:
    """The refusal of a grid that is not the one the sweep ``name`` recorded in the journal at ``where``."""
    return JournalMismatchError(f"The sweep {name!r} in {where} has another grid ({count} rows, not {given} with "
                                "these inputs): give this one another name, or run the same rows.")


ImageRecord = dict[str, Any]
"""What the journal knows about one image of a row: id, status, error, credits, file."""


@dataclass
class RowRecord:
    """What the journal knows about one row."""

    key: str
    status: str = "pending"
    attempts: int = 0
    group_id: str | None = None
    low_id: int | None = None
    """Highest own image id known when the last attempt was sent: the probe starts above it."""
    sent_at: float | None = None
    images: list[ImageRecord] = field(default_factory=list)
    """One dict per image, in the row's order: id, status, error, credits, file, and the ``group`` id of
    the create that made it (one made again after a failure also the ``count`` it asked for: ``made``)."""
    credits: float | None = None
    error: str | None = None
    latency: float | None = None
    account: str | None = None
    """The account that sent its create (``account_identity``): only it can settle one in doubt."""

    @property
    def image_ids(self) -> list[int]:
        """Ids of the row's images."""
        return [image["id"] for image in self.images]

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> RowRecord:
        """A record from a journal row (``FIELDS``, in order)."""
        values = dict(zip(FIELDS, row))
        values["images"] = json.loads(values["images"] or "[]")
        return cls(**values)

    def image_credits(self, image: ImageRecord) -> float | None:
        """What one of its images cost, net, as the ledger has it: nothing for a failed one (refunded,
        or never charged), else its own price, else an even share of what the row's others with a
        price of their own leave."""
        if image.get("status") == FAILED:
            return 0.0
        if image.get("credits") is not None:
            return float(image["credits"])
        billed = [each for each in self.images if each.get("status") != FAILED]
        unpriced = [each for each in billed if each.get("credits") is None]
        priced = sum(float(each["credits"]) for each in billed if each.get("credits") is not None)
        return (self.credits - priced) / len(unpriced) if self.credits is not None else None

    @property
    def to_remake(self) -> int | None:
        """How many images the row's next create makes: those of its images that failed (they were
        refunded; the others are paid for and kept), or None when it has none yet (the whole row)."""
        if not self.images:
            return None
        return sum(1 for image in self.images if image["status"] == FAILED)

    def made(self, images: list[ImageRecord], credits: float, asked: int) -> None:
        """Take the images a create of this row made (``credits`` its cost): the first ones, or, after
        an attempt whose images partly failed, in the failed ones' places (``asked``: its count)."""
        for image in images:
            image["group"] = self.group_id
        if not self.images:
            self.images, self.credits = images, credits
            return
        for image in self.images:  # the kept ones' prices, before an even share would mix attempts
            if image.get("credits") is None and image["status"] != FAILED:
                image["credits"] = self.image_credits(image)
        places = iter([n for n, image in enumerate(self.images) if image["status"] == FAILED])
        for image in images:
            image["count"] = asked
            place = next(places, None)
            if place is None:
                self.images.append(image)
            else:
                self.images[place] = image
        self.credits = (self.credits or 0.0) + credits

    def attempt_images(self) -> list[ImageRecord]:
        """The images its latest create made (an image without a ``group`` is the first create's)."""
        return [image for image in self.images if image.get("group", self.group_id) == self.group_id]


FIELDS = ("key", "status", "attempts", "group_id", "low_id", "sent_at", "images", "credits", "error", "latency",
          "account")
"""A journal row's columns, in order (a SQLite journal's and a shared one's alike)."""


def row_values(entry: RowRecord) -> list[Any]:
    """``entry`` as a journal row's values (``FIELDS``, in order)."""
    values = [getattr(entry, name) for name in FIELDS]
    values[FIELDS.index("images")] = json.dumps(entry.images)
    return values


class Journal(Protocol):
    """What the batch engine needs of a journal. A journal one process holds alone answers the
    lease half (slots, create locks, renewals) at once: nobody else could take what it holds."""

    location: str
    """Where it was opened: a file (``":memory:"``) or a database URL."""
    lease: float
    """Seconds a hold on a row or a slot lasts without renewal (``inf`` for a journal of one process)."""

    def bind(self, accounts: Sequence[tuple[str, str]]) -> None:
        """Tie the journal to the accounts it runs for (``(identity, description)`` pairs)."""

    def register(self, keys: Sequence[str]) -> None:
        """Make the batch's rows (once), pending until tried; a named batch (a sweep) keeps its grid,
        and another grid under its name is refused (JournalMismatchError), in every journal alike."""

    def check_grid(self, keys: Sequence[str]) -> None:
        """Refuse, writing nothing, what ``register`` would refuse of ``keys``."""

    def load(self) -> dict[str, RowRecord]:
        """Every row the journal knows, by key."""
        ...

    def get(self, key: str) -> RowRecord:
        """One row (a fresh pending entry when unknown)."""
        ...

    def save(self, entry: RowRecord, fence: str | None = None) -> None:
        """Write ``entry`` durably (before a request goes out, and after each answer), or raise
        RowLost, writing nothing, when the row is not this process's any more or is done: a done row
        never goes back to another state. ``fence``: an account whose create lock this process
        must still hold for the write to happen (the write before an untagged create)."""

    def refile(self, entry: RowRecord) -> None:
        """Record where a done row's images are stored now (the one write a done row takes: a rerun
        stored again what its store had lost); nothing else of the row changes."""
        ...

    def max_image_id(self) -> int | None:
        """The highest image id any row holds."""
        ...

    def feed(self, rows: list[Row], options: RunOptions, bar: Any, state: RunState) -> Feed:
        """Where a run's runners take their rows from."""
        ...

    def renew(self) -> None:
        """Extend every lease this process holds."""

    def take_slot(self, account: str, limit: int) -> int | None:
        """One of ``account``'s ``limit`` slots, if one is free."""
        ...

    def give_slot(self, account: str, slot: int) -> None:
        """Free a slot (the generation it held is over)."""

    def lock_account(self, account: str) -> bool:
        """Take ``account``'s create lock if no other process holds it."""
        ...

    def unlock_account(self, account: str) -> None:
        """Give ``account``'s create lock back."""

    def let_go(self) -> None:
        """Give back every lease and lock this process holds."""

    def close(self) -> None:
        """Let go of what it holds and close it."""
