"""The batch engine: generations overlapped up to the plan's limit, every lost answer settled exactly.

A create whose connection dropped, or that a crash interrupted, is settled by looking (``probe``),
never by sending it again blindly: the probe reads the caller's images above the highest id known
when it was sent, skipping those other rows hold.

- images of the row found: the create ran; they are adopted and the charge recorded;
- none found: it never ran; it is sent again;
- the probe itself failed, or found a partial set: the row is left ``uncertain`` and not re-sent.

Which images are the row's depends on what image metadata tells:

- **Tagged** (the metadata shows each image's ``groupId``; every row sends its own): the probe
  matches by group id, so any number of creates may be without an answer at once. Creates are then
  sent side by side and synchronously: the answer comes when the images are done, with no polling.
- **Untagged** (the interface as specified): an unknown image above that id can only be the row's
  if no other create is without an answer. Creates are asynchronous (``isAsync``: the answer comes
  once the service has charged the row and numbered its images) and sent one at a time
  (``create_lock``); the generations overlap and are polled for completion, each first polled
  when it is due (``pacing``). The lock is held only until a create is answered, not while it
  generates: sending untagged creates side by side measured no faster, and two answers lost at
  once (a crash loses all in flight) could not be told apart.

A batch starts untagged and turns tagged when the metadata of its first finished image shows the
group id its row sent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

import anyio

from ..._retry import backoff
from ...errors import (
    APIConnectionError,
    APIError,
    BudgetExceededError,
    ImagekitError,
    InsufficientStorageError,
    NotEnoughCreditError,
    ServiceUnavailableError,
    StorageUnavailableError,
    TooManyRequestsError,
)
from ...ledger import Prices
from ...models import FAILED, PENDING
from ...ownership import NotOursError
from ...provenance.record import file_service
from .book import RowBook
from .journals.feed import Feed
from .journals.journal import ImageRecord, Journal, RowLost, RowRecord
from .options import RunOptions
from .outputs import ByWorkers, file_name, provenance_of, store_image
from .pacing import Pace
from .probe import find_images, group_of
from .rows import Row
from .state import Hold, RunState
from .window import Window

if TYPE_CHECKING:
    from ...client import AsyncClient

__all__ = ["RunOptions", "Runner", "first_error"]

log = logging.getLogger("imagekit")


class _Retry(Exception):
    """Send the row again after ``delay`` seconds (nothing was charged)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay


class _ToAnotherAccount(Exception):
    """This runner's account is out of credit: the row, not sent, goes to another key of the run."""


