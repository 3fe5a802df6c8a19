"""MaskPainter on the largest image the service makes (an 8x enhance of 1024 px: 8192x8192).

Ten strokes must add under 400 MB to the page and reach the kernel within 1.5 s (the median stroke:
one stroke may meet a busy machine, and none may take ten times that), as the browser measures them:
memory from the browser's own processes (their ids as chromium reports them over CDP) and its JS heap
after a garbage collection, time from the stroke's end to the kernel's echo.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.utils.browser import keep_figures

from .painting import Painter, iou, painter_setup, stroke

SIDE = 8192
BRUSH = 256
MB = 2**20
MEMORY_LIMIT = 400 * MB  # added by ten strokes
TIME_LIMIT_MS = 1500  # from a stroke's end until the kernel has its mask, the median of ten

# Ten strokes across the image, in image pixels: long diagonals, crossings and short dabs.
STROKES = [((400 + 700 * i, 300), (7800 - 600 * i, 7900)) for i in range(6)] + [
    ((300, 4096), (7900, 4200)), ((4096, 200), (4000, 8000)), ((1000, 1000), (1400, 1300)), ((7000, 6500), (7300, 7100))]


def browser_memory(page, cdp) -> dict:
    """The page's memory after a garbage collection: JS heap (CDP) and the browser's processes' RSS."""
    cdp.send("HeapProfiler.collectGarbage")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    browser = page.context.browser.new_browser_cdp_session()
    processes = browser.send("SystemInfo.getProcessInfo")["processInfo"]
    browser.detach()
    rss = 0
    for process in processes:
        status = Path(f"/proc/{process['id']}/status")
        if status.exists():
            rss += next(int(line.split()[1]) * 1024 for line in status.read_text().splitlines()
                        if line.startswith("VmRSS:"))
    return {"js_heap": metrics["JSHeapUsedSize"], "processes_rss": rss}


@pytest.mark.slow
def test_ten_strokes_on_the_largest_image(notebook, shots):
    page = notebook.page
    notebook.run(painter_setup(then='.enhance("8x")', brush=BRUSH))
    painter = Painter(notebook, shots)
    assert painter.size == (SIDE, SIDE)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    before = browser_memory(page, cdp)

    expected = np.zeros((SIDE, SIDE), bool)
    timings, payloads = [], []
    for number, (start, end) in enumerate(STROKES, 1):
        if number == len(STROKES):
            nine = painter.kernel_mask("nine")
        painter.drag(start, end, steps=12)
        expected |= stroke(start, end, BRUSH, (SIDE, SIDE))
        stats = painter.sync_stats()
        timings.append(stats["roundtrip-ms"])
        payloads.append(stats["bytes"])
    after = browser_memory(page, cdp)
    painter.shot("ten-strokes")

    added = {key: after[key] - before[key] for key in before}
    figures = {
        "image": f"{SIDE}x{SIDE}",
        "stroke to kernel, ms": timings,
        "stroke payload, bytes": payloads,
        "added by ten strokes, MB": {key: round(value / MB, 1) for key, value in added.items()},
        "before, MB": {key: round(value / MB, 1) for key, value in before.items()},
        "undo history, MB": round(int(painter.root.get_attribute("data-history-bytes")) / MB, 1),
        "kernel link": painter.kernel_link(),  # "healed" when anywidget's 2 s ran out on a busy machine
    }
    keep_figures(shots, figures)
    assert float(np.median(timings)) <= TIME_LIMIT_MS and max(timings) <= 10 * TIME_LIMIT_MS, figures
    assert added["processes_rss"] < MEMORY_LIMIT and added["js_heap"] < MEMORY_LIMIT, figures

    ten = painter.kernel_mask("ten")
    assert iou(ten, expected) >= 0.9, iou(ten, expected)
    painter.press("Control+z")  # undo on the large image is exact too
    np.testing.assert_array_equal(painter.kernel_mask("undone"), nine)
    cdp.detach()
