"""Edit chains: a lazy sequence of edits applied to an image, step by step, with its lineage.

    chain = imagekit.chain().enhance("2x").remove_bg().vectorize()
    chain.estimate()                  # credits, from the plan's prices
    out = chain.run(img, deadline=60) # out.image, out.images, out.lineage
    out = out.resume()                # after a failure: from the failed step, on the last good image
    out = await chain.arun(async_img) # the same in async code (an AsyncImage from an AsyncClient)

Nothing runs until ``run``. Each step carries its own request id, so an interrupt or a deadline
cancels the in-flight edit on the server (see ``resources.edits``). A failed step leaves the
earlier results usable and recorded.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio

from .._error_base import warn_caller
from ..errors import APIConnectionError, APIError, APITimeoutError, ConfigError, ImagekitError, ValidationError
from ..extras import needs_extra
from ..images import AsyncImage, Image, new_request_id
from ..ledger import Prices
from ..resources.edits import OPERATION_OF
from ..tags import current_tags, merged, tags as tagged
from ..validation import check_edit

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ..client import Client
    from ..media import MaskSource
    from ..resources.edits import Pair
    from ..signals import Item
    from .batches.export import Export

__all__ = ["chain", "Chain", "ChainResult", "Step", "LEAKY"]

log = logging.getLogger("imagekit")

H = TypeVar("H", Image, AsyncImage)
"""The handle a chain runs on: an Image (``run``) or an AsyncImage (``arun``)."""
StepRecord = dict[str, Any]
"""One line of a lineage, as ``ChainResult.lineage`` lists its columns."""


@dataclass(frozen=True)
class Step:
    """One edit: the Image method to call and its arguments."""

    op: str
    params: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.op}({_shown(self.params)})"


LEAKY = ("fill", "clean_up")
"""Steps asked to change only their mask: the lineage's ``leak`` says how far they changed the rest."""


def chain(client: Client | None = None, *, tags: Mapping[str, object] | None = None,
          leak_limit: float | None = None) -> Chain:
    """An empty edit chain; add steps with ``.enhance()``, ``.remove_bg()``... ``client`` prices it
    in ``estimate`` (which may be given one instead); a run uses the client of the image it runs on;
    ``tags`` label its edits in the ledger (over the tags in effect where it runs). ``leak_limit``:
    the share of the pixels outside its mask (0 to 1) a fill or clean-up step may change; a step past
    it is marked in the lineage (``leak_over_limit``) and warned of."""
    return Chain((), client, tags, leak_limit)


