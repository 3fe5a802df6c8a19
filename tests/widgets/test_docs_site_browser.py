"""The docs site in chromium: the home page and a guide, screenshotted at a desktop's width and a
phone's (1280 and 390 px, in test-output/widgets/<test>/), and readable at both: nothing wider than
the window (a code block or table scrolls inside itself), the text at a readable size."""

from __future__ import annotations

import pytest

from tests.docs_pages import build_site
from tests.utils.browser import keep_figures

WIDTHS = (1280, 390)
PAGES = {"home": "index.html", "batches-guide": "guides/batches/index.html"}


@pytest.mark.slow(seconds=30)
def test_the_home_page_and_a_guide_read_at_1280_and_390_px(chromium, shots, tmp_path):
    site = tmp_path / "site"
    built = build_site(site)
    assert built.returncode == 0, built.stderr[-2000:]
    figures = {}
    for width in WIDTHS:
        tab = chromium.new_page(viewport={"width": width, "height": 900})
        try:
            for name, path in PAGES.items():
                tab.goto((site / path).as_uri())
                tab.wait_for_selector("article h1")
                wide = tab.evaluate("document.documentElement.scrollWidth")
                font = tab.evaluate("parseFloat(getComputedStyle(document.querySelector('article p')).fontSize)")
                heading = tab.inner_text("article h1").rstrip("¶")  # its permalink
                tab.screenshot(path=shots / f"{name}-{width}.png")
                figures[f"{name}-{width}"] = {"scroll_width": wide, "font_px": font, "h1": heading}
                assert wide <= width, (name, width, wide)
                assert font >= 12, (name, width, font)
        finally:
            tab.close()
    keep_figures(shots, figures)
    assert figures["home-390"]["h1"] == "imagekit" and figures["batches-guide-1280"]["h1"] == "Batch experiments"
