"""First start of a data directory: catalogue, public styles and collections, the demo user."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..engines.base import GenerationEngine, GenerationRequest
from ..engines.edits.codecs import encode_image
from ..store.tables import Collection, Image, Plan, Style, User
from .accounts import add_user, admin_token, issue_key
from .catalog import seed_catalogue
from .parts import Seeding

DEMO_EMAIL = "demo@imagekit.local"
_THUMB = 256
_DRAWN_KEPT = 64
"""Thumbnails kept encoded in memory (some 100 KB each): every new user's starter kit draws the same
two, and every new data folder the same public ones."""
_drawn: dict[tuple[str, GenerationRequest], bytes] = {}
_STYLE_PRICES = {"photo": 3, "oil-paint": 3}
_COLLECTIONS = [
    # name, look, palette, premium, English tags, Korean tags
    ("Sunset Coast", "photo", [(250, 120, 60), (255, 190, 90), (70, 60, 120)], False,
     ["sunset", "coast"], ["노을", "해변"]),
    ("Forest Ink", "ink-sketch", [(30, 60, 40), (120, 150, 90), (230, 230, 210)], False,
     ["forest", "ink"], ["숲", "잉크"]),
    ("Neon Nights", "neon", [(255, 40, 160), (40, 220, 255), (20, 10, 40)], True,
     ["neon", "city"], ["네온", "도시"]),
]


def is_initialized(sandbox: Seeding) -> bool:
    with sandbox.db.read() as session:
        return session.scalar(select(Plan.plan_id).limit(1)) is not None


def initialize(sandbox: Seeding) -> str:
    """Seed an empty database (idempotent), make the admin token, and return a fresh API key for the
    demo user."""
    if not is_initialized(sandbox):
        _seed(sandbox)
    with sandbox.db.write() as session:
        admin_token(session)
        demo = session.scalars(select(User).where(User.email == DEMO_EMAIL)).one()
        return issue_key(session, demo.user_id, sandbox.clock.now())


def _thumbnail(sandbox: Seeding, session: Session, owner_id: int | None, prompt: str, look: str, seed: int,
               palette=None, member_of: int | None = None) -> Image:
    """A small public (or owned) image drawn by the engine, stored like any other image."""
    now = sandbox.clock.now()
    image = Image(owner_id=owner_id, created_at=now, status="COMPLETED", width=_THUMB, height=_THUMB,
                  kind="collection" if member_of else "thumbnail", mode="style", prompt=prompt,
                  variation_id=seed, member_of=member_of, meta={"look": look})
    session.add(image)
    session.flush()
    request = GenerationRequest(prompt=prompt, width=_THUMB, height=_THUMB, seed=seed, style=look,
                                palette=tuple(map(tuple, palette)) if palette else None)
    image.file_name = sandbox.store.write_bytes(f"{image.image_id}.png", _drawn_png(sandbox.engine, request))
    return image


def _drawn_png(engine: GenerationEngine, request: GenerationRequest) -> bytes:
    """The engine's drawing as PNG, drawn once per process: an engine draws the same pixels for
    equal requests (its contract)."""
    key = (engine.name, request)
    if (png := _drawn.get(key)) is None:
        png = encode_image(engine.generate(request), "png")
        if len(_drawn) >= _DRAWN_KEPT:
            _drawn.pop(next(iter(_drawn)), None)
        _drawn[key] = png
    return png


def add_style(sandbox: Seeding, session: Session, owner_id: int | None, look: str, label: str, credit_cost: int,
              api_enabled: bool = True) -> Style:
    """A style drawing with one of the engine's looks, with a thumbnail image."""
    now = sandbox.clock.now()
    style = Style(owner_id=owner_id, created_at=now, super="own" if owner_id else "public", main=look,
                  main_text=label, look=look, api_enabled=api_enabled, credit_cost=credit_cost)
    session.add(style)
    session.flush()
    # One seed for all: each style's sample looks the same for every user, and is drawn once.
    thumb = _thumbnail(sandbox, session, owner_id, f"{label} sample", look, seed=1)
    style.thumb_image_id = thumb.image_id
    return style


def _seed(sandbox: Seeding) -> None:
    with sandbox.db.write() as session:
        seed_catalogue(session, sandbox.settings.base_size)
        session.flush()
        for look, label in sandbox.engine.looks().items():
            add_style(sandbox, session, None, look, label, _STYLE_PRICES.get(look, 2))
        for name, look, palette, premium, tags_en, tags_ko in _COLLECTIONS:
            collection = Collection(created_at=sandbox.clock.now(), name=name, look=look,
                                    palette=[list(c) for c in palette], premium=premium,
                                    tags_en=tags_en, tags_ko=tags_ko)
            session.add(collection)
            session.flush()
            for i in range(3):
                _thumbnail(sandbox, session, None, f"{name} {i + 1}", look, i, palette,
                           member_of=collection.collection_id)
        demo = add_user(session, DEMO_EMAIL, "standard", sandbox.clock.now(), name="Demo User")
        give_starter_kit(sandbox, session, demo)


def give_starter_kit(sandbox: Seeding, session: Session, user: User) -> None:
    """Two own styles and one own collection, so every mode and listing has something to show."""
    looks = list(sandbox.engine.looks().items())
    for look, label in looks[:2]:
        add_style(sandbox, session, user.user_id, look, f"My {label}", 2)
    session.add(Collection(owner_id=user.user_id, created_at=sandbox.clock.now(), name="My moodboard",
                           look=looks[0][0], palette=[[40, 90, 160], [240, 200, 120], [250, 250, 245]]))


def register_user(sandbox: Seeding, email: str, grade: str, name: str | None = None) -> tuple[int, str]:
    """A new user with the starter kit; returns (user id, API key)."""
    with sandbox.db.write() as session:
        user = add_user(session, email, grade, sandbox.clock.now(), name=name)
        give_starter_kit(sandbox, session, user)
        return user.user_id, issue_key(session, user.user_id, sandbox.clock.now())