class Runner:
    """Runs the rows of one batch against an AsyncClient, journaling every step."""

    def __init__(self, client: AsyncClient, account: str, feed: Feed, journal: Journal,
                 prices: Prices, options: RunOptions, state: RunState, frontier: int | None,
                 workers: ByWorkers | None = None) -> None:
        self.client, self.account, self.feed, self.journal = client, account, feed, journal
        self.workers = workers
        """The engine's workers storing the images, when the run has an engine and an ``out_dir``."""
        self.prices, self.options, self.state, self.frontier = prices, options, state, frontier
        self.ledger = client.ledger
        self.book = RowBook(journal, client.ledger, state, prices)
        """The rows' money: the journal, the ledger and the run's state written together."""
        # The caller's concurrency is a ceiling too: the window never grows past it.
        self.window = Window(min(prices.simultaneous_limit, options.concurrency or prices.simultaneous_limit))
        self.create_lock = anyio.Lock()
        self._slot_poller = anyio.Lock()
        self.tagged = False
        """Image metadata shows group ids: creates go side by side, synchronously (see the module)."""
        self.pace = Pace(options.poll_interval)
        """When to poll a generation (learned from those settled)."""
        self._poll_policy = replace(client.config.retry, max_retries=0)
        self._refusals = 0
        self._sent: dict[str, float] = {}
        """When each row's create left (monotonic): its generation's time counts from there."""
        self.out_of_credit = False
        """The account refused a create for want of credit: it only settles rows in doubt from then on."""

    async def run(self) -> None:
        """Run rows from the feed until it has none left, the window's width of them at once."""
        async with anyio.create_task_group() as tasks:
            for _ in range(self.window.cap):
                tasks.start_soon(self._worker)

    async def _worker(self) -> None:
        # Out of credit, a runner takes only rows in doubt it alone can settle, until the run stops:
        # then it takes any row, to record it skipped.
        while (row := await self.feed.next(
                self.account, settling_only=self.out_of_credit and not self.state.stopped)) is not None:
            over: bool | None = True
            try:
                over = await self._row(row)
            except RowLost as lost:  # another process holds it now: nothing more is sent or written for it
                over = None
                self.feed.lost(row, str(lost))
            except StorageUnavailableError as exc:  # the journal's disk: the row stays as last written
                self.state.stopped = self.state.stopped or str(exc)
            finally:
                if over:
                    self.feed.finished(row)
                elif over is False:
                    self.feed.give_back(row)

    @asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        """A place in the window, and one of the account's slots in the journal, which other processes
        on this key share (in a shared sweep): together they never run more than the plan's limit."""
        async with self.window.slot():
            async with self._slot_poller:  # one look at a time: the others wait here, not in the database
                while (slot := await anyio.to_thread.run_sync(self.journal.take_slot, self.account,
                                                              self.window.cap)) is None:
                    await anyio.sleep(0.02)
            try:
                yield
            finally:
                await anyio.to_thread.run_sync(self.journal.give_slot, self.account, slot)

    @asynccontextmanager
    async def _one_create(self) -> AsyncIterator[None]:
        """The account's create lock: untagged creates go one at a time until answered, so a lost
        answer's images can be told apart (see the module). In a shared sweep the lock is the
        account's across every process (a lease in its journal, which runs out if the process dies
        or stops, and fences the write before each create: ``SharedJournal.save``)."""
        async with self.create_lock:
            while not await anyio.to_thread.run_sync(self.journal.lock_account, self.account):
                await anyio.sleep(0.01)
            try:
                yield
            finally:
                await anyio.to_thread.run_sync(self.journal.unlock_account, self.account)

    async def _row(self, row: Row) -> bool:
        """Take the row as far as this run can; False when it goes back untried, for another key."""
        entry = self.journal.get(row.key)
        while True:
            if entry.status == "sent":  # a crash interrupted it: settle it before sending anything for it
                try:
                    async with self._one_create():
                        await self._resolve(row, entry, earlier=True)
                except _Retry:
                    pass  # it never ran: now pending
            if entry.status == "uncertain" and not self.options.retry_uncertain:
                return True
            if entry.status == "created":
                async with self._slot():
                    await self._settle(row, entry)
                await self._download(row, entry)
                if entry.status != "pending":
                    return True
            if entry.to_remake == 0:  # every image made and kept (a run stopped before storing them)
                entry.status = "created"
                continue
            if self.state.stopped:
                entry.status, entry.error = "skipped", self.state.stopped
                self.journal.save(entry)
                return True
            if self.out_of_credit:
                return False
            cost = row.remaking(entry.to_remake).cost(self.prices)
            spent = self.state.spent + self.options.spent_before
            if self.options.budget is not None and spent + self.state.reserved + cost > self.options.budget:
                if spent + cost > self.options.budget:
                    earlier = self.options.spent_before
                    budget = self.options.budget
                    self.state.stopped = (f"budget of {budget:g} credits reached" + (
                        f" ({earlier:g} of them spent by earlier runs)" if earlier else "")
                        if spent >= budget - 1e-9 else f"budget of {budget:g} credits: {spent:g} spent" + (
                            f" ({earlier:g} by earlier runs)" if earlier else "") + f", the next row would cost {cost:g}")
                else:  # credits held by rows in flight may come back (a refusal, a failure): wait for them
                    await anyio.sleep(0.05)
                continue
            hold = self.book.reserve(cost)  # checked and taken with no await between: no other row can slip in
            try:
                async with self._slot():
                    await self._create(row, entry, hold)
                    if entry.status == "created":
                        await self._settle(row, entry)
            except _Retry as retry:
                await anyio.sleep(retry.delay)
                continue
            except _ToAnotherAccount:
                return False
            finally:
                hold.release()
            if entry.status == "created":
                await self._download(row, entry)
                if entry.status == "pending":  # the rest of what an earlier attempt failed to make
                    continue
            return True

    async def _create(self, row: Row, entry: RowRecord, hold: Hold) -> None:
        try:
            if self.tagged:
                await self._send_create(row, entry, hold.cost)
            else:
                async with self._one_create():
                    await self._send_create(row, entry, hold.cost, locked=True)
        finally:
            hold.release()  # the charge, if any, is in ``spent`` now

    async def _send_create(self, row: Row, entry: RowRecord, cost: float, locked: bool = False) -> None:
        """Send the row's create (``locked``: holding the account's create lock, which the write
        before it must find still this process's)."""
        if self.state.stopped:  # decided while this row waited for the lock
            entry.status, entry.error = "skipped", self.state.stopped
            self.journal.save(entry)
            return
        if self.out_of_credit:  # learnt while this row waited for the lock
            raise _ToAnotherAccount
        asked = row.remaking(entry.to_remake)  # after failed images: only those, in the interface's counts
        for image in entry.images:  # made before images knew their create (a journal from before)
            image.setdefault("group", entry.group_id)
        entry.attempts += 1
        entry.group_id = f"{row.key}.{entry.attempts}"
        entry.status, entry.low_id, entry.sent_at, entry.error = "sent", self.frontier, time.time(), None
        entry.account = self.account  # only this account can settle it if the answer is lost
        # Before the request leaves (a crash from here on is in doubt), fenced by the row's lease and the lock's.
        self.journal.save(entry, fence=self.account if locked else None)
        self._sent[row.key] = time.monotonic()
        try:
            result = await self.client.images.create(**asked.options, is_async=not self.tagged,
                                                     group_id=entry.group_id)
        except APIConnectionError as exc:
            if exc.may_have_executed:
                await self._resolve(row, entry)
                return
            self._back_to_pending(entry)
            raise _Retry(backoff(min(entry.attempts, 5), 0.2, 5.0)) from exc
        except (TooManyRequestsError, ServiceUnavailableError) as exc:
            self.window.refused()
            self._refusals += 1
            self._back_to_pending(entry)
            raise _Retry(exc.retry_after or backoff(min(self._refusals, 5), 0.2, 5.0)) from exc
        except NotEnoughCreditError as exc:
            self._out_of_credit(entry, exc)
            return
        except InsufficientStorageError as exc:  # the service's state, not the row's: every create would fail
            self._stop(entry, exc, "the service is out of storage")
            return
        except APIError as exc:
            self._failed(entry, exc)
            return
        except BudgetExceededError as exc:  # a tag's budget refused it before it was sent: nothing ran
            again = "after the limit is raised" + (" or it resets" if getattr(exc.budget, "end", None) else "")
            self.state.stopped = self.state.stopped or f"{exc}; the rows left wait for a run {again}"
            entry.status, entry.error = "skipped", self.state.stopped
            self.journal.save(entry)
            return
        images = [{"id": image.id, "status": image.status, "error": getattr(image.info, "generation_error", None),
                   "file": None} for image in result.images]
        charged = result.credits_charged
        if charged is not None:
            self.book.reported(row, images, charged)
        self._created(row, entry, images, charged)

    def _failed(self, entry: RowRecord, exc: APIError) -> None:
        entry.status, entry.error = "failed", f"{exc.data or exc.status}: {exc.message}"
        self.journal.save(entry)

    def _out_of_credit(self, entry: RowRecord, exc: NotEnoughCreditError) -> None:
        """The account cannot pay for the row: another key of the run takes it, and this runner only
        settles rows in doubt from now on. The refusal of the last account that could pay stops the run."""
        if not self.out_of_credit:
            self.out_of_credit = True
            self.state.paying -= 1
        if self.state.paying > 0:
            self._back_to_pending(entry)
            raise _ToAnotherAccount from exc
        self._stop(entry, exc, "not enough credit")

    def _stop(self, entry: RowRecord, exc: APIError, reason: str) -> None:
        """A refusal that stops the run's new work: its row shows the service's words; a row refused
        after the run stopped is skipped like the rest (each is tried again on the next run)."""
        if self.state.stopped:
            entry.status, entry.error = "skipped", self.state.stopped
            self.journal.save(entry)
        else:
            self._failed(entry, exc)
            self.state.stopped = reason

    def _created(self, row: Row, entry: RowRecord, images: list[ImageRecord], charged: float | None,
                 earlier: bool = False) -> None:
        """The row's create ran (in an ``earlier``, interrupted run, or this one): booked (``RowBook.charged``)."""
        self.frontier = max([self.frontier or 0, *(image["id"] for image in images)])
        self.book.charged(row, entry, images, charged, earlier)

    def _back_to_pending(self, entry: RowRecord) -> None:
        entry.status = "pending"
        self.journal.save(entry)

    async def _resolve(self, row: Row, entry: RowRecord, earlier: bool = False) -> None:
        """Settle a create that got no answer, in this run or an ``earlier`` one (untagged: the caller
        holds ``create_lock``)."""
        recorded: list[int] = []
        charged: float | None = None
        if self.ledger is not None and entry.group_id:
            recorded, charged = self.ledger.created_in_group(entry.group_id)
        if recorded:  # the answer came back, but the process died before the journal heard of it
            self._created(row, entry, [_image(i) for i in recorded], charged, earlier)
            return
        asked = row.remaking(entry.to_remake).count
        try:
            found = await find_images(self.client, self.journal, entry, asked, self.tagged, self.options)
        except ImagekitError as exc:
            entry.status, entry.error = "uncertain", f"may have run; the probe failed: {exc}"
            self.journal.save(entry)
            return
        self.tagged = self.tagged or any(group_of(meta) is not None for meta in found.values())
        if not found:
            self._back_to_pending(entry)
            raise _Retry(0.0)
        if len(found) != asked:
            entry.status = "uncertain"
            entry.error = f"may have run; the probe found {len(found)} of {asked} images"
            self.journal.save(entry)
            return
        charged = sum(float(meta.credit_cost or 0) for meta in found.values())
        self._created(row, entry, [_image(image_id) for image_id in found], charged, earlier)
        self.book.recovered(row, entry, charged)

    async def _settle(self, row: Row, entry: RowRecord) -> None:
        """Wait until no image of the row is PENDING (holding the row's place in the window)."""
        # Counted from the create's sending, not its answer: the service's generation time runs from
        # its arrival, while the answer's own time varies with the load.
        started = self._sent.pop(row.key, None) or time.monotonic()
        # Images still generating, and finished ones whose price is unknown (their metadata tells it).
        pending = [image for image in entry.images if image["status"] in (None, PENDING) or "guess" in image]
        # A synchronous answer brings finished images: nothing to wait for.
        polled = any(image["status"] in (None, PENDING) for image in pending)
        if polled:  # poll when the generation is due: each poll late is a slot left idle
            await anyio.sleep(max(0.0, started + self.pace.first_poll() - time.monotonic()))
        deadline = started + self.options.timeout
        seen_pending: float | None = None  # when the last poll that saw the row PENDING was sent
        while pending and (asked := time.monotonic()) < deadline:
            for image in list(pending):
                try:
                    meta = await self.client.images.meta(image["id"], retry=self._poll_policy)
                except (APIConnectionError, ServiceUnavailableError, TooManyRequestsError):
                    continue  # polling is itself a retry: poll again next round
                if not self.tagged and group_of(meta) == entry.group_id:
                    self.tagged = True
                    log.debug("image metadata shows group ids: creates now go side by side")
                if "guess" in image:  # the price the create was guessed at, corrected
                    self.book.price_seen(row, entry, image, float(meta.credit_cost or 0))
                if meta.generation_status == PENDING:
                    seen_pending = asked - started
                    continue
                image["status"], image["error"] = meta.generation_status, meta.generation_error
                image["credits"] = float(meta.credit_cost or 0)
                pending.remove(image)
                if image["status"] == FAILED:
                    self.book.refund(entry, image)
            if pending:
                await anyio.sleep(self.pace.interval())
            elif polled:
                self.pace.learn(seen_pending, asked - started)
        entry.latency = round(time.time() - (entry.sent_at or time.time()), 4)
        if pending:
            entry.error = f"still generating after {self.options.timeout:g}s"
        else:
            await self.window.succeeded()
            self.book.priced(row, entry)
        self.journal.save(entry)

    async def _download(self, row: Row, entry: RowRecord) -> None:
        """Save finished images into the output store with their provenance, then close the row."""
        if entry.error and any(image["status"] in (None, PENDING) for image in entry.images):
            return  # still generating: a later run finishes it
        store = self.options.out_dir
        for n, image in enumerate(entry.images):
            if store is None or image["status"] == FAILED or image.get("file"):
                continue
            record = provenance_of(row, entry, image, file_service(self.client.config))
            try:  # the download is retried by the client's policy, a stream cut short included
                image["file"] = await store_image(self.client, store, file_name(row, n), record, self.workers)
            except (StorageUnavailableError, NotOursError) as exc:  # the store's state, not the row's: stop there
                entry.error = f"made, not stored: {exc}"
                self.state.stopped = self.state.stopped or str(exc)
                self.journal.save(entry)
                return
            except (ImagekitError, OSError) as exc:  # OSError: this file's own trouble (not the store's)
                entry.error = f"download failed: {exc}"
                self.journal.save(entry)
                return
        failed = [image for image in entry.attempt_images() if image["status"] == FAILED]
        if failed:
            entry.status, entry.error = "failed", failed[0]["error"] or "generation failed"
        else:  # pending: images an earlier attempt failed to make are still to make (see ``Row.remaking``)
            entry.status, entry.error = "pending" if entry.to_remake else "done", None
        self.journal.save(entry)


def _image(image_id: int) -> ImageRecord:
    return {"id": int(image_id), "status": None, "error": None, "file": None}


@contextmanager
def first_error() -> Iterator[None]:
    """A runner's failure raises as itself, not inside the task groups' ExceptionGroup (the other
    runners were cancelled because of it): the first error that is not a cancellation."""
    try:
        yield
    except BaseExceptionGroup as group:
        errors = _leaves(group)
        first = next((error for error in errors if not isinstance(error, anyio.get_cancelled_exc_class())), None)
        if first is None:
            raise
        raise first from first.__cause__


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    return [leaf for error in group.exceptions
            for leaf in (_leaves(error) if isinstance(error, BaseExceptionGroup) else [error])]
