"""The review desk: a person's ratings, selections, votes and notes on a set of images, kept as made
(``opening`` holds ``review``, which makes a desk of a batch, a sweep, a folder, Images or chain results).

    desk = imagekit.review(batch)          # or a list of Images, chain results, a folder imagekit saved
    desk.rate(desk.images[0], 4); desk.select(desk.images[0]); desk.vote(a, b)
    desk.decisions()                       # one row per image
    desk.ranking()                         # Bradley–Terry over the votes, ratings as the tie-break

Every decision goes to the decision log (``decisions.log``) as it is made, so a new desk on the same
images, in another process or on another day, shows it.
"""

from __future__ import annotations

import numbers
import os
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..decisions.log import DecisionLog, Event, State, logs_for, read
from ..errors import ValidationError
from ..images import Image
from ..provenance.record import file_service, service_of
from .saved import SavedImage, offline_line

if TYPE_CHECKING:
    import pandas as pd

    from ..client import Client
    from ..signals.frame import Item as QualityItem
    from ..widgets.review import ReviewWidget
    from ..workflows.chain import Chain, ChainResult
    from .send import Quote

__all__ = ["Desk", "Item", "COLUMNS", "BLURRED_SHARE"]

COLUMNS = ["image_id", "prompt", "style", "rating", "selected", "wins", "losses", "ties", "score", "note", "credits",
           "parent_id"]
"""The columns of ``Desk.decisions()``, in order."""
BLURRED_SHARE = 0.5
"""An image is flagged blurred when its sharpness is under this share of the desk's median (a blurred
copy scores at most half its original's: ``signals.pixels.sharpness``)."""


@dataclass
class Item:
    """One image on a desk, with what is known of how it was made."""

    image: Image | SavedImage
    """A handle on the service, or (a folder opened without a client) the file imagekit saved it to."""
    prompt: str | None = None
    style: Any = None
    """The style's name where the batch knew it, else its id."""
    credits: float | None = None
    """What it cost, from the batch's journal, the ledger or the file's provenance."""
    parent_id: int | None = None
    """The image an edit made it from."""
    file: str | None = None

    @property
    def id(self) -> int:
        """The image id."""
        return self.image.id