class Chain:
    """An immutable, lazy sequence of edits."""

    def __init__(self, steps: tuple[Step, ...] = (), client: Client | None = None,
                 tags: Mapping[str, object] | None = None, leak_limit: float | None = None) -> None:
        if leak_limit is not None:
            if isinstance(leak_limit, bool) or not isinstance(leak_limit, (int, float)) or not 0 <= leak_limit <= 1:
                raise ValidationError(f"leak_limit={leak_limit!r}: give a share of the pixels, from 0 to 1",
                                      field="leak_limit", value=leak_limit)
            from ..extras import require

            for module in ("numpy", "cv2"):  # told where the chain is written, not after its edits are paid for
                require(module, "quality")
        self.steps = steps
        """The edits, in order."""
        self.client = client
        self.tags: dict[str, str] = merged({}, tags or {})
        """Tags of every edit the chain makes."""
        self.leak_limit = leak_limit
        """The share of the pixels outside its mask a fill or clean-up step may change (None: any)."""

    def __repr__(self) -> str:
        return "chain()" + "".join(f".{s.op}({', '.join(f'{k}={v!r}' for k, v in s.params.items())})"
                                   for s in self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    def _then(self, op: str, **params: Any) -> Chain:
        check_edit(OPERATION_OF[op], None, params)  # a mistake is told where the chain is written, not mid-run
        return Chain((*self.steps, Step(op, params)), self.client, self.tags, self.leak_limit)

    def enhance(self, scale: str = "2x") -> Chain:
        """Add: enhance detail, upscaling by ``scale``."""
        return self._then("enhance", scale=scale)

    def outpaint(self, *, canvas: Pair, size: Pair, at: Pair) -> Chain:
        """Add: expand the canvas."""
        return self._then("outpaint", canvas=canvas, size=size, at=at)

    def retry(self, strength: str | None = None) -> Chain:
        """Add: reimagine."""
        return self._then("retry", strength=strength)

    def fill(self, mask: MaskSource, prompt: str, negative: str = "") -> Chain:
        """Add: regenerate the masked area from ``prompt``."""
        return self._then("fill", mask=mask, prompt=prompt, negative=negative)

    def clean_up(self, mask: MaskSource) -> Chain:
        """Add: remove the masked object."""
        return self._then("clean_up", mask=mask)

    def remove_bg(self) -> Chain:
        """Add: remove the background."""
        return self._then("remove_bg")

    def vectorize(self) -> Chain:
        """Add: vectorize (the last step, usually: an SVG is not edited further)."""
        return self._then("vectorize")

    def upsize(self) -> Chain:
        """Add: upscale."""
        return self._then("upsize")

    def estimate(self, client: Client | None = None) -> float:
        """Credits one run of the chain costs, from the plan's CreditCostInfo and the prices its
        client's ledger learned (as ``Batch.estimate`` prices a batch): ``client``, else the chain's."""
        client = client or self.client
        if client is None:
            raise ConfigError("a chain is priced by a client's plan: imagekit.chain(ik) or chain.estimate(ik)")
        learned = client.ledger.prices() if client.ledger is not None else {}
        prices = Prices.of_account(client.me(), (), learned)
        return sum(prices.edit(OPERATION_OF[step.op], step.params.get("scale")) for step in self.steps)

    def run(self, image: Image, *, deadline: float | None = None) -> ChainResult[Image]:
        """Apply the steps to ``image`` (an Image); stops at the first failure, which is recorded.

        ``deadline``: seconds for the whole chain; when they run out the in-flight edit is
        cancelled on the server and the step recorded as ``timeout``.
        """
        ledger = image.client.ledger
        with tagged(self.tags):
            if ledger is not None:  # balance readings around the run: the ledger reconciles against
                image.client.me()  # them; me() also shows the prices a budget's hold needs
            result = ChainResult(self, image)._go(deadline)
            if ledger is not None:
                image.client.usage()
                ledger.reconcile()
        return result

    async def arun(self, image: AsyncImage, *, deadline: float | None = None) -> ChainResult[AsyncImage]:
        """``run`` for async code: ``image`` is an AsyncImage; cancelling the task cancels the
        in-flight edit on the server."""
        ledger = image.client.ledger
        with tagged(self.tags):
            if ledger is not None:
                await image.client.me()
            result = await ChainResult(self, image)._ago(deadline)
            if ledger is not None:
                await image.client.usage()
                ledger.reconcile()
        return result

    def map(self, images: Sequence[Image], *, concurrency: int | None = None,
            deadline: float | None = None) -> list[ChainResult[Image]]:
        """``run`` over many images at once (default: the plan's simultaneousLimit at a time)."""
        if not images:
            return []
        if concurrency is None:
            concurrency = Prices.of_account(images[0].client.me()).simultaneous_limit
        outer = current_tags()  # the pool's threads have contexts of their own: the caller's tags go along

        def run(image: Image) -> ChainResult[Image]:
            with tagged(outer):
                return self.run(image, deadline=deadline)

        with ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="imagekit-chain") as pool:
            return list(pool.map(run, images))

    async def amap(self, images: Sequence[AsyncImage], *, concurrency: int | None = None,
                   deadline: float | None = None) -> list[ChainResult[AsyncImage]]:
        """``map`` for async code, over AsyncImages."""
        if not images:
            return []
        if concurrency is None:
            concurrency = Prices.of_account(await images[0].client.me()).simultaneous_limit
        results: list[ChainResult[AsyncImage] | None] = [None] * len(images)
        slots = anyio.Semaphore(max(1, concurrency))

        async def one(index: int) -> None:
            async with slots:
                results[index] = await self.arun(images[index], deadline=deadline)

        async with anyio.create_task_group() as tasks:
            for index in range(len(images)):
                tasks.start_soon(one, index)
        return [result for result in results if result is not None]  # each task filled its place


