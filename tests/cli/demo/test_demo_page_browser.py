"""The demo's page as people look at it: in chromium on a laptop's width and a phone's, with no
horizontal scrollbar, every picture shown, and nothing but text for people (no NaN, no repr, no
preformatted dumps). The screenshots are kept in test-output/demo/, and the top of the page at 1280 px
in the docs (docs/pictures/demo-page.png)."""

from __future__ import annotations

from pathlib import Path

import pytest

from imagekit.cli import main
from tests.docs_pictures import keep_picture
from tests.widgets.lab import CHROMIUM, CHROMIUM_FLAGS

SCREENSHOTS = Path(__file__).resolve().parents[3] / "test-output" / "demo"


@pytest.mark.browser
@pytest.mark.slow(25)
def test_the_demo_page_fits_a_laptop_and_a_phone_and_reads_as_text(tmp_path, capsys):
    from playwright.sync_api import sync_playwright

    out = tmp_path / "out"
    assert main(["demo", "--out", str(out)]) == 0
    capsys.readouterr()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            for width in (1280, 390):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto((out / "index.html").as_uri(), wait_until="load")
                if width == 1280:  # the docs show its batch (what follows names the test's own folder)
                    keep_picture("demo-page.png", page.screenshot(clip={"x": 0, "y": 0, "width": 1280, "height": 790}))
                page.screenshot(path=str(SCREENSHOTS / f"index-{width}.png"), full_page=True)
                overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
                assert overflow <= 0, f"{overflow} px wider than a {width}-px window"
                unshown = page.evaluate("[...document.images].filter(i => !i.complete || !i.naturalWidth).length")
                assert unshown == 0
                clipped = page.evaluate("[...document.images].filter(i => i.getBoundingClientRect().right > "
                                        "document.documentElement.clientWidth + 0.5).length")
                assert clipped == 0, f"{clipped} pictures run past a {width}-px window"
                stretched = page.evaluate("[...document.images].filter(i => Math.abs(i.getBoundingClientRect().height"
                                          " / i.getBoundingClientRect().width - i.naturalHeight / i.naturalWidth) > 0.02)"
                                          ".map(i => i.alt)")
                assert stretched == [], f"pictures out of their aspect ratio at {width} px: {stretched}"
                captions = page.evaluate("[...document.querySelectorAll('.sheet figcaption')].map(c => "
                                         "[c.innerText, parseFloat(getComputedStyle(c).fontSize)])")
                assert len(captions) >= 8 and all(size >= 12 and " · " in text for text, size in captions), captions
                text = page.inner_text("body")
                for unwanted in ("NaN", "Batch(", "None", "chain()"):
                    assert unwanted not in text
                assert page.locator("pre").count() == 0 and page.locator("table").count() >= 3
                page.close()
        finally:
            browser.close()
