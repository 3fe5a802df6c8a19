"""Batch create: many prompts (or a grid of prompts, styles and ratios) as fast as the plan allows,
never over budget, resumable after a crash, with a results table and a contact sheet.

    batch = ik.batch(imagekit.grid(prompt=[...], style=[1, 2], ratio=["1:1", "16:9"]))
    batch.estimate()                      # credits, before anything runs
    batch.run(budget=200, out_dir="out", journal="out/journal.sqlite")
    batch.to_pandas()                     # one line per image

The work itself runs on an AsyncClient twin of the caller's client (same service, key, settings
and ledger), in a background event loop for blocking callers; see ``runner`` for how creates are
sent and how a lost answer is settled.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..._error_base import warn_caller
from ..._portal import blocking_portal
from ...engines import Engine, EngineTransport, engine_for
from ...errors import BudgetWarning, JournalUnavailableError
from ...ledger import Prices
from ...ledger.prices import Estimate
from ...ownership import OwnedFolder
from ...progress import progress_bar
from ...storage import Store
from ...tags import current_tags, merged, tags as tagged
from .journals.either import journal_location, open_journal
from .journals.journal import ImageRecord, Journal, RowRecord, account_identity
from .journals.local import LocalJournal
from .journals.shared import is_url
from .leases import keep_leases
from .outputs import ByWorkers, claim_out_dir, store_missing
from .probe import thumbnail_ids
from .results import completed, image_records, results_table, saved_or
from .rows import Row, RowSource, make_rows, named_styles, refuse_misplaced, split_grid
from .runner import Runner, RunOptions, first_error
from .state import RunState
from .twin import async_twin

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ...client import AsyncClient, Client
    from ...images import AsyncImage, Image
    from ...models import Style, User
    from ...signals import HashStore, Item
    from .export import Export

__all__ = ["Batch"]

INTERRUPTED = "interrupted (Ctrl+C)"
"""Why a run stopped when its caller pressed Ctrl+C (its rows not sent are skipped: a rerun sends them)."""

T = TypeVar("T")
PathLike = str | os.PathLike[str]


def _progress(entry: RowRecord) -> tuple[str, int, str]:
    """What moves when a run does anything for a row: its state, its attempts, its images."""
    return entry.status, entry.attempts, repr(entry.images)


def _can_dedupe(dedupe: bool) -> None:
    """A run told to dedupe without the quality extra is refused before anything is sent."""
    if dedupe:
        from ...extras import require

        for module in ("numpy", "cv2", "pandas"):
            require(module, "quality")


class Batch:
    """Create requests run together; built by ``Client.batch``."""

    def __init__(self, client: Client | AsyncClient, rows: RowSource, *, tags: Mapping[str, object] | None = None,
                 name: str | None = None, keys: Sequence[str] | None = None, **defaults: Any) -> None:
        self.client = client
        refuse_misplaced(defaults, client.ledger)
        self.rows: list[Row] = make_rows(rows, defaults)
        """The requests, each with a stable key."""
        self.name = name
        """The sweep's name: processes running the same rows under it with one shared journal drain
        it together (see ``journals.shared``)."""
        self.source: str | None = None
        """The file the rows came from (a sweep file's path), named in what is refused of them."""
        self.keys: list[str] = list(keys or [])
        """API keys to spread the rows over, each account within its own plan's limit (default: the
        client's own key). An account that runs out of credit leaves its rows to the others; the run
        stops when none can pay."""
        self.tags: dict[str, str] = merged({}, tags or {})
        """Tags of every operation the batch performs, over those in effect where it runs."""
        self.entries: dict[str, RowRecord] = {}
        """The journal's view of each row after the last run, by key."""
        self.spent: float = 0.0
        """Credits the last run spent, net of refunds."""
        self.stopped: str | None = None
        """Why the last run stopped early (budget, balance, the service out of storage, the run's own
        store full or out of reach), if it did."""
        self.lost: list[str] = []
        """Keys of the rows another process of the sweep took over in the last run (this one's lease
        on them ran out, while it was paused perhaps): that process finished them, this one dropped them."""
        self.changed: int = 0
        """Rows the last run moved on (sent, settled, finished, or stored again): 0 when it found
        nothing left to do."""
        self.restored: int = 0
        """Images of rows done earlier that the last run stored again, downloaded from the service
        without paying again: the out_dir no longer held them (deleted, or a new out_dir)."""
        self.stored_by_workers: int = 0
        """Images of the last run that an engine's workers stored in its out_dir (``engine=``): they
        never passed through this process. The rest this process stored (a folder they do not share)."""
        self.lowest_concurrency: int | None = None
        """The narrowest the concurrency window became in the last run."""
        self.duplicates: int | None = None
        """How many of the batch's images nearly repeat one the account made earlier (any batch, any
        day), counted by a run with ``dedupe=True`` (None otherwise): flagged, never deleted or skipped."""
        self.tagged: bool = False
        """Whether the service's image metadata showed group ids, so creates went side by side
        (see ``runner``)."""
        self._state: RunState | None = None
        """The run under way (or the last one): a Ctrl+C stops its new work through it."""
        self._prices: Prices | None = None
        self._styles: list[Style] = []
        self._account: User | None = None
        self._journal: Journal | None = None
        self._run_tags: dict[str, str] = dict(self.tags)

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for row in self.rows:
            status = self.entries[row.key].status if row.key in self.entries else "pending"
            counts[status] = counts.get(status, 0) + 1
        shown = ', '.join(f'{n} {s}' for s, n in sorted(counts.items()))
        if self.duplicates is not None:
            shown += f"; {self.duplicates} near-duplicate{'' if self.duplicates == 1 else 's'}"
        return f"Batch({len(self.rows)} row{'' if len(self.rows) == 1 else 's'}: {shown})"

    # --- before running ---------------------------------------------------------------------

    def estimate(self, budget: float | None = None, skip: Collection[str] = ()) -> Estimate:
        """Credits the whole batch costs (but the rows whose keys are in ``skip``: those done already,
        say), from the plan's prices, the caller's styles and the prices its ledger learned: a number,
        whose ``notes()`` say which prices are unknown and how they were bounded (a ``BudgetWarning``
        when it passes ``budget``). Every row was checked when the batch was made; a style given by
        name is resolved here, among the caller's styles."""
        prices = self._portal_call(self._load_prices)
        estimate = prices.estimate((row.style, row.collection, row.count) for row in self.rows if row.key not in skip)
        if budget is not None and estimate > budget:
            warn_caller(estimate.notes(budget)[-1], BudgetWarning)
        return estimate

    async def _load_prices(self, client: AsyncClient) -> Prices:
        if self._prices is None:
            self._styles = await client.styles()
            self._account = await client.me()
            learned = client.ledger.prices() if client.ledger is not None else {}
            self._prices = Prices.of_account(self._account, self._styles, learned)
            self.rows = named_styles(self.rows, self._styles, self.source)
        return self._prices

    # --- running ----------------------------------------------------------------------------

    def run(self, budget: float | None = None, concurrency: int | None = None, progress: bool = True,
            out_dir: PathLike | None = None, journal: PathLike | None = None, dedupe: bool = False,
            engine: Any = None, address: str | None = None, **tuning: Any) -> Batch:
        """Run every row not finished yet; failures are recorded, not raised. Returns the batch.

        ``budget``: credits this run may spend (new work stops before passing it); budgets of its
        tags (``Ledger.set_budget``) apply too, and stop the run the same way. ``concurrency``:
        generations at once (default and ceiling: the plan's simultaneousLimit). ``out_dir``: save
        images there as they arrive, each with its provenance inside: a folder or any fsspec URL
        (``s3://bucket/prefix``; see ``imagekit.storage``). ``journal``: a SQLite file; running the
        same batch with it again finishes the rest, uploading nothing twice (default:
        ``out_dir/journal.sqlite`` for a local folder, else in memory). ``dedupe``: afterwards, count
        the images that nearly repeat one the account made earlier (``duplicates``, and ``quality()``'s
        ``dup_of``); nothing is deleted or skipped. ``engine``: ``"dask"`` (a ``distributed.Client``,
        or the scheduler's ``address``): the requests are made by the cluster's tasks, everything
        else stays here, the account's limit included (see ``imagekit.engines``). ``tuning``: RunOptions.
        """
        _can_dedupe(dedupe)
        self._portal_call(self._run, budget, concurrency, progress, out_dir, journal, tuning, engine, address,
                          gently=True)
        if dedupe:
            self._count_duplicates()
        return self

    async def arun(self, budget: float | None = None, concurrency: int | None = None, progress: bool = True,
                   out_dir: PathLike | None = None, journal: PathLike | None = None, dedupe: bool = False,
                   engine: Any = None, address: str | None = None, **tuning: Any) -> Batch:
        """``run`` for async code."""
        _can_dedupe(dedupe)
        client = async_twin(self.client)
        try:
            with tagged(self.tags):
                await self._run(client, budget, concurrency, progress, out_dir, journal, tuning, engine, address)
        finally:
            await client.aclose()
        if dedupe:
            await anyio.to_thread.run_sync(self._count_duplicates)
        return self

    def _portal_call(self, function: Callable[..., Awaitable[T]], *args: Any, gently: bool = False) -> T:
        """``function(client, *args)`` on a background loop in its own thread (works from scripts and
        under Jupyter's running loop). ``gently``: the first Ctrl+C stops the run's new work and waits
        for the requests in flight to be answered and recorded (the service charges for them
        whether or not anyone listens); a second leaves at once. Either way KeyboardInterrupt follows."""
        outer = current_tags()  # that thread has a context of its own: the caller's tags go along
        async def call() -> T:
            client = async_twin(self.client)
            try:
                with tagged(outer), tagged(self.tags):
                    return await function(client, *args)
            finally:
                await client.aclose()

        self._state = None  # until this run has one: a Ctrl+C before then cancels it at once
        with blocking_portal() as portal:
            future = portal.start_task_soon(call)
            try:
                return future.result()
            except KeyboardInterrupt:
                if not gently or self._state is None:
                    future.cancel()
                    raise
            self._state.stopped = INTERRUPTED
            print("imagekit: stopping; the requests in flight are being answered and recorded "
                  "(Ctrl+C again to leave now: a rerun settles them)", file=sys.stderr, flush=True)
            try:
                future.result()
            except KeyboardInterrupt:
                future.cancel()
                raise
            raise KeyboardInterrupt

    async def _run(self, client: AsyncClient, budget: float | None, concurrency: int | None, progress: bool,
                   out_dir: PathLike | None, journal: PathLike | None, tuning: dict[str, Any],
                   engine: Any = None, address: str | None = None) -> Batch:
        out = Store(out_dir) if out_dir is not None else None
        options = RunOptions(budget=budget, concurrency=concurrency, progress=progress, out_dir=out, **tuning)
        working = await anyio.to_thread.run_sync(engine_for, engine, address)  # refused before anything is made
        if working is None:
            return await self._run_here(client, options, out, journal)
        remote = client.with_options(transport=EngineTransport(working))
        try:
            return await self._run_here(remote, options, out, journal, working)
        finally:
            await remote.aclose()
            await anyio.to_thread.run_sync(working.close)

    async def _run_here(self, client: AsyncClient, options: RunOptions, out: Store | None,
                        journal: PathLike | None, engine: Engine | None = None) -> Batch:
        """The run, its requests sent through ``client`` (the caller's, or one whose transport is
        ``engine``'s, whose workers then store the images where they share ``out``)."""
        where = journal_location(journal, out)  # refused before out_dir is made
        folder = None
        if self._names_styles():  # resolved first: the rows' keys name the files out_dir holds and the journal's rows
            await self._load_prices(client)
        if out is not None:  # a person's folder and files stay theirs; the manifest lists what we may write
            inside = [] if where is None or is_url(str(where)) or Path(where).parent != Path(out.location) else \
                [Path(where).name + suffix for suffix in ("", "-wal", "-shm", "-journal")]
            folder = await anyio.to_thread.run_sync(claim_out_dir, out, self.rows, inside)
        # memory:// is each process's own: the workers could never share it
        workers = ByWorkers(engine, out, folder.token) if engine is not None and out is not None and folder is not None \
            and not out.location.startswith("memory://") else None
        self._run_tags = current_tags()
        clients = [client.with_options(api_key=key) for key in self.keys] if self.keys else [client]
        state = self._state = RunState(paying=len(clients))
        try:
            self._journal = self._open_journal(where, options.lease)
            accounts = [await self._account_of(each) for each in clients]
            self._journal.bind([(identity, described) for identity, described, _, _ in accounts])
            for each in clients:  # a balance reading on each side of the run: the ledger reconciles against them
                await each.usage()
            restored = 0
            if out is not None:
                by_account = {identity: each for each, (identity, _, _, _) in zip(clients, accounts)}
                restored = await store_missing(self._journal, self.rows, out,
                                               lambda account: by_account.get(account or "", client))
            before = {key: _progress(entry) for key, entry in self._journal.load().items()}
            with progress_bar(options.progress, total=len(self.rows), unit="row", desc=self.name or "batch") as bar:
                feed = self._journal.feed(self.rows, options, bar, state)
                runners = [Runner(each, identity, feed, self._journal, prices, options, state, frontier, workers)
                           for each, (identity, _, prices, frontier) in zip(clients, accounts)]
                with first_error():
                    async with anyio.create_task_group() as tasks:
                        tasks.start_soon(keep_leases, self._journal, feed)
                        async with anyio.create_task_group() as working:
                            for runner in runners:
                                working.start_soon(runner.run)
                        tasks.cancel_scope.cancel()
                await anyio.to_thread.run_sync(feed.show_progress)  # a stopped run's bar: what was settled
            for each in clients:
                await each.usage()
                if each.ledger is not None:
                    each.ledger.reconcile()
        except BaseException:
            self._undo_unsent(folder)
            raise
        finally:
            if folder is not None:  # what it wrote recorded, file by file; the folder let go
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(folder.settle)
            # A run cut short leaves nothing leased for others to wait out.
            with anyio.CancelScope(shield=True), suppress(JournalUnavailableError):
                if self._journal is not None:
                    await anyio.to_thread.run_sync(self._journal.let_go)
            for each in clients:
                if each is not client:
                    await each.aclose()
        assert self._journal is not None
        self.entries = self._journal.load()
        self.spent, self.stopped, self.lost = state.spent, state.stopped, state.lost
        self.restored = restored
        self.stored_by_workers = workers.stored if workers is not None else 0
        self.changed = restored + sum(_progress(entry) != before.get(key) for key, entry in self.entries.items())
        self.lowest_concurrency = min(runner.window.lowest for runner in runners)
        self.tagged = all(runner.tagged for runner in runners)
        return self

    async def _account_of(self, client: AsyncClient) -> tuple[str, str, Prices, int | None]:
        """One account's identity, description, prices, and the highest image id known to it."""
        styles, user = await client.styles(), await client.me()
        learned = client.ledger.prices() if client.ledger is not None else {}
        prices = Prices.of_account(user, styles, learned)
        if self._account is None:
            self._prices, self._styles, self._account = prices, styles, user
            self.rows = named_styles(self.rows, styles, self.source)
        identity, described = account_identity(user, client.config.base_url)
        assert self._journal is not None
        known = [self._journal.max_image_id(), client.ledger.max_image_id() if client.ledger else None,
                 *thumbnail_ids(styles)]
        return identity, described, prices, max((i for i in known if i is not None), default=None)

    def _open_journal(self, where: str | Path | None, lease: float) -> Journal:
        """The journal at ``where`` (None: in memory); this object's own when it is open there already,
        so a re-run resumes."""
        current = self._journal
        if where is None:
            return current if current is not None and not is_url(current.location) else LocalJournal()
        if current is not None and current.location == str(where):
            return current
        return open_journal(where, self.name or "", lease)

    def recorded_credits(self, journal: PathLike | None = None, out_dir: PathLike | None = None) -> float:
        """The credits that the journal ``run(out_dir=..., journal=...)`` keeps records as spent on this
        batch's rows by earlier runs (0 for a journal not made yet, or one in memory)."""
        return sum(entry.credits or 0.0 for entry in self.recorded(journal, out_dir).values())

    def recorded(self, journal: PathLike | None = None, out_dir: PathLike | None = None) -> dict[str, RowRecord]:
        """What the journal ``run(out_dir=..., journal=...)`` keeps of this batch's rows from earlier
        runs, by row key (nothing for a journal not made yet, or one in memory)."""
        where = journal_location(journal, out_dir)
        if where is None or (isinstance(where, Path) and not where.is_file()):
            return {}
        if self._names_styles():  # rows are journaled by their keys, which hold the styles' ids
            self._portal_call(self._load_prices)
        kept = open_journal(where, self.name or "")
        try:
            kept.check_grid([row.key for row in self.rows])
            keys = {row.key for row in self.rows}
            return {key: entry for key, entry in kept.load().items() if key in keys}
        finally:
            kept.close()

    def _names_styles(self) -> bool:
        """Whether a row still names its style (``named_styles`` resolves it among the account's)."""
        return any(isinstance(row.options.get("style"), str) for row in self.rows)

    def _undo_unsent(self, folder: OwnedFolder | None) -> None:
        """After a failed run: when its journal holds nothing (nothing was sent), close the journal and
        remove what it recorded in ``folder`` (the folder too, when it made it): it leaves nothing behind."""
        if folder is None:
            return
        try:
            if self._journal is not None and self._journal.load():
                return
        except JournalUnavailableError:
            return
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        folder.undo()

    # --- results ----------------------------------------------------------------------------

    def axes(self) -> tuple[dict[str, list[Any]], dict[str, Any]]:
        """(axes, constants) of the rows: each field that varies with its values in order of first
        use, and each field that is the same in every row with that value."""
        return split_grid(self.rows)

    def to_pandas(self) -> pd.DataFrame:
        """One line per image (one per row without images): inputs, image id, ``status`` (the
        image's, in the service's words: COMPLETED, FAILED, PENDING; empty for a row without an
        image), ``row_status`` (the row's outcome, in the batch's words: done, failed, skipped,
        uncertain, pending...), error, credits, latency, file, row key and attempts."""
        return results_table(self.rows, self.entries, self._style_names())

    @property
    def images(self) -> list[Image | AsyncImage]:
        """The completed images, as handles (no request is made), in ``to_pandas()``'s order: what
        a review desk, a chain or ``imagekit.quality`` takes."""
        return [self.client.image(int(image["id"])) for image in completed(self.rows, self.entries)]

    def image_records(self) -> Iterator[tuple[Row, RowRecord, ImageRecord]]:
        """Each image of each row as the journal knows it after the last run (a row without
        images: one empty record), in ``to_pandas()``'s order."""
        return image_records(self.rows, self.entries)

    def quality(self) -> pd.DataFrame:
        """The quality signals of the batch's completed images (``imagekit.quality``), one row per image,
        joinable on ``to_pandas()``'s ``image_id``; ``dup_of`` names an earlier image of the account
        (any batch, any day) that one nearly repeats. Each is read from the file its run saved, else
        from the service, once: the signals are kept beside the ledger (``imagekit.signals.store``)."""
        from ...signals import quality

        return quality(self, store=self._hash_store())

    def quality_items(self) -> list[Item]:
        """The batch's completed images, as ``imagekit.quality`` measures them."""
        from ...signals.frame import Item, handle_item

        items = []
        for image in completed(self.rows, self.entries):
            fallback = handle_item(self.client.image(int(image["id"])))
            items.append(Item(fallback.image_id, image.get("file"), saved_or(image.get("file"), fallback.read),
                              fallback.service))
        return items

    def _hash_store(self) -> HashStore | None:
        """The account's hash store (beside its ledger), once a run has said whose account it is."""
        from ...signals import HashStore
        from ...signals.store import account_key, store_beside

        if self._account is None:
            return None
        return HashStore(store_beside(self.client.ledger), account_key(self.client, self._account.user_id))

    def _count_duplicates(self) -> None:
        frame = self.quality()
        self.duplicates = int(frame["dup_of"].notna().sum()) if len(frame) else 0

    def export(self, dest: PathLike, format: str = "imagefolder", *, overwrite: bool = False,
               progress: bool = True) -> Export:
        """Write the completed images as a dataset at ``dest`` (a folder or any fsspec URL), each
        with its provenance inside; failed and unfinished rows are left out, and the answer says
        how many and why (see ``imagekit.workflows.batches.export``).

        ``format``: ``imagefolder`` (the images and a ``metadata.jsonl``: ``datasets.load_dataset(
        "imagefolder", data_dir=dest)``) or ``parquet`` (``dest`` is one Parquet file, the images
        inside). ``overwrite``: replace what is at ``dest`` (otherwise it must be empty). When a
        review desk decided on the images, ``rating``, ``selected`` and ``score`` columns come too.
        """
        from .export import BATCH_COLUMNS, batch_items, decided, write_dataset

        items, left_out = batch_items(self.image_records(), self.client, self._style_names(), self._run_tags)
        journal = getattr(self._journal, "location", None)
        return write_dataset(items, BATCH_COLUMNS, dest, format, left_out, overwrite=overwrite, progress=progress,
                             more_columns=lambda columns: decided(items, columns, self.client, journal))

    def _style_names(self) -> dict[int, str]:
        return {int(style.style_id): style.main_text for style in self._styles
                if style.style_id is not None and style.main_text}

    def contact_sheet(self, *, columns: int | None = None, label: list[str] | None = None,
                      thumb: int = 160) -> Figure:
        """A matplotlib figure of the finished images, each labelled by its inputs (styles by name)."""
        from ...reports.sheets import contact_sheet, label_of

        frame = self.to_pandas()
        done = frame[frame["image_id"].notna() & (frame["status"] == "COMPLETED")] if len(frame) else frame
        if "style" in done.columns:
            done = done.assign(style=done["style_name"])
        fields = label or [k for k in ("prompt", "style", "ratio") if k in frame.columns]
        items = [(label_of(record, fields), record.get("file") or int(record["image_id"]))
                 for record in done.to_dict("records")]
        return contact_sheet(items, self.client, columns=columns, thumb=thumb)
