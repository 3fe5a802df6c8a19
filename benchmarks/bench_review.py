"""The review desk with 1,000 images in JupyterLab and headless chromium (issue 48.7): how long the
desk takes to open, beside the Gallery widget showing the same 1,000 thumbnails (every one in the
page, no virtual scrolling), and from a key press to the frame that shows it (p50, p95), beside the
browser's own floor (a key press on a plain input to its next frame, same page).

Targets: open under 2 s; key to frame p95 under 50 ms. Two kinds of key: an arrow (the page alone
moves the cursor and redraws the rows in view) and a rating (drawn at once, marked pending, while a
message goes to the kernel, ``Desk.rate`` writes the decision log and the decisions come back; the
time to that answer, the pending mark gone, is printed as "confirmed").

Real parts: an embedded sandbox (128 px images, so making 1,000 takes seconds), a JupyterLab kernel,
Debian's chromium. Open time counts from running the cell to the last visible thumbnail decoded.

Run: ``.venv/bin/python benchmarks/bench_review.py [--images 1000] [--presses 60]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGETS = {"open": 2.0, "p95": 50.0}

# In the page: the time from each key press on ``target`` (capture phase, before the widget sees it)
# to the first animation frame after the widget's DOM changed for it (a MutationObserver); for a
# rating, also to the first frame after its tile lost the pending mark (the kernel's answer drawn).
TIMER = """(selector) => {
  const root = document.querySelector(selector);
  window.ikLags = [];
  window.ikConfirmed = [];
  let pressed = null, confirming = null, seen = false;
  root.addEventListener('keydown', (e) => {
    pressed = performance.now();
    if (/^[0-5]$/.test(e.key)) { confirming = pressed; seen = false; }
  }, { capture: true });
  new MutationObserver(() => {
    if (confirming !== null) {
      const marked = root.querySelector('.ik-pending') !== null;
      if (marked) seen = true;
      else if (seen) {
        const at = confirming;
        confirming = null;
        requestAnimationFrame(() => window.ikConfirmed.push(performance.now() - at));
      }
    }
    if (pressed === null) return;
    const at = pressed;
    pressed = null;
    requestAnimationFrame(() => window.ikLags.push(performance.now() - at));
  }).observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
}"""
FLOOR = """() => {
  const input = Object.assign(document.createElement('input'), { id: 'ik-floor' });
  document.body.append(input);
  window.ikLags = [];
  input.addEventListener('keydown', () => {
    const at = performance.now();
    requestAnimationFrame(() => window.ikLags.push(performance.now() - at));
  }, { capture: true });
}"""
SHOWN = """(selector) => {
  const thumbs = [...document.querySelectorAll(selector)];
  return thumbs.length > 0 && thumbs.every((img) => img.complete && img.naturalWidth > 0);
}"""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=1000)
    parser.add_argument("--presses", type=int, default=60)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from imagekit.sandbox import EmbeddedSandbox
    from tests.utils.users import make_user
    from tests.widgets.lab import CHROMIUM, CHROMIUM_FLAGS, Lab, Notebook

    with tempfile.TemporaryDirectory() as tmp, EmbeddedSandbox(Path(tmp) / "sandbox", base_size=128) as box:
        _, key = make_user(box, "pro")
        lab = Lab(Path(tmp) / "lab", {"IMAGEKIT_BASE_URL": box.url, "IMAGEKIT_API_KEY": key,
                                      "IMAGEKIT_HOME": str(Path(tmp) / "home")})
        lab.start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(300_000)
                page.goto(f"{lab.url}/lab")
                page.wait_for_function("window.jupyterapp !== undefined")
                page.evaluate("async () => { await window.jupyterapp.restored; }")
                notebook = Notebook(page, lab, "bench.ipynb")
                made = time.perf_counter()
                notebook.run("import imagekit\nfrom imagekit.widgets import Gallery\nik = imagekit.connect()\n"
                             f"rows = [{{'prompt': f'a kite, take {{n}}'}} for n in range({args.images // 4})]\n"
                             "batch = ik.batch(rows, style=ik.styles()[0], count=4).run(progress=False)\n"
                             "desk = imagekit.review(batch)\nimages = desk.images\n"
                             "for image in images: image._repr_png_()  # each image's thumbnail, read once for both")
                images = int(notebook.run("print(len(images))"))
                print(f"{images:,} images made and read in {time.perf_counter() - made:.1f} s")

                opened = {}
                for name, code, thumbs in (("Gallery (baseline)", "g = Gallery(images)\ng",
                                            ".ik-gallery img"),
                                           ("review desk", "w = desk.widget()\nw", ".ik-review img.ik-thumb")):
                    started = time.perf_counter()
                    notebook.run(code)
                    page.wait_for_function(SHOWN, arg=thumbs, polling="raf")
                    opened[name] = time.perf_counter() - started
                in_page = page.evaluate("() => document.querySelectorAll('.ik-review figure.ik-tile').length")
                print(f"open, cell run to the visible thumbnails decoded: review desk {opened['review desk']:.2f} s "
                      f"(target under {TARGETS['open']:g} s; {in_page} of {images:,} tiles in the page), Gallery "
                      f"{opened['Gallery (baseline)']:.2f} s (all in the page): ratio "
                      f"{opened['review desk'] / opened['Gallery (baseline)']:.2f}")

                lags: dict[str, list[float]] = {}
                page.evaluate(FLOOR)
                for _ in range(args.presses):
                    page.locator("#ik-floor").press("a")
                    page.wait_for_timeout(30)
                lags["floor"] = page.evaluate("() => window.ikLags")
                page.evaluate(TIMER, ".ik-review")
                root = page.locator(".ik-review")
                for kind, keys in (("arrow", ["ArrowRight", "ArrowLeft"]), ("rating", ["3", "4"])):
                    page.evaluate("() => { window.ikLags = []; }")
                    page.evaluate("() => { window.ikConfirmed = []; }")
                    for n in range(args.presses):
                        root.focus()
                        page.keyboard.press(keys[n % 2])
                        page.wait_for_function(f"() => window.ikLags.length >= {n + 1}")
                        if kind == "rating":  # the next press after the kernel's answer
                            page.wait_for_function(f"() => window.ikConfirmed.length >= {n + 1}")
                    lags[kind] = page.evaluate("() => window.ikLags")
                lags["confirmed"] = page.evaluate("() => window.ikConfirmed")
                ratings = notebook.run("print(int(desk.decisions()['rating'].notna().sum()))").strip()
                for kind, values in lags.items():
                    p50, p95 = statistics.median(values), percentile(values, 0.95)
                    ratio = f"; p95 {p95 / percentile(lags['floor'], 0.95):.1f}x the floor's" if kind != "floor" else ""
                    target = f" (target p95 under {TARGETS['p95']:g} ms)" if kind in ("arrow", "rating") else ""
                    print(f"key to frame, {kind:<9}: p50 {p50:5.1f} ms, p95 {p95:5.1f} ms over {len(values)} presses"
                          f"{target}{ratio}")
                print(f"(the kernel's desk holds {ratings} rating after the presses: they reached it)")
                browser.close()
        finally:
            lab.stop()


if __name__ == "__main__":
    main()
