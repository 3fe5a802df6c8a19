"""The docs' pictures, made by the tests that already show what they picture (a widget driven in
chromium, the demo's page and figures), so no picture in the docs is drawn by hand or goes stale.

A test hands ``keep_picture`` what it saw; the picture in docs/pictures/ is replaced only when it
differs in what it shows (its size, or more than ``CHANGED_SHARE`` of its pixels by more than
``CHANGED_LEVELS``), so a run that shows the same leaves the file, and git, alone. tests/test_docs.py
holds the list against the docs: every picture a page shows is one of these, and each is kept by a
test.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
from PIL import Image

from tests.helpers import ROOT

PICTURES = ROOT / "docs" / "pictures"
KEPT_BY = {
    "painter.png": "tests/widgets/test_painter_browser.py",
    "review-desk.png": "tests/widgets/test_review_browser.py",
    "studio.png": "tests/widgets/test_studio_browser.py",
    "contact-sheet.png": "tests/cli/demo/test_demo.py",
    "chain-steps.png": "tests/cli/demo/test_demo.py",
    "usage-burn-down.png": "tests/cli/demo/test_demo.py",
    "demo-page.png": "tests/cli/demo/test_demo_page_browser.py",
}
"""Each picture the docs show, and the test file that makes it."""
CHANGED_LEVELS = 40
CHANGED_SHARE = 0.005
CHANGED_SHARE_OF = {"usage-burn-down.png": 0.05, "demo-page.png": 0.05, "painter.png": 1.0, "studio.png": 1.0, "review-desk.png": 1.0}
"""Pictures of a run's own times change a little every run (a burn-down's steps and tick labels: 1.4 %
of its pixels between two demos): only a larger change is a new picture. The widgets' pictures show
images their tests generate unseeded, different every run: only a new size (a new layout) is a new
picture of them. The demo's page shows its burn-down and its run's times too."""
MAX_WIDTH = 1400
"""Wider pictures are scaled down to this (the docs show them at most this wide)."""


def keep_picture(name: str, picture: bytes | Path) -> Path:
    """docs/pictures/``name`` as ``picture`` (PNG bytes or a file) shows it, written only when it
    differs from the one there in what it shows. Returns the picture's path."""
    if name not in KEPT_BY:
        raise AssertionError(f"{name} is not among the docs' pictures (tests/docs_pictures.py KEPT_BY)")
    data = picture.read_bytes() if isinstance(picture, Path) else picture
    shown = trimmed(Image.open(io.BytesIO(data)).convert("RGB"))
    if shown.width > MAX_WIDTH:
        shown = shown.resize((MAX_WIDTH, round(shown.height * MAX_WIDTH / shown.width)), Image.LANCZOS)
    target = PICTURES / name
    if target.exists() and not differs(Image.open(target).convert("RGB"), shown, CHANGED_SHARE_OF.get(name, CHANGED_SHARE)):
        return target
    PICTURES.mkdir(parents=True, exist_ok=True)
    part = target.with_name(f".{name}.{os.getpid()}.part")  # whole or not at all: xdist workers may race
    shown.save(part, "PNG", optimize=True)
    part.replace(target)
    return target


def trimmed(picture: Image.Image, margin: int = 8) -> Image.Image:
    """``picture`` without the blank page below and right of what it shows (a widget's element is
    often taller than its content), keeping ``margin`` pixels of it."""
    pixels = np.asarray(picture)
    used = (np.abs(pixels.astype(np.int16) - pixels[-1, -1].astype(np.int16)).max(axis=2) > 8)
    rows, columns = np.flatnonzero(used.any(axis=1)), np.flatnonzero(used.any(axis=0))
    if not len(rows):
        return picture
    return picture.crop((0, 0, min(picture.width, columns[-1] + 1 + margin), min(picture.height, rows[-1] + 1 + margin)))


def differs(before: Image.Image, after: Image.Image, share: float = CHANGED_SHARE) -> bool:
    """The two pictures show different things: other sizes, or more than ``share`` of the pixels
    changed by more than ``CHANGED_LEVELS``."""
    if before.size != after.size:
        return True
    change = np.abs(np.asarray(before, np.int16) - np.asarray(after, np.int16)).max(axis=2)
    return float((change > CHANGED_LEVELS).mean()) > share
