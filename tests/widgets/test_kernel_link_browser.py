"""A widget whose model anywidget stopped passing kernel messages to (its 2 s timer ran out before the
module was bound, as on a busy machine) is mended when its view renders: the kernel's mask shows, and
a stroke's echo comes back. Here the page's timer runs out at once, so the model is deaf every time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.utils.browser import new_tab

from .lab import Notebook
from .painting import Painter, iou, painter_setup, stroke

# anywidget 0.11 gives a model's module 2 s (AbortSignal.timeout(2000)); this page gives it none.
NO_TIME_TO_BIND = """
const ikTimeoutAsked = AbortSignal.timeout.bind(AbortSignal);
AbortSignal.timeout = (ms) => ikTimeoutAsked(ms === 2000 ? 0 : ms);
"""


@pytest.fixture
def hurried_notebook(chromium, lab, shots) -> Iterator[Notebook]:
    tab = new_tab(chromium)
    tab.add_init_script(NO_TIME_TO_BIND)
    tab.goto(f"{lab.url}/lab")
    tab.wait_for_function("window.jupyterapp !== undefined")
    tab.evaluate("async () => { await window.jupyterapp.restored; }")
    opened = Notebook(tab, lab, "hurried.ipynb")
    yield opened
    tab.screenshot(path=shots / "final.png")
    opened.close()
    tab.close()


def test_a_painter_whose_model_went_deaf_hears_the_kernel_again(hurried_notebook: Any, shots):
    notebook = hurried_notebook
    notebook.run(painter_setup(brush=64))
    painter = Painter(notebook, shots)
    assert painter.kernel_link() == "healed"  # anywidget's handler refused a message: the model was deaf

    notebook.run("import numpy as np")
    painter.set_mask("np.pad(np.ones((200, 200), bool), ((100, 724), (100, 724)))")  # the kernel's mask shows
    painter.drag((400, 400), (800, 700))  # and the kernel's answer to a stroke comes back
    expected = stroke((400, 400), (800, 700), 64, (1024, 1024))
    expected[100:300, 100:300] = True
    assert iou(painter.kernel_mask("after"), expected) >= 0.8
