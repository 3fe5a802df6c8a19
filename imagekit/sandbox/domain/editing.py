"""Every edit as one job: check, charge, run the engine (cancellable), then commit or refund.

An edit is charged when it starts and counted from then on; if it is cancelled before it
completes, or fails, the charge is refunded, so it is neither charged nor counted, and it leaves
no image row and no file. Completion and cancellation are decided atomically by the job registry:
a cancel that arrives after completion changes nothing. The outcome is settled with the edit's
concurrency slot (``ConcurrencyGate.settle``): an edit whose outcome cannot be recorded (the
database is away) is refunded once it can.
"""

from __future__ import annotations

import logging
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import cv2
import numpy as np
from sqlalchemy import select

from ..interface.errors import Cancelled, SandboxError
from ..store.outage import patiently, refusal, unreachable
from ..store.tables import Image, User
from . import credits, jobs
from .parts import Editing
from .references import ready_image

log = logging.getLogger(__name__)


@dataclass
class EditResult:
    """What an edit engine made: pixels, and for vectorize the SVG text as well."""

    pixels: np.ndarray
    svg: str | None = None
    subject: np.ndarray | None = None
    """Where the result's subject is, when known (kept with its pixels)."""


@dataclass
class Edit:
    """One edit request: the operation, its price type, its parameters and the work to run."""

    op: str
    """The edit's name as the endpoint spells it (enhance, outpaint, retry, fill, cleanUp, ...)."""
    cost_type: str
    """CreditCostInfo type that prices it (enhance-2x, outpaint, ...)."""
    run: Callable[[np.ndarray, int, Callable[[], None]], EditResult]
    """(source pixels, seed, check) -> result; must call check inside long loops."""
    scale_size: str = "1x"
    prompt: str | None = None
    params: dict = field(default_factory=dict)
    out_size: tuple[int, int] | None = None
    """Result (width, height) when known in advance, checked against the output limit first."""
    with_subject: Callable[[np.ndarray, np.ndarray, Callable[[], None]], EditResult] | None = None
    """(source pixels, subject mask, check) -> result, run instead of ``run`` when the source image
    keeps the mask of the subject the sandbox drew (``ImageStore.read_subject``)."""
    keeps_subject: bool = False
    """The result shows the source's subject where it was, at the result's size (enhance, upsize):
    its mask goes with it."""


@dataclass
class Outcome:
    image: Image
    charged: int
    balance: int


def _check_limits(session, user: User, edit: Edit, now) -> None:
    cap = credits.max_edits(user)
    used = credits.edit_count(session, user, now)
    if used >= cap:
        raise SandboxError("edit_limit_exceeded",
                           f"{used} of {cap} edits used this {credits.edit_period(user)}.")
    credits.check_special_limit(session, user, edit.cost_type, now)


def run_edit(sandbox: Editing, user: User, image_id: int, edit: Edit, request_id: str | None,
             platform: str) -> Outcome:
    """Run ``edit`` on one of the caller's images as a cancellable, charged job holding one slot."""
    from ..engines.edits.codecs import check_output_size

    request_id = request_id or uuid.uuid4().hex
    with sandbox.db.read() as session:
        source = ready_image(session, user, image_id)
        price = credits.price(user, edit.cost_type)
    if edit.out_size:
        check_output_size(*edit.out_size)
    sandbox.disk.ensure()
    job = None
    try:
        with sandbox.db.write() as session:  # the slot and the request id together, or neither
            slot = sandbox.gate.acquire(session, user.user_id, credits.simultaneous_limit(user))
            job = sandbox.jobs.start(session, user.user_id, request_id)
            sandbox.gate.record(session, slot, request_id=request_id)
    except BaseException:
        if job is not None:
            sandbox.jobs.done(job)
        raise
    try:
        if job.cancelled.is_set():  # cancelled before it arrived: refused before anything is charged
            raise Cancelled(request_id)
        with sandbox.db.write() as session:
            fresh = sandbox.db.locked_one(session, User, user.user_id)
            _check_limits(session, fresh, edit, sandbox.clock.now())
            charge_id = credits.charge(session, fresh, edit.cost_type, price, sandbox.clock.now(),
                                       request_id).charge_id
            sandbox.gate.record(session, slot, charge_id=charge_id)
        return _work(sandbox, user, source, edit, job, slot, charge_id, price, platform)
    except BaseException as exc:
        # Refunded (if charged) and the slot given back now, or as soon as the database answers again.
        sandbox.gate.abandon(slot, "cancelled" if isinstance(exc, Cancelled) else "failed")
        raise _answer(exc, edit, source) from None
    finally:
        sandbox.jobs.done(job)


