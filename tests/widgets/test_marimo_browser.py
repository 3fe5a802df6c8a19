"""MaskPainter in marimo (``marimo run``), in headless chromium: strokes, eraser, box, grow, clean up.

marimo implements the anywidget model interface and nothing more, so this is where a JS habit only
JupyterLab forgives (several keys in one ``set``, several events in one ``on``) loses the work. The
app writes what its kernel holds (each mask revision as PNG, the painter's state as JSON) into a folder
the test reads: every mask the page shows is compared with the kernel's, pixel for pixel.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from PIL import Image

import imagekit
from imagekit.widgets import mask_ops
from tests.helpers import wait_until
from tests.utils.browser import keep_figures, new_tab, served_edit
from tests.utils.users import make_user

from .marimo import MarimoApp, app_source
from .painting import Painter, iou, painter_setup, stroke

SIZE = (1024, 576)
BRUSH = 48
SHOTS = Path("/tmp/widgets-shots")  # the screenshots looked at by people as well as kept per test

# Kernel -> files: each mask revision as it arrives (browser or kernel), and the painter's state.
REPORT = """
import json, os, pathlib
kernel = pathlib.Path({folder!r})
def keep(name, data):
    part = kernel / f".{{name}}.part"
    part.write_bytes(data)
    os.replace(part, kernel / name)  # whole or not at all: the test reads while the app writes
def keep_mask(p):
    p.save_mask(kernel / ".mask.png")
    os.replace(kernel / ".mask.png", kernel / f"mask-{{p.revision}}.png")
def keep_state(change=None):
    result = painter.result.id if painter.result is not None else None
    keep("state.json", json.dumps({{"tool": painter.tool, "shape": painter.shape, "status": painter.status,
                                    "busy": painter.busy, "result": result}}).encode())
painter.on_mask(keep_mask)
painter.observe(keep_state, names=["tool", "shape", "status", "busy", "result_data"])
keep_state()
"""

# The page's mask as its canvas shows it (alpha set = painted), and how canvas pixels map to the image.
SHOWN = """async (el) => {
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const view = el.querySelector('.ik-view').getBoundingClientRect();
  const canvas = el.querySelector('canvas.ik-mask');
  const rgba = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  const on = new Array(canvas.width * canvas.height);
  for (let i = 0; i < on.length; i++) on[i] = rgba[i * 4 + 3] ? 1 : 0;
  return { vw: view.width, vh: view.height, dpr: devicePixelRatio, cw: canvas.width, ch: canvas.height,
           zoom: el.dataset.zoom || '1.00', on };
}"""


def shoot(tab, shots: Path, name: str) -> None:
    """A screenshot of the page, kept with the test's and in /tmp/widgets-shots/ for people to look at."""
    tab.screenshot(path=shots / f"{name}.png")
    SHOTS.mkdir(exist_ok=True)
    shutil.copy(shots / f"{name}.png", SHOTS / f"marimo-{name}.png")


