"""Where a desk's decisions live: an append-only log of events, in SQLite or PostgreSQL.

Every rating, selection, vote, note and undo is one row of ``review_events``, written as it is made and
keyed by the service's lasting name (``provenance.record.service_of``) and the image id, never by a key
or a port. A desk's state is the log replayed in order (``replay``), so any number of desks, in any
number of processes, write without overwriting each other and each sees what the others decided.

The log lives in a review store under ``IMAGEKIT_HOME`` (``review.sqlite``) and, for images from a
batch with a journal, in that journal's database too (a PostgreSQL journal: a team shares it). It
uses the ledger's stores (``ledger.store``) for both engines, with its own table.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..home import home_dir
from ..ledger.store import PostgresStore, SQLiteStore, Store, checked_location, is_url
from .ranking import scores_of

__all__ = ["Event", "DecisionLog", "State", "replay", "read", "logs_for", "home_log", "standing", "KINDS"]

KINDS = ("rate", "select", "unselect", "vote", "note", "undo")
"""What an event records: a rating (0 clears), a selection or its end, a vote (``other``: the loser),
a note, or the undoing of an earlier event (``value``: its uid)."""
_CHUNK = 500
"""Image ids asked for in one statement (SQLite's limit on parameters is far above)."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS review_events (
        seq {serial}, uid TEXT NOT NULL UNIQUE, service TEXT NOT NULL, image_id {int} NOT NULL,
        kind TEXT NOT NULL, value TEXT, other_id {int}, at TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS review_events_image ON review_events (service, image_id)",
)


@dataclass(frozen=True)
class Event:
    """One decision as it was made."""

    service: str
    """The service's lasting name."""
    image_id: int
    """The image decided on (a vote's winner)."""
    kind: str
    """One of ``KINDS``."""
    value: str | None = None
    """The rating, the note's text, a vote's ``win`` or ``tie``, the uid an undo takes back."""
    other_id: int | None = None
    """A vote's loser."""
    uid: str = field(default_factory=lambda: uuid.uuid4().hex)
    at: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    """When it was made, by the clock of the machine that made it (shown, never used to order)."""


@dataclass
class State:
    """The log replayed: what is decided about each image now."""

    ratings: dict[int, int] = field(default_factory=dict)
    selected: list[int] = field(default_factory=list)
    """Selected images, in the order they were chosen."""
    notes: dict[int, str] = field(default_factory=dict)
    votes: list[tuple[int, int, bool]] = field(default_factory=list)
    """(winner, loser, tie) of every vote standing."""


def replay(events: Iterable[Event]) -> State:
    """The state the events leave, in order: later decisions replace earlier ones, an undo takes back
    the event it names (a rating undone shows the one before it again)."""
    events = list(events)
    undone = {event.value for event in events if event.kind == "undo"}
    state = State()
    for event in events:
        if event.uid in undone or event.kind == "undo":
            continue
        image = event.image_id
        if event.kind == "rate":
            stars = int(event.value or 0)
            if stars:
                state.ratings[image] = stars
            else:
                state.ratings.pop(image, None)
        elif event.kind == "select" and image not in state.selected:
            state.selected.append(image)
        elif event.kind == "unselect" and image in state.selected:
            state.selected.remove(image)
        elif event.kind == "note":
            if event.value:
                state.notes[image] = event.value
            else:
                state.notes.pop(image, None)
        elif event.kind == "vote" and event.other_id is not None:
            state.votes.append((image, event.other_id, event.value == "tie"))
    return state


class _Tables:
    """The review table on one of the ledger's stores (instead of the ledger's own)."""

    def _create(self: Any) -> None:
        for statement in _SCHEMA:
            self._cursor(statement.format(serial=self.serial, int=self.integer), ())


class _SQLiteLog(_Tables, SQLiteStore):
    what = "a review store"
    tables = ("review_events", "rows", "binding", "sweep")
    """Its own table, or a batch's journal's (``workflows.batches.journals.local``), which keeps its decisions too."""