def _answer(exc: BaseException, edit: Edit, source: Image) -> BaseException:
    """What a client is told of an edit that did not complete (nothing was charged)."""
    if isinstance(exc, Cancelled):
        return SandboxError("edit_cancelled", f"Edit {exc} was cancelled; nothing was charged.")
    if unreachable(exc):
        return refusal()
    if isinstance(exc, SandboxError | KeyboardInterrupt | SystemExit):
        return exc
    log.error("edit %s of image %s failed", edit.op, source.image_id, exc_info=exc)
    return SandboxError("edit_failed", f"The {edit.op} edit failed; nothing was charged.")


def _work(sandbox: Editing, user, source: Image, edit: Edit, job: jobs.Job, slot: int, charge_id: int, price: int,
          platform: str) -> Outcome:
    seed = secrets.randbelow(2**31)
    started = time.monotonic()
    pixels = sandbox.store.read_pixels(source.file_name)
    subject = sandbox.store.read_subject(source.file_name) if edit.with_subject or edit.keeps_subject else None
    if edit.with_subject is not None and subject is not None:
        result = edit.with_subject(pixels, subject, job.check)
    else:
        result = edit.run(pixels, seed, job.check)
    if edit.keeps_subject and subject is not None:
        result.subject = cv2.resize(subject.astype(np.uint8) * 255, (result.pixels.shape[1], result.pixels.shape[0]),
                                    interpolation=cv2.INTER_LINEAR) > 127
    jobs.wait(sandbox.settings.latency, job.check, since=started)  # the simulated service's edit time
    patience = sandbox.settings.outage_patience
    if not patiently(lambda: sandbox.jobs.complete(job), patience):
        raise Cancelled(job.request_id)
    return patiently(lambda: _commit(sandbox, user, source, edit, job, slot, charge_id, price, platform, seed,
                                     result), patience)


def _commit(sandbox: Editing, user, source: Image, edit: Edit, job, slot, charge_id, price, platform, seed,
            result: EditResult) -> Outcome:
    """Insert the new image and its files, and give the slot back with them, in one step; on any
    error neither remains. Safe to repeat: a slot found gone was settled already (by this step
    whose answer was lost: its image is the outcome; or as abandoned work: refunded)."""
    height, width = result.pixels.shape[:2]
    names: list[str] = []
    try:
        with sandbox.db.write() as session:
            held = sandbox.gate.claim(session, slot)
            if held is None:
                made = session.scalar(select(Image).where(Image.charge_id == charge_id))
                if made is None:
                    raise refusal()
                return Outcome(image=made, charged=price, balance=credits.total_balance(session.get_one(User, user.user_id)))
            image = Image(owner_id=user.user_id, created_at=sandbox.clock.now(), status="COMPLETED",
                          width=width, height=height, kind="edit", mode=edit.op,
                          prompt=edit.prompt if edit.prompt is not None else source.prompt,
                          style_id=source.style_id, group_id=source.group_id, variation_id=seed,
                          credit_cost=price, platform=platform, api_type=source.api_type,
                          model_id=source.model_id, source_id=source.image_id, scale_size=edit.scale_size,
                          request_id=job.request_id, charge_id=charge_id, unit_price=price,
                          watermarked=source.watermarked, meta={"params": edit.params})
            session.add(image)
            session.flush()
            names.append(sandbox.store.write_pixels(image.image_id, result.pixels, result.subject))
            image.file_name = names[-1]
            if result.svg is not None:
                names.append(sandbox.store.write_bytes(f"{image.image_id}.svg", result.svg.encode()))
                image.vector_file = names[-1]
            sandbox.gate.settle(session, held, "completed")
            balance = credits.total_balance(session.get_one(User, user.user_id))
    except BaseException:
        sandbox.store.delete(*names)
        raise
    return Outcome(image=image, charged=price, balance=balance)


def edit_result_view(image: Image, settings) -> dict:
    """The interface's Edit result: the new image; the extended sandbox links it to its source."""
    info = {"originalPrompt": image.prompt, "super": "edit", "main": image.mode, "variationId": image.variation_id,
            "groupId": image.group_id, "blurReason": image.blur_reason}
    if not settings.spec_exact:
        info["sourceImageId"] = image.source_id
    return {"image": {"imageId": image.image_id, "resolution": f"{image.width}x{image.height}",
                      "scaleSize": image.scale_size, "ownerId": image.owner_id, "EditInfo": info}}
