"""POST /api/images/create as a service: validate and price, charge, draw, refund what failed.

Every refusal happens in ``prepare`` before a credit is taken. ``start`` charges and inserts the
PENDING rows in one transaction; ``draw`` renders them and settles them in another: each COMPLETED
with its file, or FAILED with its share of the charge refunded (no orphan file either way).
"""

from __future__ import annotations

import logging
import secrets
import uuid
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy.orm import Session, lazyload

from ..engines.base import GenerationRequest, SubjectEngine
from ..interface.errors import SandboxError
from ..interface.extensions import create_seed
from ..interface.schemas import CreateBody
from ..store.outage import OUTAGE_REFUND, patiently, refusal, unreachable
from ..store.tables import Charge, Collection, Image, Model, Style, User
from . import credits, jobs
from .faults import InjectedFailure
from .parts import Drawing
from .recovery import fail_images
from .references import read_reference

log = logging.getLogger(__name__)

_RATIOS = {"square": (1, 1), "1:1": (1, 1), "vertical": (3, 4), "3:4": (3, 4),
           "horizontal": (4, 3), "4:3": (4, 3), "9:16": (9, 16), "16:9": (16, 9)}


def resolution(ratio: str, base: int) -> tuple[int, int]:
    """Width and height for a ratio: the long side is ``base``, both multiples of 8."""
    w, h = _RATIOS[ratio]
    scale = base / max(w, h)
    return int(round(w * scale / 8)) * 8, int(round(h * scale / 8)) * 8


@dataclass
class Order:
    """A validated, priced create request, ready to charge."""

    body: CreateBody
    mode: str
    cost_type: str
    """The CreditCostInfo type that prices (and watermarks) each image."""
    unit_price: int
    width: int
    height: int
    model: Model
    platform: str
    api_type: str
    style: Style | None = None
    collection: Collection | None = None
    reference: np.ndarray | None = field(default=None, repr=False)
    reference_id: int | None = None
    watermarked: bool = False
    accepted: float = 0.0
    """When the request arrived (monotonic seconds): the simulated generation time counts from here."""
    seed: int | None = None
    """The body's ``seed`` (an extension), when the sandbox honours it."""


def find_style(session: Session, user: User, style_id: int, platform: str) -> Style:
    style = session.get(Style, style_id)
    if style is None or style.owner_id not in (None, user.user_id):
        raise SandboxError("style_not_found", f"No style {style_id}.")
    if user.enterprise and user.enterprise.can_use_own_only and style.owner_id != user.user_id:
        raise SandboxError("style_not_allowed", "This enterprise account may use its own styles only.")
    if platform == "api" and not style.api_enabled:
        raise SandboxError("style_not_allowed", f"Style {style_id} is not enabled for the API.")
    return style


def _collection(session: Session, user: User, collection_id: int) -> Collection:
    collection = session.get(Collection, collection_id)
    if collection is None or collection.owner_id not in (None, user.user_id):
        raise SandboxError("collection_not_found", f"No collection {collection_id}.")
    if collection.premium and not user.plan.premium_available:
        raise SandboxError("premium_required", "Premium collections need a plan with premium access.")
    return collection


def _model(user: User, api_type: str) -> Model:
    if api_type == "enterprise":
        if user.enterprise is None:
            raise SandboxError("enterprise_only", "The enterprise API type needs an enterprise account.")
        models = list(user.enterprise.models)
    else:
        models = sorted(user.plan.models, key=lambda m: not m.is_main_generation)
    if not models:
        raise SandboxError("model_not_available", "No generation model is bound to this account.")
    return models[0]


def prepare(session: Session, sandbox, user: User, body: CreateBody, platform: str, api_type: str,
            host: str, arrived: float) -> Order:
    """Check everything about a create request and price it; raises before anything is charged."""
    chosen = [name for name in ("image", "styleId", "collectionId") if getattr(body, name) is not None]
    if len(chosen) != 1:
        raise SandboxError("invalid_generation_mode", "Give exactly one of image, styleId or collectionId with "
                           f"the prompt (got {', '.join(chosen) or 'none'}).")
    if not body.prompt.strip():
        raise SandboxError("invalid_request", "The prompt is empty.")
    width, height = resolution(body.ratio, sandbox.settings.base_size)
    order = Order(body=body, mode="", cost_type="generate", unit_price=0, width=width, height=height,
                  model=_model(user, api_type), platform=platform, api_type=api_type,
                  accepted=arrived, seed=create_seed(sandbox.settings, body.seed))
    if body.styleId is not None:
        order.mode, order.style = "style", find_style(session, user, body.styleId, platform)
        order.unit_price = order.style.credit_cost or credits.price(user, "generate")
    elif body.collectionId is not None:
        order.mode, order.collection = "collection", _collection(session, user, body.collectionId)
        order.cost_type = "collection-2x" if order.collection.premium else "collection"
        order.unit_price = credits.price(user, order.cost_type)
    else:
        order.mode = "reference"
        assert body.image is not None  # exactly one of the three was given (checked above)
        order.reference, order.reference_id = read_reference(
            session, user, body.image, sandbox.store, host, sandbox.settings.max_upload_bytes,
            sandbox.settings.max_upload_pixels)
        order.cost_type = "reference"
        order.unit_price = credits.price(user, "reference")
    order.watermarked = credits.watermarked(user, order.cost_type)
    credits.check_special_limit(session, user, "create", sandbox.clock.now())
    sandbox.disk.ensure()
    return order


