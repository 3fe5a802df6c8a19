"""The committed example notebooks as a reader on the web sees them: nbconvert's HTML (what GitHub and
nbviewer render, with no widget state and no kernel) in chromium, each widget output a picture."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.utils.browser import new_tab

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SHOTS = Path("/tmp/widgets-shots")

# Each code cell's outputs, in the page's order, with what each shows.
OUTPUTS = """() => [...document.querySelectorAll('.jp-Cell.jp-CodeCell')].map((cell) =>
  [...cell.querySelectorAll('.jp-OutputArea-output')].map((out) => ({
    text: out.innerText,
    pictures: [...out.querySelectorAll('img')].map((img) => ({
      jpeg: img.src.startsWith('data:image/jpeg'), width: img.naturalWidth, height: img.naturalHeight,
      shown: img.getBoundingClientRect().width })),
  })))"""


def widget_outputs(notebook: dict) -> list[tuple[int, str]]:
    """(code cell's place among code cells, its text repr) of every widget output the notebook holds."""
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    return [(place, "".join(output["data"]["text/plain"])) for place, cell in enumerate(code)
            for output in cell.get("outputs", []) if WIDGET_VIEW in output.get("data", {})]


@pytest.mark.slow(15)
@pytest.mark.parametrize("name", ["01_quickstart", "03_edit_chains_and_masks"])
def test_a_committed_notebook_shows_its_widgets_as_pictures(chromium, name, shots):
    from nbconvert import HTMLExporter

    path = NOTEBOOKS / f"{name}.ipynb"
    notebook = json.loads(path.read_text())
    assert "widgets" not in notebook["metadata"]  # saved as JupyterLab saves by default: no widget state
    widgets = widget_outputs(notebook)
    assert widgets, f"{name} shows no widget"
    page_file = shots / f"{name}.html"
    page_file.write_text(HTMLExporter().from_filename(str(path))[0])
    tab = new_tab(chromium)
    tab.route("http*://**", lambda route: route.abort())  # offline, as the page's CDN scripts would be
    try:
        tab.goto(page_file.as_uri())
        tab.wait_for_function("() => [...document.images].every((img) => img.complete)")
        cells = tab.evaluate(OUTPUTS)
        for place, text in widgets:
            (shown,) = [output for output in cells[place] if output["pictures"]]
            (picture,) = shown["pictures"]
            assert picture["jpeg"] and picture["width"] >= 200 and picture["shown"] >= 200, (text, picture)
            assert text not in shown["text"]  # the picture, not the repr
            tab.locator(".jp-Cell.jp-CodeCell").nth(place).screenshot(path=shots / f"cell-{place}.png")
            SHOTS.mkdir(exist_ok=True)
            shutil.copy(shots / f"cell-{place}.png", SHOTS / f"nbconvert-{name}-cell-{place}.png")
    finally:
        tab.close()