class _PostgresLog(_Tables, PostgresStore):
    def _create(self) -> None:
        self._cursor("SELECT pg_advisory_xact_lock(?)", (0x2E71E,))  # one process at a time makes the table
        super()._create()


_FIELDS = "uid, service, image_id, kind, value, other_id, at"


class DecisionLog:
    """The events of one database: a SQLite file or a PostgreSQL URL (checked as a journal's is)."""

    _open: dict[str, Store] = {}

    def __init__(self, location: str) -> None:
        self.location = checked_location(location, _SQLiteLog.what, _SQLiteLog.tables)
        if self.location not in self._open:
            self._open[self.location] = (_PostgresLog if is_url(self.location) else _SQLiteLog)(self.location)
        self._store = self._open[self.location]

    def __repr__(self) -> str:
        return f"DecisionLog({self.location!r})"

    def add(self, events: Sequence[Event]) -> None:
        """Write ``events`` (each once: one already here, by uid, is left as it is)."""
        with self._store.transaction():
            for event in events:
                self._store.execute(
                    f"INSERT INTO review_events ({_FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (uid) DO NOTHING",
                    (event.uid, event.service, event.image_id, event.kind, event.value, event.other_id, event.at))

    def events(self, service: str, image_ids: Sequence[int]) -> list[Event]:
        """Every event of ``service`` on these images, in the order written here (an undo included
        when the event it takes back is)."""
        ids = sorted(set(image_ids))
        rows: dict[int, tuple[Any, ...]] = {}
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            for row in self._store.fetchall(
                    f"SELECT seq, {_FIELDS} FROM review_events WHERE service = ? AND image_id IN ({marks})",
                    (service, *chunk)):
                rows[row[0]] = row
        return [Event(service=row[2], image_id=int(row[3]), kind=row[4], value=row[5],
                      other_id=None if row[6] is None else int(row[6]), uid=row[1], at=row[7])
                for _, row in sorted(rows.items())]


def home_log() -> DecisionLog:
    """The review store under ``IMAGEKIT_HOME``: ``review.sqlite``."""
    home = home_dir()
    home.mkdir(parents=True, exist_ok=True)
    return DecisionLog(str(home / "review.sqlite"))


def logs_for(journal: str | None, reading: bool = False) -> list[DecisionLog]:
    """Where decisions on a batch's images are kept: its journal (a SQLite file or PostgreSQL URL;
    none for one in memory), then the review store under IMAGEKIT_HOME (``reading``: only when a desk
    made it; a read makes no store)."""
    kept = (home_dir() / "review.sqlite").is_file() or not reading
    return ([DecisionLog(journal)] if journal and journal != ":memory:" else []) + ([home_log()] if kept else [])


def read(logs: Sequence[DecisionLog], service: str, image_ids: Sequence[int]) -> State:
    """The decisions on ``image_ids`` that ``logs`` hold (an event in several, once), replayed; votes
    with an image outside ``image_ids`` are left out."""
    events: list[Event] = []
    seen: set[str] = set()
    for log in logs:
        for event in log.events(service, image_ids):
            if event.uid not in seen:
                seen.add(event.uid)
                events.append(event)
    state = replay(events)
    wanted = set(image_ids)
    state.votes = [vote for vote in state.votes if vote[0] in wanted and vote[1] in wanted]
    return state


def standing(service: str, image_ids: Sequence[int], journal: str | None = None) -> dict[int, dict[str, Any]] | None:
    """What desks decided on ``image_ids`` as export columns, by image id: ``rating`` (None when
    unrated), ``selected`` and ``score`` (Bradley–Terry over the votes among them); None when nothing
    was decided on any of them."""
    state = read(logs_for(journal, reading=True), service, image_ids)
    if not (state.ratings or state.selected or state.votes or state.notes):
        return None
    scores = scores_of(list(dict.fromkeys(image_ids)), state.votes)
    return {image: {"rating": state.ratings.get(image), "selected": image in state.selected, "score": scores[image]}
            for image in image_ids}