def start(session: Session, sandbox, user: User, order: Order, slot: int) -> tuple[Charge, list[Image]]:
    """Charge the whole request and insert its PENDING images, in the caller's transaction (which
    took ``slot``: the charge is noted on it)."""
    now, body = sandbox.clock.now(), order.body
    count = body.count
    charge = credits.charge(session, user, "create", order.unit_price * count, now)
    sandbox.gate.record(session, slot, charge_id=charge.charge_id)
    seed = order.seed if order.seed is not None else secrets.randbelow(2**31 - 8)
    group = body.groupId or uuid.uuid4().hex
    meta = {k: v for k, v in body.model_dump(include={"randomPrompt", "initialPrompt", "enhancedPrompt",
            "captionPrompt", "captionTPrompt", "ratio"}).items() if v is not None}
    if order.collection is not None:
        meta["main"] = order.collection.name
    images = [Image(owner_id=user.user_id, created_at=now, status="PENDING", width=order.width,
                    height=order.height, kind="generation", mode=order.mode, prompt=body.prompt,
                    style_id=body.styleId, collection_id=body.collectionId, group_id=group,
                    variation_id=seed + i, credit_cost=order.unit_price, platform=order.platform,
                    api_type=order.api_type, model_id=order.model.model_id, source_id=order.reference_id,
                    charge_id=charge.charge_id, unit_price=order.unit_price, watermarked=order.watermarked,
                    meta=meta)
              for i in range(count)]
    session.add_all(images)
    session.flush()
    return charge, images


@dataclass
class Drawn:
    """A create's rows once settled: what its answer shows."""

    payer: User
    charge: Charge
    images: list[Image]
    refusals: list[SandboxError] = field(default_factory=list)
    """Why images failed, where the sandbox refused them by name (a full disk: 507 insufficient_storage)."""


def draw(sandbox: Drawing, order: Order, images: list[Image], slot: int) -> Drawn:
    """Render the request's PENDING ``images``, then settle them all in one transaction that gives
    the request's ``slot`` back: each COMPLETED with its file, or FAILED with its share of the charge
    refunded (no orphan file either way), so nobody sees the request done while it holds the slot.

    They settle no sooner than ``latency`` seconds after the create was accepted: the simulated
    service's generation time, whatever part of it checking, charging and drawing took. If the
    database stays unreachable past ``outage_patience``, the slot is abandoned (the images fail,
    refunded, once it answers again) and the 503 refusal is raised."""
    look = order.style.look if order.style else order.collection.look if order.collection else None
    palette = [tuple(c) for c in order.collection.palette] if order.collection else None
    files: dict[int, str] = {}
    errors: dict[int, str] = {}
    refusals: list[SandboxError] = []
    try:
        for image in images:
            name = None
            try:
                if sandbox.faults.roll(sandbox.faults.config.fail_generation_rate):
                    raise InjectedFailure("The engine failed (injected fault).")
                engine = sandbox.engine_for(order.model)
                request = GenerationRequest(prompt=image.prompt, width=image.width, height=image.height,
                                            seed=image.variation_id, style=look, reference=order.reference,
                                            palette=palette)
                pixels, subject = (engine.draw(request) if isinstance(engine, SubjectEngine)
                                   else (engine.generate(request), None))
                name = f"{image.image_id}.png"  # its subject's mask, written first, goes with it on failure
                files[image.image_id] = sandbox.store.write_pixels(image.image_id, pixels, subject)
            except Exception as exc:  # any failure of one image fails that image alone, refunded
                if isinstance(exc, SandboxError):
                    refusals.append(exc)
                elif not isinstance(exc, InjectedFailure):
                    log.exception("generation of image %s failed", image.image_id)
                sandbox.store.delete(name)
                errors[image.image_id] = getattr(exc, "message", None) or "The generation failed."
        jobs.wait(sandbox.settings.latency, since=order.accepted)
        drawn = patiently(lambda: _settle(sandbox, images, files, errors, slot), sandbox.settings.outage_patience)
    except BaseException as exc:
        away = unreachable(exc)
        sandbox.gate.abandon(slot, cleanup=lambda: sandbox.store.delete(*files.values()),
                             reason=OUTAGE_REFUND if away else getattr(exc, "message", "The generation failed."))
        if away:
            raise refusal() from None
        raise
    # Settled by someone else (the slot was given up while the database was away): the files are no one's.
    sandbox.store.delete(*(name for image in drawn.images if (name := files.get(image.image_id))
                           and image.file_name != name))
    drawn.refusals = refusals
    return drawn


def _settle(sandbox: Drawing, images: list[Image], files: dict[int, str], errors: dict[int, str], slot: int) -> Drawn:
    """One transaction, safe to repeat: a slot found gone was settled already (by this transaction
    whose answer was lost, or as abandoned work), and the rows are read as they are."""
    with sandbox.db.write() as session:
        held = sandbox.gate.claim(session, slot)
        rows = [session.get_one(Image, image.image_id) for image in images]
        if held is not None:
            for row in rows:
                if row.image_id in files:
                    row.status, row.file_name = "COMPLETED", files[row.image_id]
                else:
                    fail_images(session, [row], errors[row.image_id])
            sandbox.gate.settle(session, held)
        charge = session.get_one(Charge, images[0].charge_id)
        payer = session.get_one(User, charge.user_id, options=[lazyload(User.plan)])
        return Drawn(payer, charge, rows)