class MarimoPainter(Painter):
    """The painter's view in a marimo page; the kernel's mask and state from the files the app writes."""

    def __init__(self, page, folder: Path, kernel: Path) -> None:
        super().__init__(SimpleNamespace(page=page), folder)
        self.kernel = kernel

    def revision(self) -> int:
        """The newest mask revision the page knows: its own last sync, or the kernel's last it loaded."""
        return max(int(self.root.get_attribute(name) or 0) for name in ("data-synced", "data-loaded"))

    def kernel_mask(self, name: str) -> np.ndarray:
        path = self.kernel / f"mask-{self.revision()}.png"
        wait_until(path.is_file, timeout=60, what=f"the kernel's mask {path.name}")
        shutil.copy(path, self.folder / f"mask-{name}.png")
        return np.asarray(Image.open(path)) > 0

    def state(self) -> dict:
        return json.loads((self.kernel / "state.json").read_text())

    def wait_state(self, **expected) -> dict:
        wait_until(lambda: {k: self.state()[k] for k in expected} == expected, timeout=60,
                   what=f"the kernel's painter reaching {expected}")
        return self.state()

    def shown(self) -> np.ndarray:
        """The page's mask sampled at the canvas's pixels, as the widget maps them (fitted, unzoomed)."""
        page = self.page.evaluate(SHOWN, self.root.element_handle())
        assert page["zoom"] == "1.00", page["zoom"]
        return np.array(page["on"], bool).reshape(page["ch"], page["cw"]), page

    def assert_kernel_shows(self, name: str) -> np.ndarray:
        """The kernel's mask, checked equal to the page's canvas at every canvas pixel."""
        kernel = self.kernel_mask(name)
        on, page = self.shown()
        # The same arithmetic as the widget's paint(), in the same doubles: canvas pixel -> image pixel.
        xs = [int((((i + 0.5) / page["dpr"]) / 1) * (SIZE[0] / page["vw"])) for i in range(page["cw"])]
        ys = [int((((j + 0.5) / page["dpr"]) / 1) * (SIZE[1] / page["vh"])) for j in range(page["ch"])]
        np.testing.assert_array_equal(on, kernel[np.ix_(ys, xs)], err_msg=f"page and kernel differ: {name}")
        return kernel

    def shot(self, name: str) -> None:
        shoot(self.page, self.folder, name)


@contextmanager
def opened(app: Path, chromium, lab_sandbox, key: str, tmp_path: Path) -> Iterator[Any]:
    """``app`` served by marimo as the user of ``key`` on ``lab_sandbox``, open in a chromium tab."""
    server = MarimoApp(app, {"IMAGEKIT_BASE_URL": lab_sandbox.url, "IMAGEKIT_API_KEY": key,
                             "IMAGEKIT_HOME": str(tmp_path / "imagekit")})
    server.start()
    tab = new_tab(chromium)
    try:
        tab.goto(server.url)
        yield tab
    finally:
        tab.close()
        server.stop()


@pytest.fixture
def painter(chromium, lab_sandbox, tmp_path, shots) -> Iterator[MarimoPainter]:
    """A MaskPainter of a generated 1024x576 image in a marimo app, open in a chromium page."""
    _, key = make_user(lab_sandbox, "pro")
    kernel = tmp_path / "kernel"
    kernel.mkdir()
    app = tmp_path / "painter_app.py"
    app.write_text(app_source(painter_setup(ratio="16:9", brush=BRUSH, before_shown=REPORT.format(folder=str(kernel)))))
    with opened(app, chromium, lab_sandbox, key, tmp_path) as tab:
        yield MarimoPainter(tab, shots, kernel)
        tab.screenshot(path=shots / "final.png")


@pytest.mark.slow(40)
def test_strokes_eraser_box_grow_and_clean_up_reach_the_kernel(painter, lab_sandbox, shots):
    assert painter.size == SIZE
    assert painter.kernel_link() == "no comm handler"  # marimo's models: not ipywidgets', no 2 s timer to mend
    painted = stroke((150, 150), (700, 420), BRUSH, SIZE)
    painter.drag((150, 150), (700, 420))
    first = painter.assert_kernel_shows("stroke")
    assert iou(first, painted) >= 0.8, iou(first, painted)
    one_stroke = painter.sync_stats()

    painter.click("eraser")
    painter.wait_state(tool="eraser")  # a tool button reaches the kernel (several keys, one by one)
    erased = stroke((600, 80), (300, 500), BRUSH, SIZE)
    painter.drag((600, 80), (300, 500))
    second = painter.assert_kernel_shows("erased")
    assert iou(second, painted & ~erased) >= 0.8, iou(second, painted & ~erased)
    assert (second & erased).sum() < 0.05 * erased.sum()
    painter.shot("erased")

    painter.click("box")
    painter.wait_state(tool="brush", shape="box")
    painter.drag((800, 300), (950, 500), steps=6)
    boxed = painter.assert_kernel_shows("box")
    expected = second | mask_ops.box(SIZE, (800, 300, 950, 500))
    assert iou(boxed, expected) >= 0.97, iou(boxed, expected)

    painter.kernel_change("grow")  # by the Amount (4 px): the kernel grows it and the page shows it
    grown = painter.assert_kernel_shows("grown")
    np.testing.assert_array_equal(grown, mask_ops.grow(boxed, 4))
    painter.shot("grown")

    painter.click("clean-up")
    painter.wait_result(1)
    state = painter.wait_state(busy=False, status="")
    assert state["result"] is not None, state
    served = served_edit(lab_sandbox, state["result"])
    assert served["size"] == SIZE and served["credits"] > 0, served
    assert painter.root.locator("figcaption").inner_text() == "result 1024×576"
    painter.shot("cleaned-up")
    keep_figures(shots, {"one stroke at 1024x576 in marimo": one_stroke})


