"""What the ledger stores: one entry per operation (or balance reading), with a named status and a
named source for its credits. The lowest layer of the ledger: it imports nothing else of it."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from urllib.parse import urlsplit

from ..tags import current_tags

__all__ = ["Entry", "Status", "Source", "BALANCE", "answered", "in_sending_order", "now", "account_of", "sandbox_account", "service_of",
           "user_account"]

BALANCE = "balance"
"""The operation name of a balance reading (a read that showed the balance; not an operation)."""


class Status(StrEnum):
    """What became of an operation."""

    ANSWERED = "answered"
    """The service answered it (2xx)."""
    FAILED = "failed"
    """The service refused it with an error (``http_status`` says which); nothing was charged."""
    NO_RESPONSE = "no_response"
    """No answer came: it may have run (a workflow or the reconciliation settles it)."""
    RECOVERED = "recovered"
    """Its answer was lost, and its images were found afterwards (a batch's probe)."""
    REFUNDED = "refunded"
    """A refund: an image failed after an asynchronous create was charged for it."""


class Source(StrEnum):
    """Where an entry's credits came from."""

    REPORTED = "reported"
    """The answer's credit headers (a sandbox extension; the real service may not send them)."""
    PRICED = "priced"
    """The account's prices: CreditCostInfo, the styles' and images' creditCost."""
    RECONCILED = "reconciled"
    """The balances the service reported, shared out among the entries they explain."""


def now() -> str:
    """The ledger's time format: UTC ISO 8601 with milliseconds (sorts as text)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def account_of(base_url: str, api_key: str) -> str:
    """A stable, non-secret id for one API key on one service: the account's until the service says
    whose key it is (``user_account``; the ledger then keeps this id as another name of that one)."""
    return hashlib.sha256(f"{base_url.rstrip('/')}\0{api_key}".encode()).hexdigest()[:16]


def service_of(base_url: str) -> str:
    """A service's identity: its base URL's scheme, host, port and path, spelt one way (an embedded
    sandbox, whose port is new each session, is known by its data folder instead: ``sandbox_account``)."""
    parts = urlsplit(base_url.strip())
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}{parts.path.rstrip('/')}"


def user_account(service: str, user_id: int) -> str:
    """The id of one user on one service (``service_of``): the same for every key the user has."""
    return hashlib.sha256(f"user\0{service}\0{user_id}".encode()).hexdigest()[:16]


def sandbox_account(identity: str) -> str:
    """The id of an embedded sandbox's demo account: its data folder's identity (a new port and
    key each session would otherwise make yesterday's history someone else's)."""
    return hashlib.sha256(f"sandbox\0{identity}".encode()).hexdigest()[:16]


@dataclass
class Entry:
    """One operation as the ledger stores it."""

    operation: str
    """create, an edit name (enhance, removeBg...), cancelEdit, textToPrompt, refund, balance..."""
    status: Status
    """What became of it."""
    http_status: int | None = None
    """The HTTP status the service answered with (None when no answer came, or for an entry a
    workflow made)."""
    account: str = ""
    time: str = field(default_factory=now)
    source_id: int | None = None
    """The image an edit started from."""
    image_ids: list[int] = field(default_factory=list)
    """Images the operation made."""
    request_id: str | None = None
    """The edit request id the operation sent (a cancelEdit's: the one it cancelled)."""
    group_id: str | None = None
    style_id: int | None = None
    credits: float | None = None
    """Credits charged (negative for a refund); None while unknown."""
    balance: float | None = None
    """Total balance after the operation, when known."""
    daily_credit: float | None = None
    monthly_credit: float | None = None
    default_credit: float | None = None
    error: str | None = None
    latency: float | None = None
    source: Source | None = None
    """Where ``credits`` came from; None while unknown, or when nothing was charged."""
    tags: dict[str, str] = field(default_factory=current_tags)
    """Labels such as ``{"experiment": "grid-a"}``: by default, those in effect where the entry is made."""
    uid: str | None = field(default_factory=lambda: uuid.uuid4().hex)
    """Made with the entry: it is written once, however often a spool's flush of it is tried (None
    for entries written before uids)."""
    seq: int | None = field(default=None, compare=False)
    """Position in the ledger (set when written or read back; None while it waits in a spool)."""
    unreadable: str | None = field(default=None, compare=False)
    """What of its stored row could not be read (a value an earlier version wrote that is not what its
    column means): left out, and said here. Never stored."""


def in_sending_order(entries: list[Entry]) -> list[Entry]:
    """``entries`` with each recovered create moved to just after the request it settles (the
    ``no_response`` entry of its group): the service charged it then, not when a probe later found
    its images, so it belongs between the same two balance readings."""
    lost = {entry.group_id: place for place, entry in enumerate(entries)
            if entry.status == Status.NO_RESPONSE and entry.group_id}
    def place(item: tuple[int, Entry]) -> tuple[int, int]:
        index, entry = item
        sent = lost.get(entry.group_id or "", index) if entry.status == Status.RECOVERED else index
        return (sent, 1) if sent < index else (index, 0)
    return [entry for _, entry in sorted(enumerate(entries), key=place)]


def answered(entry: Entry) -> bool:
    """Whether the service answered the entry's operation (so it may have been charged, and its
    answer may show a balance)."""
    return entry.status == Status.ANSWERED
