"""What the browser tests share besides their fixtures: a new chromium tab traced for failures,
the two front-ends mark, the figures kept beside screenshots, and an edit as the sandbox made it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.widgets.lab import FRONTENDS

in_both_frontends = pytest.mark.parametrize("notebook", FRONTENDS, indirect=True)
"""Run the test in JupyterLab and in Notebook 7 (the ``notebook`` fixture takes the front-end). One
test of each widget does (the painter's keyboard test, the review desk's, the studio's): Notebook 7
differs from JupyterLab in its shell (its keyboard shortcuts, its command mode), not in how a widget
draws or talks to its kernel, so the painter's other tests run in JupyterLab alone."""


def new_tab(chromium: Any) -> Any:
    """A page of the size the widget tests measure against, waiting up to a minute for anything."""
    tab = chromium.new_page(viewport={"width": 1400, "height": 1000})
    tab.set_default_timeout(60_000)
    tab.complaints = []  # the page's console errors and warnings, and its uncaught errors: a failure shows them
    tab.on("console", lambda message: message.type in ("error", "warning")
           and tab.complaints.append(f"{message.type}: {message.text[:300]}"))
    tab.on("pageerror", lambda error: tab.complaints.append(f"uncaught: {str(error)[:300]}"))
    tab.add_init_script(PAGE_TRACE)
    return tab


# A timeline kept in the page (window.ikTrace, ms since the page loaded) that a failure prints: when
# anywidget's 2 s model timers fire, when a widget module is handed to the page as a blob, and the main
# thread's long tasks. A widget whose kernel messages never arrive is told apart from a slow one by it.
PAGE_TRACE = """
window.ikTrace = [];
const ikNote = (what) => { window.ikTrace.push(`${Math.round(performance.now())} ${what}`);
                           if (window.ikTrace.length > 200) window.ikTrace.shift(); };
const ikTimeout = AbortSignal.timeout.bind(AbortSignal);
AbortSignal.timeout = (ms) => {
  const signal = ikTimeout(ms);
  ikNote(`timer ${ms} ms set`);
  signal.addEventListener("abort", () => ikNote(`timer ${ms} ms fired`));
  return signal;
};
const ikBlobUrl = URL.createObjectURL.bind(URL);
URL.createObjectURL = (blob) => { ikNote(`blob url ${blob.type || "?"} ${blob.size} bytes`); return ikBlobUrl(blob); };
try {
  new PerformanceObserver((list) => list.getEntries().forEach((task) =>
    ikNote(`long task ${Math.round(task.duration)} ms from ${Math.round(task.startTime)}`)))
    .observe({ type: "longtask", buffered: true });
} catch (error) { ikNote(`no long task timings: ${error}`); }
"""


def keep_figures(folder: Path, figures: dict) -> None:
    """Write what a test measured in the browser beside its screenshots, and print it."""
    (folder / "figures.json").write_text(json.dumps(figures, indent=2))
    print(f"{folder.name}: {json.dumps(figures)}")


def served_edit(box, image_id: int) -> dict:
    """What the sandbox made for an edit's result: the request's parameters as it received them, the
    result's size and the credits it charged (read from the sandbox's own records, not the client's)."""
    from imagekit.sandbox.store.tables import Image

    with box.sandbox.db.read() as session:
        row = session.get(Image, image_id)
        return {"params": row.meta["params"], "size": (row.width, row.height), "credits": row.credit_cost}