STUDIO = """
import json, os, imagekit
from imagekit.widgets import PromptStudio
studio = PromptStudio(imagekit.connect(), count=1)
def keep(change=None):
    state = {{"prompt": studio.controls.prompt, "style": studio.controls.style, "count": studio.controls.count,
             "busy": studio.controls.busy, "images": [image.id for image in studio.gallery.items],
             "selected": [image.id for image in studio.selected], "source": studio.controls.source,
             "reference": len(studio.controls.reference)}}
    with open({path!r} + ".part", "w") as out:
        json.dump(state, out)
    os.replace({path!r} + ".part", {path!r})
studio.controls.observe(keep, names=["prompt", "style", "count", "busy", "source", "reference"])
studio.gallery.on_select(keep)
keep()
studio
"""


@pytest.fixture
def studio(chromium, lab_sandbox, tmp_path) -> Iterator[SimpleNamespace]:
    """A PromptStudio in a marimo app, open in a chromium page; ``wait_state`` reads what its kernel holds."""
    _, key = make_user(lab_sandbox, "pro")
    kernel = tmp_path / "studio.json"
    app = tmp_path / "studio_app.py"
    app.write_text(app_source(STUDIO.format(path=str(kernel))))

    def state() -> dict:
        return json.loads(kernel.read_text()) if kernel.is_file() else {}

    def wait_state(what: str, **expected) -> dict:
        wait_until(lambda: {k: state().get(k) for k in expected} == expected, timeout=60, what=what)
        return state()

    with imagekit.Client(lab_sandbox.url, key) as ik, opened(app, chromium, lab_sandbox, key, tmp_path) as tab:
        root = tab.locator(".ik-studio .ik-studio-controls")
        root.locator(".ik-balance", has_text="credits left").wait_for()
        yield SimpleNamespace(tab=tab, root=root, ik=ik, wait_state=wait_state)