class ChainResult(Generic[H]):
    """What a chain run made: every step's image, the lineage, and where it stopped."""

    def __init__(self, chain: Chain, source: H, lineage: list[StepRecord] | None = None, start: int = 0) -> None:
        self.chain = chain
        self.source: H = source
        """The image the run started from."""
        self.images: list[H] = []
        """The image each finished step made, in order."""
        self.failed_step: int | None = None
        """Index of the step that failed, if one did."""
        self.error: BaseException | None = None
        self._lineage = lineage or []
        self._start = start
        self._last: tuple[int, bytes] | None = None
        """The last image read to measure a leak (the next step's parent): read once."""

    @property
    def image(self) -> H:
        """The last image made (the source if no step finished)."""
        return self.images[-1] if self.images else self.source

    @property
    def ok(self) -> bool:
        """Every step finished."""
        return self.failed_step is None

    def __repr__(self) -> str:
        state = "ok" if self.ok else f"failed at step {self.failed_step}: {self.error}"
        return f"ChainResult({self.image!r}, {len(self._lineage)} steps recorded, {state})"

    def _go(self, deadline: float | None) -> ChainResult[H]:
        ends = None if deadline is None else time.monotonic() + deadline
        for index in range(self._start, len(self.chain.steps)):
            parent, (edit, record) = self.image, self._begin(index, ends)
            try:
                self._done(record, edit())
            except ImagekitError as exc:
                return self._stopped(record, exc)
            except BaseException as exc:  # an interrupt: the edits layer cancelled the edit on the server
                self._stopped(record, exc)
                raise
            self._leak(record, parent)
        return self

    async def _ago(self, deadline: float | None) -> ChainResult[H]:
        ends = None if deadline is None else time.monotonic() + deadline
        for index in range(self._start, len(self.chain.steps)):
            parent, (edit, record) = self.image, self._begin(index, ends)
            try:
                self._done(record, await edit())
            except ImagekitError as exc:
                return self._stopped(record, exc)
            except BaseException as exc:  # a cancelled task: the edits layer cancelled the edit too
                self._stopped(record, exc)
                raise
            await anyio.to_thread.run_sync(self._leak, record, parent)  # reads the two images, blocking
        return self

    def _begin(self, index: int, ends: float | None) -> tuple[Callable[[], Any], StepRecord]:
        """The call that runs step ``index`` on the last image, and its lineage record."""
        step, current = self.chain.steps[index], self.image
        left = None if ends is None else max(0.001, ends - time.monotonic())
        record = {"step": index, "parent_id": current.id, "op": step.op, "params": _shown(step.params),
                  "request_id": new_request_id(), "image_id": None, "credits": None, "started": time.monotonic()}
        edit = getattr(current, step.op)
        return (lambda: edit(**step.params, request_id=record["request_id"], timeout=left)), record

    def _done(self, record: StepRecord, image: H) -> None:
        started = record.pop("started")  # credits: the credit headers', else the price the ledger gave it
        record.update(image_id=image.id, credits=image.credits, status="done", error=None,
                      latency=round(time.monotonic() - started, 4))
        self._lineage.append(record)
        self.images.append(image)

    def _leak(self, record: StepRecord, parent: H) -> None:
        """A fill or clean-up step's ``leak``: the share of the pixels outside its mask it changed,
        from the parent's and the result's pixels, each read once (a result is the next step's
        parent); marked and warned of past the chain's ``leak_limit``. Measured where the quality
        extra is installed (a limit needs it)."""
        step = self.chain.steps[record["step"]]
        if step.op not in LEAKY or not _can_measure():
            return
        from ..signals import edit_leak

        try:
            before, after = self._read(parent), self._read(self.image)
        except ImagekitError as exc:  # the edit is done and paid for: its leak is unknown, not its outcome
            log.warning("the leak of step %s (%s) is unknown: %s", record["step"], step.op, exc)
            return
        record["leak"] = leak = round(edit_leak(before, after, step.params["mask"]), 4)
        limit = self.chain.leak_limit
        if limit is not None:
            record["leak_over_limit"] = leak > limit
            if leak > limit:
                warn_caller(f"step {record['step']} ({step.op}) changed {leak:.1%} of the pixels outside its mask, "
                            f"over the chain's leak_limit of {limit:.1%}", UserWarning)

    def _read(self, image: H) -> bytes:
        """An image's PNG bytes, read once across consecutive steps."""
        if self._last is None or self._last[0] != image.id:
            self._last = (image.id, image._fetch_png())
        return self._last[1]

    def _stopped(self, record: StepRecord, exc: BaseException) -> ChainResult[H]:
        started = record.pop("started")
        status = _status(exc)
        ledger = self.image.client.ledger
        # What the ledger holds for its request; else nothing, unless it may have run ("uncertain")
        known = ledger.credits_of(record["request_id"]) if ledger is not None else None
        record.update(latency=round(time.monotonic() - started, 4), status=status, error=str(exc),
                      credits=known if known is not None or status == "uncertain" else 0.0)
        self._lineage.append(record)
        self.failed_step, self.error = record["step"], exc
        return self

    def resume(self, *, deadline: float | None = None) -> ChainResult[H]:
        """Run the remaining steps from the failed one, starting from the last good image."""
        if self.ok:
            return self
        rest = ChainResult(self.chain, self.source, list(self._lineage), self.failed_step or 0)
        rest.images = list(self.images)
        rest.source = self.image
        with tagged(self.chain.tags):
            rest._go(deadline)
        rest.source = self.source
        return rest

    @property
    def lineage(self) -> pd.DataFrame:
        """One line per step tried: step, parent id, op, params, request id, image id, credits (as
        the answer's credit headers say, else as the ledger priced the edit; None when neither can),
        latency, status (done, failed, timeout, cancelled, uncertain), error, and for a fill or clean-up
        ``leak`` (the share of the pixels outside its mask it changed) and ``leak_over_limit`` (past
        the chain's ``leak_limit``; empty without one)."""
        with needs_extra():  # a missing extra: one line naming it
            import pandas as pd

        columns = ["step", "parent_id", "op", "params", "request_id", "image_id", "credits", "latency",
                   "status", "error", "leak", "leak_over_limit"]
        return pd.DataFrame(self._lineage, columns=columns).astype(
            {"image_id": "Int64", "leak": "Float64", "leak_over_limit": "boolean"})

    def quality(self) -> pd.DataFrame:
        """The quality signals of the images the steps made (``imagekit.quality``), joinable on the
        lineage's ``image_id``."""
        from ..signals import quality

        return quality(self)

    def quality_items(self) -> list[Item]:
        """The images the steps made, as ``imagekit.quality`` measures them."""
        from ..signals.frame import handle_item

        return [handle_item(image) for image in self.images]

    def export(self, dest: str | os.PathLike[str], format: str = "imagefolder", *, overwrite: bool = False,
               progress: bool = True) -> Export:
        """Write the images the steps made, with their lineage, as a dataset at ``dest`` (a folder or
        any fsspec URL), as ``Batch.export`` does; steps that failed are left out and counted."""
        from .batches.export import CHAIN_COLUMNS, chain_items, write_dataset

        items, left_out = chain_items(self._lineage, self.images, self.chain.tags)
        return write_dataset(items, CHAIN_COLUMNS, dest, format, left_out, overwrite=overwrite, progress=progress)

    def plot(self) -> Figure:
        """The lineage drawn as a row of boxes, source to last image."""
        from ..reports.plots import lineage_plot

        return lineage_plot(self.lineage, self.source.id)


def _can_measure() -> bool:
    """Whether the quality extra is installed (NumPy and OpenCV), so leaks can be measured."""
    from importlib.util import find_spec

    return all(find_spec(module) is not None for module in ("numpy", "cv2"))


def _status(exc: BaseException) -> str:
    if isinstance(exc, APITimeoutError):
        return "timeout"
    if isinstance(exc, APIConnectionError) and exc.may_have_executed:
        # "not_running" means it finished before the cancel: it was charged, its result is unseen.
        return "uncertain" if exc.cancel_status == "not_running" else "cancelled"
    if isinstance(exc, (KeyboardInterrupt, APIError)) and getattr(exc, "data", None) == "edit_cancelled":
        return "cancelled"
    return "cancelled" if isinstance(exc, KeyboardInterrupt) else "failed"


def _shown(params: dict[str, Any]) -> str:
    """Parameters as text for the lineage (a mask shows as its type, not its pixels)."""
    return ", ".join(f"{k}={v!r}" if isinstance(v, (str, int, float, tuple, type(None))) else f"{k}=<{type(v).__name__}>"
                     for k, v in params.items())