class Desk:
    """A person's decisions on a set of images: made here or by any desk before on the same images."""

    def __init__(self, items: Sequence[Item], client: Client | None, journal: str | None = None, *,
                 service: str | None = None, folder: str | None = None) -> None:
        unique: dict[int, Item] = {}
        for item in items:
            unique.setdefault(item.id, item)
        self.items: list[Item] = list(unique.values())
        """The images on the desk, in order, with what is known of each."""
        self.client = client
        """The service's client; None for a folder opened from its files without one."""
        if service is None:
            if client is None:
                raise ValidationError("a desk needs a client, or the service its images' files name", field="client")
            service = file_service(client.config)
        self.service = service_of(service)
        """The service's lasting name: the decisions' key, with each image id."""
        self.folder = folder
        """The folder the images were opened from, when they were."""
        self.logs: list[DecisionLog] = logs_for(journal)
        """Where decisions are written: the batch's journal (when there is one), then the review
        store under IMAGEKIT_HOME."""
        self.parent: Desk | None = None
        """The desk whose picks were sent to make these images (``send``)."""
        self.results: list[ChainResult[Image]] = []
        """The chain runs that made these images (``send``), each with its ``lineage``."""
        self._by_id = {item.id: item for item in self.items}
        self._mine: list[Event] = []
        """Decisions made at this desk, for ``undo``."""
        self._state = State()
        self.next_step: tuple[Chain, float | None] | None = None
        """The chain (and budget) the picks go through next (``send`` without ``confirm``, or
        ``widget(chain)``): the widget prices it as the selection changes."""
        self._quality: pd.DataFrame | None = None
        self._widgets: weakref.WeakSet[ReviewWidget] = weakref.WeakSet()
        self._catch_up()

    def __repr__(self) -> str:
        state = self.refresh()
        return (f"Desk({len(self.items)} images, {len(state.ratings)} rated, {len(state.selected)} selected, "
                f"{len(state.votes)} votes)")

    def __len__(self) -> int:
        return len(self.items)

    @property
    def images(self) -> list[Image | SavedImage]:
        """The images on the desk, in order."""
        return [item.image for item in self.items]

    # --- decisions ------------------------------------------------------------------------------

    def rate(self, image: Image | int, stars: int | None) -> None:
        """Rate an image 1 to 5 stars; 0 or None clears its rating."""
        if stars is None:
            stars = 0
        if isinstance(stars, bool) or not isinstance(stars, int) or not 0 <= stars <= 5:
            raise ValidationError(f"a rating is 1 to 5 stars (0 or None clears it), not {stars!r}", field="rating",
                                  value=stars)
        self._record(Event(self.service, self._id(image), "rate", str(stars)))

    def select(self, image: Image | int) -> None:
        """Add an image to the selection (the picks ``send`` works on), after those chosen before."""
        self._record(Event(self.service, self._id(image), "select"))

    def unselect(self, image: Image | int) -> None:
        """Take an image out of the selection."""
        self._record(Event(self.service, self._id(image), "unselect"))

    def vote(self, winner: Image | int, loser: Image | int, tie: bool = False) -> None:
        """Record that ``winner`` is better than ``loser`` (``tie=True``: neither is)."""
        first, second = self._id(winner), self._id(loser)
        if first == second:
            raise ValidationError(f"a vote compares two images, not image {first} with itself", field="loser",
                                  value=second)
        self._record(Event(self.service, first, "vote", "tie" if tie else "win", other_id=second))

    def note(self, image: Image | int, text: str | None) -> None:
        """Write a note on an image (an empty one, or None, clears it)."""
        if text is not None and not isinstance(text, str):
            raise ValidationError(f"a note is text, not {type(text).__name__}", field="note", value=text)
        self._record(Event(self.service, self._id(image), "note", text or ""))

    def undo(self) -> bool:
        """Take back the last decision made at this desk (False when there is none left)."""
        if not self._mine:
            return False
        last = self._mine.pop()
        self._write([Event(self.service, last.image_id, "undo", last.uid)])
        return True

    # --- reading --------------------------------------------------------------------------------

    def refresh(self) -> State:
        """Read the decisions again (another desk's included) and return them."""
        self._state = read(self.logs, self.service, list(self._by_id))
        return self._state

    @property
    def selected(self) -> list[Image | SavedImage]:
        """The selected images, in the order they were chosen."""
        return [self._by_id[image].image for image in self.refresh().selected]

    def decisions(self) -> pd.DataFrame:
        """One row per image (``COLUMNS``): its prompt, style, rating (NA when unrated), whether it is
        selected, its votes won, lost and tied, its Bradley–Terry score, note, credits and parent."""
        import pandas as pd

        from ..decisions.ranking import scores_of

        state = self.refresh()
        self._priced()
        scores = scores_of(list(self._by_id), state.votes)
        wins, losses, ties = ({item.id: 0 for item in self.items} for _ in range(3))
        for winner, loser, tie in state.votes:
            if tie:
                ties[winner] += 1
                ties[loser] += 1
            else:
                wins[winner] += 1
                losses[loser] += 1
        rows = [{"image_id": item.id, "prompt": item.prompt, "style": item.style,
                 "rating": state.ratings.get(item.id), "selected": item.id in state.selected,
                 "wins": wins[item.id], "losses": losses[item.id], "ties": ties[item.id],
                 "score": scores[item.id], "note": state.notes.get(item.id), "credits": item.credits,
                 "parent_id": item.parent_id} for item in self.items]
        return pd.DataFrame(rows, columns=COLUMNS).astype({"image_id": "Int64", "rating": "Int64",
                                                          "parent_id": "Int64"})

    def ranking(self) -> pd.DataFrame:
        """``decisions()`` best first: by Bradley–Terry score of the votes, then rating (unrated last),
        then the desk's order; ``rank`` from 1."""
        frame = self.decisions()
        ordered = frame.assign(_rating=frame["rating"].fillna(0), _order=range(len(frame)))
        ordered = ordered.sort_values(["score", "_rating", "_order"], ascending=[False, False, True], kind="stable")
        ordered = ordered.drop(columns=["_rating", "_order"]).reset_index(drop=True)
        ordered.insert(0, "rank", range(1, len(ordered) + 1))
        return ordered

    def export_preferences(self, dest: str | os.PathLike[str], *, overwrite: bool = False) -> int:
        """Write the votes as a preference dataset in the Pick-a-Pic layout (one Parquet file at
        ``dest``, a path or any fsspec URL: caption, image_0_uid, image_1_uid, label_0, label_1 and the
        two images' files) that ``datasets.load_dataset("parquet", data_files=dest)`` reads; returns
        how many votes it wrote (see ``imagekit.desk.export``)."""
        from .export import write_preferences

        return write_preferences(self, dest, overwrite=overwrite)

    def widget(self, chain: Chain | None = None, *, budget: float | None = None) -> ReviewWidget:
        """The desk as a grid of thumbnails in the notebook (``imagekit.widgets.review``): its keys and
        buttons call these same methods. With ``chain`` (or after ``send(chain)``), it shows what
        sending the picks through it costs as the selection changes, and a Send button that confirms."""
        from ..widgets.review import ReviewWidget

        if chain is not None:
            self._next(chain, budget)
        shown = ReviewWidget(self)
        self._widgets.add(shown)
        return shown

    # --- quality --------------------------------------------------------------------------------

    def quality(self) -> pd.DataFrame:
        """The quality signals of the desk's images (``imagekit.quality``), one row per image in the
        desk's order, each read once (from its file when it has one): ``dup_of`` (the first image of
        the desk it nearly repeats), ``sharpness``, ``noise``... and ``blurred``, a sharpness under
        ``BLURRED_SHARE`` of the desk's median. Kept: the widget's sort bar orders by them and its
        thumbnails flag near-duplicates and blurred images."""
        from ..signals import quality

        frame = quality(self)
        frame["blurred"] = frame["sharpness"] < BLURRED_SHARE * frame["sharpness"].median()
        self._quality = frame
        for shown in list(self._widgets):
            shown._show_quality()
        return frame

    def quality_items(self) -> list[QualityItem]:
        """The desk's images as ``imagekit.quality`` measures them (so ``imagekit.quality(desk)`` works)."""
        from ..signals.frame import Item as QualityItem, handle_item

        return [handle_item(item.image, item.file) if isinstance(item.image, Image) else
                QualityItem(item.id, item.file, item.image.read, self.service) for item in self.items]

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget()._repr_mimebundle_(**kwargs)

    # --- the next step --------------------------------------------------------------------------

    def send(self, chain: Chain, *, confirm: bool = False, budget: float | None = None) -> Quote | Desk:
        """Run ``chain`` over the selected images, priced first. Without ``confirm``: the quote (the
        credits, the balance after); with it: a new desk of the results, each remembering its parent.
        Refused in one line, before anything is sent: no selection, more picks than the plan's
        ``maxMultiSelect``, a cost past ``budget`` or past what the balance allows."""
        from .send import credits_of, quote, sent

        if not confirm:
            self._next(chain, budget)
            return quote(self, chain, budget)
        priced = quote(self, chain, budget)
        results = sent(self, chain, priced)
        made = [Item(result.image, self._by_id[result.source.id].prompt, self._by_id[result.source.id].style,
                     credits_of(result), result.source.id) for result in results if result.images]
        child = Desk(made, self.client)
        child.parent, child.results = self, results
        return child

    def quote(self) -> Quote:
        """The price of the next step (``send(chain)`` or ``widget(chain)`` named it) for the picks as
        they are now: what the widget shows beside its Send button."""
        from .send import quote

        if self.next_step is None:
            raise ValidationError("there is no next step to price: desk.send(chain) names one", field="chain")
        return quote(self, *self.next_step)

    # --- inside ---------------------------------------------------------------------------------

    def _reach(self, what: str) -> Client:
        """The client of the desk's service: its own, else (a folder opened from its files) the one
        ``imagekit.connect()`` gives when it is that service, its handles then taking the files' place;
        one line (``saved.offline_line``) when none is."""
        if self.client is not None:
            return self.client
        from ..embedded import connect

        client = connect()
        if service_of(file_service(client.config)) != self.service:
            client.close()
            raise offline_line(self.service, self.folder or "the folder", what)
        for item in self.items:
            item.image = client.image(item.id)
        self.client = client
        return client

    def _id(self, image: Image | int) -> int:
        image_id = getattr(image, "id", image)
        if isinstance(image_id, numbers.Integral) and not isinstance(image_id, bool):
            image_id = int(image_id)  # an id read from decisions() is NumPy's
        if isinstance(image_id, bool) or not isinstance(image_id, int):
            raise ValidationError(f"an image on the desk is an Image or its id, not {type(image).__name__}",
                                  field="image", value=image)
        if image_id not in self._by_id:
            raise ValidationError(f"image {image_id} is not on this desk (it holds {len(self.items)} images)",
                                  field="image", value=image_id)
        return image_id

    def _record(self, event: Event) -> None:
        self._write([event])
        self._mine.append(event)

    def _write(self, events: list[Event]) -> None:
        for log in self.logs:
            log.add(events)
        for shown in list(self._widgets):  # a decision made from Python shows in the widget too
            shown._show()

    def _next(self, chain: Chain, budget: float | None) -> None:
        self.next_step = (chain, budget)
        for shown in list(self._widgets):
            shown._show_quote()

    def _priced(self) -> None:
        """Fill the credits of images whose handle did not know them from the client's ledger: an
        operation's charge, shared evenly by the images it made (a spec-exact create's, say)."""
        unknown = {item.id: item for item in self.items if item.credits is None}
        ledger = None if self.client is None else self.client.ledger
        if not unknown or ledger is None:
            return
        for entry in ledger.entries():
            made = [image for image in entry.image_ids if image in unknown]
            if made and entry.credits is not None:
                for image in made:
                    unknown[image].credits = (unknown[image].credits or 0.0) + entry.credits / len(entry.image_ids)

    def _catch_up(self) -> None:
        """A batch's journal takes what this machine's review store holds of its images and it lacks
        (decisions made on those images as plain handles), so every desk on the journal sees them."""
        if len(self.logs) < 2:
            return
        journal, home = self.logs
        ids = list(self._by_id)
        known = {event.uid for event in journal.events(self.service, ids)}
        missing = [event for event in home.events(self.service, ids) if event.uid not in known]
        if missing:
            journal.add(missing)