def test_the_studio_in_marimo_generates_and_selects(studio, lab_sandbox, shots):
    """Type a prompt, pick a style and a count, Generate: the images show in the gallery, the balance is
    the service's, and the image clicked is ``studio.selected`` in the kernel."""
    tab, root, ik, wait_state = studio.tab, studio.root, studio.ik, studio.wait_state
    generate = root.locator("button.ik-generate")
    root.get_by_role("textbox", name="Prompt").fill("x" * 1201)  # over the limit: Generate waits
    wait_state("the long prompt reaching the kernel", prompt="x" * 1201)
    root.locator(".ik-counter.ik-over", has_text="1201 / 1200 characters").wait_for()
    tab.wait_for_function("b => b.disabled", arg=generate.element_handle())
    root.get_by_role("textbox", name="Prompt").fill("")
    root.get_by_role("textbox", name="Prompt").press_sequentially("a paper boat on a pond")  # no keystroke lost
    style = ik.styles()[1]
    root.get_by_role("combobox", name="Style").select_option(index=1)
    root.get_by_role("radiogroup", name="Count").get_by_role("radio", name="2").click()
    wait_state("the settings reaching the kernel", prompt="a paper boat on a pond", style=style.style_id, count=2)
    assert root.locator(".ik-counter").inner_text() == "22 / 1200 characters"
    tab.wait_for_function("b => !b.disabled", arg=generate.element_handle())
    shoot(tab, shots, "studio-ready")

    generate.click()
    tiles = tab.locator('.ik-studio .ik-gallery[data-count="2"] figure.ik-tile')
    tiles.nth(1).locator("img.ik-thumb").wait_for()
    tab.wait_for_function("imgs => imgs.every((img) => img.complete && img.naturalWidth > 0)",
                          arg=tiles.locator("img.ik-thumb").element_handles())
    images = wait_state("the images in the kernel", busy=False)["images"]
    served = [served_generation(lab_sandbox, image) for image in images]
    assert len(images) == 2 and served == [{"mode": "style", "style": style.style_id,
                                            "prompt": "a paper boat on a pond"}] * 2, served
    root.locator(".ik-progress").wait_for(state="hidden")
    assert root.locator(".ik-balance").inner_text() == f"{ik.usage().current_credit} credits left"
    assert root.locator(".ik-message").inner_text() == ""

    tiles.nth(1).click()
    tab.locator("figure.ik-tile.ik-selected").wait_for()
    wait_state("the selection reaching the kernel", selected=[images[1]])
    assert tiles.nth(1).locator("figcaption").inner_text() == f"#{images[1]}"
    assert tab.get_by_text("not supported").count() == 0  # marimo's banner for Jupyter widgets
    shoot(tab, shots, "studio")


def test_the_studio_in_marimo_enhances_and_takes_a_reference_chosen_in_the_page(studio, lab_sandbox, tmp_path, shots):
    """Enhance offers both prompts and Use enhanced takes one; a file chosen as the reference reaches the
    kernel, and Generate makes images from it."""
    tab, root, wait_state = studio.tab, studio.root, studio.wait_state
    prompt = root.get_by_role("textbox", name="Prompt")
    prompt.fill("a red kite")
    wait_state("the prompt reaching the kernel", prompt="a red kite")
    root.get_by_role("button", name="Enhance prompt").click()
    suggestion = root.locator(".ik-suggestion")
    suggestion.wait_for()
    assert prompt.input_value() == "a red kite"  # nothing replaced until chosen
    offered = root.locator(".ik-offer-text").all_inner_texts()
    assert offered[0] == "a red kite" and offered[1].startswith("a red kite") and offered[1] != offered[0], offered
    shoot(tab, shots, "studio-enhanced")
    root.locator(".ik-use-enhanced").click()
    suggestion.wait_for(state="hidden")
    wait_state("the enhanced prompt in the kernel", prompt=offered[1])
    assert prompt.input_value() == offered[1]

    reference = tmp_path / "reference.png"
    Image.new("RGB", (320, 240), "teal").save(reference)
    root.get_by_role("radio", name="Reference image").click()
    root.get_by_label("Reference", exact=True).set_input_files(reference)
    wait_state("the reference reaching the kernel", source="image", reference=reference.stat().st_size)
    root.locator("button.ik-generate").click()
    tab.locator('.ik-studio .ik-gallery[data-count="1"] img.ik-thumb').wait_for()
    (image,) = wait_state("the image in the kernel", busy=False)["images"]
    assert served_generation(lab_sandbox, image) == {"mode": "reference", "style": None, "prompt": offered[1]}
    shoot(tab, shots, "studio-reference")


def served_generation(box, image_id: int) -> dict:
    """How the sandbox made an image (from its own records): mode, style and prompt."""
    from imagekit.sandbox.store.tables import Image as Row

    with box.sandbox.db.read() as session:
        row = session.get(Row, image_id)
        return {"mode": row.mode, "style": row.style_id, "prompt": row.prompt}


def test_a_gallery_in_marimo_selects(chromium, lab_sandbox, tmp_path, shots):
    """A Gallery on its own in marimo: its selection reaches the kernel."""
    _, key = make_user(lab_sandbox, "pro")
    chosen = tmp_path / "selected.json"
    app = tmp_path / "gallery_app.py"
    app.write_text(app_source(f"""
import json, os, imagekit
from imagekit.widgets import Gallery
ik = imagekit.connect()
result = ik.create("a paper boat", style=ik.styles()[0].style_id, count=2)
gallery = Gallery(result.images)
def keep(images):
    with open({str(chosen)!r} + ".part", "w") as out:
        json.dump([image.id for image in images], out)
    os.replace({str(chosen)!r} + ".part", {str(chosen)!r})
gallery.on_select(keep)
gallery
"""))
    with opened(app, chromium, lab_sandbox, key, tmp_path) as tab:
        tiles = tab.locator('.ik-gallery[data-count="2"] figure.ik-tile')
        tiles.nth(1).click()
        tab.locator("figure.ik-tile.ik-selected").wait_for()
        wait_until(chosen.is_file, timeout=60, what="the selection reaching the kernel")
        (picked,) = json.loads(chosen.read_text())
        assert tiles.nth(1).locator("figcaption").inner_text() == f"#{picked}"
        shoot(tab, shots, "gallery")


def test_an_outpaint_frame_dragged_in_marimo_is_the_one_sent(chromium, lab_sandbox, tmp_path, shots):
    """A drag sets canvas, location and size together (three keys, one by one): all reach the kernel."""
    _, key = make_user(lab_sandbox, "pro")
    state = tmp_path / "frame.json"
    app = tmp_path / "framer_app.py"
    app.write_text(app_source(f"""
import json, os, imagekit
from imagekit.widgets import OutpaintFramer
ik = imagekit.connect()
framer = OutpaintFramer(ik.create("a red fox", style=ik.styles()[0].style_id, count=1, ratio="16:9").images[0])
def keep(change=None):
    with open({str(state)!r} + ".part", "w") as out:
        json.dump({{"canvas": framer.canvas, "location": framer.location, "size": framer.size,
                   "result": framer.result.id if framer.result is not None else None}}, out)
    os.replace({str(state)!r} + ".part", {str(state)!r})
framer.observe(keep, names=["canvas", "location", "size", "status"])
keep()
framer
"""))
    with opened(app, chromium, lab_sandbox, key, tmp_path) as tab:
        root = tab.locator('.ik-framer[data-ready="1"]')
        board = root.locator(".ik-board")
        board.wait_for(state="visible")
        scale = float(board.get_attribute("data-scale"))
        handle = root.locator('[data-handle="w"]').bounding_box()
        x, y = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
        tab.mouse.move(x, y)
        tab.mouse.down()
        tab.mouse.move(x - 200 * scale, y, steps=8)  # the left edge 200 px out: the original moves right
        tab.mouse.up()

        def framed() -> bool:
            frame = json.loads(state.read_text())
            return abs(frame["canvas"][0] - 1224) <= 2 and abs(frame["location"][0] - 200) <= 2
        wait_until(framed, timeout=60, what="the dragged frame reaching the kernel")
        frame = json.loads(state.read_text())
        assert frame["canvas"][1] == 576 and frame["size"] == [1024, 576], frame
        root.locator('button[data-action="outpaint"]').click()
        tab.wait_for_function("el => Number(el.dataset.results || 0) >= 1", arg=root.element_handle())
        wait_until(lambda: json.loads(state.read_text())["result"] is not None, timeout=60, what="the result")
        served = served_edit(lab_sandbox, json.loads(state.read_text())["result"])
        assert served["params"]["canvasSize"] == frame["canvas"]
        assert served["params"]["originalImageLocation"] == frame["location"]
        shoot(tab, shots, "outpainted")
