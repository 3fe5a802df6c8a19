"""PromptStudio and Gallery without a browser: pickers, generate, enhance, selection, inline errors."""

from __future__ import annotations

import base64
import io
import re
import sys
import types

import httpx
import pytest
from PIL import Image
from traitlets import TraitError

import imagekit
from imagekit.widgets import Gallery, PromptStudio
from imagekit.widgets.studio import StudioControls
from tests.helpers import TLS, wait_until
from tests.utils.users import make_user


@pytest.fixture
def ik(either_sandbox):
    """A client of each face of the sandbox: the studio's balance must come from the interface alone."""
    with imagekit.Client(either_sandbox.url, make_user(either_sandbox)[1]) as client:
        yield client


@pytest.fixture
def studio(ik):
    opened = PromptStudio(ik, prompt="a lighthouse at dusk", count=2)
    yield opened
    opened.close()


def test_pickers_are_filled_from_the_account(studio, ik):
    styles = ik.styles()
    assert studio.controls.style == styles[0].style_id
    assert studio.controls.styles[0] == [f"{styles[0].main_text} · {styles[0].credit_cost} credits", styles[0].style_id]
    assert studio.controls.balance == f"{ik.usage().current_credit} credits left"
    assert not studio.controls.working and not studio.controls.busy
    assert repr(studio) == "PromptStudio(count=2, images=0, selected=0)"


def test_generate_is_ready_only_for_a_prompt_that_may_be_sent(studio):
    """The page counts the characters against ``limit`` and enables Generate on ``ready``."""
    assert studio.controls.limit == 1200 and studio.controls.ready
    studio.controls.prompt = "x" * 1201
    assert not studio.controls.ready
    studio.controls.prompt = "x" * 1200
    assert studio.controls.ready
    studio.controls.prompt = "  "
    assert not studio.controls.ready


def test_generate_fills_the_gallery_and_the_balance(studio):
    results = []
    studio.on_generate(results.append)
    result = studio.generate().result(timeout=60)
    assert len(result) == 2 and results == [result]
    assert studio.gallery.items == result.images and len(studio.gallery.thumbnails) == 2
    assert all(url.startswith("data:image/png;base64,") for url in studio.gallery.thumbnails)
    assert studio.controls.balance == f"{studio.client.usage().current_credit} credits left"
    assert (studio.controls.done, studio.controls.total, studio.controls.message) == (2, 2, "")
    assert not studio.controls.working and not studio.controls.busy
    studio.gallery.selected = [1]
    assert studio.selected == [result.images[1]]


def test_the_bar_hides_in_the_message_that_brings_the_new_balance(studio, monkeypatch):
    """The page never shows the work done beside the balance from before it (the Lab test once read that)."""
    sent = []
    monkeypatch.setattr(studio.controls, "_send", lambda msg, buffers=None: sent.append(msg["state"]))
    studio.generate().result(timeout=60)
    ended = [state for state in sent if state.get("working") is False]
    assert ended == [{"balance": f"{studio.client.usage().current_credit} credits left", "working": False, "busy": False}]
    assert all("balance" not in state for state in sent if state is not ended[0])


def test_enhance_offers_both_prompts_and_replaces_nothing_until_chosen(studio):
    typed = studio.controls.prompt
    answer = studio.enhance().result(timeout=60)
    assert studio.controls.prompt == typed
    assert studio.controls.suggestion == [answer.initial_prompt, answer.enhanced_prompt]
    assert studio.use_prompt("enhanced") == answer.enhanced_prompt == studio.controls.prompt
    assert studio.controls.suggestion == []
    assert studio._options()["enhanced_prompt"] == answer.enhanced_prompt
    studio.use_prompt("initial")
    assert studio.controls.prompt == answer.initial_prompt


def test_the_pages_buttons_reach_the_studio_as_messages(studio):
    """What studio.js sends: {event: "enhance"}, {event: "use", which}, {event: "generate"}."""
    studio._browser_asked(studio.controls, {"event": "use", "which": "enhanced"}, [])  # nothing offered yet
    assert studio.controls.prompt == "a lighthouse at dusk"
    studio._browser_asked(studio.controls, {"event": "enhance"}, [])
    wait_until(lambda: studio.controls.suggestion and not studio.controls.busy, timeout=60, what="the offer")
    studio._browser_asked(studio.controls, {"event": "use", "which": "enhanced"}, [])
    assert studio.controls.prompt == studio._enhanced[1] and studio.controls.suggestion == []
    studio._browser_asked(studio.controls, {"event": "generate"}, [])
    wait_until(lambda: studio.result is not None and not studio.controls.busy, timeout=60, what="the images")
    assert len(studio.gallery.items) == 2


def test_a_refused_generate_clears_progress_and_shows_the_real_balance(either_sandbox):
    user_id, key = make_user(either_sandbox)
    httpx.post(f"{either_sandbox.url}/sandbox/users/{user_id}/credits",
               json={"defaultCredit": 1, "dailyCredit": 0, "monthlyCredit": 0}, verify=TLS, timeout=120).raise_for_status()
    with imagekit.Client(either_sandbox.url, key) as client:
        studio = PromptStudio(client, prompt="a kite", count=4)
        try:
            assert studio.generate().result(timeout=60) is None
            assert "Not enough credit (402)" in studio.controls.message and studio.controls.error
            assert not studio.controls.working and not studio.controls.busy and studio.controls.ready
            assert studio.controls.balance == f"{client.usage().current_credit} credits left"
        finally:
            studio.close()


def test_the_controls_take_only_what_they_offer():
    controls = StudioControls(count=2, ratio="16:9")
    assert (controls.count, controls.counts, controls.ratio) == (2, [1, 2, 4], "16:9")
    assert ["wide 16:9", "16:9"] in controls.ratios
    assert repr(controls) == "StudioControls(source='style', count=2, busy=False)"
    with pytest.raises(TraitError, match=r"count 3 is not offered; choose one of 1, 2, 4"):
        controls.count = 3
    with pytest.raises(TraitError, match="ratio '2:1' is not offered"):
        controls.ratio = "2:1"
    with pytest.raises(TraitError, match="style 7 is not offered"):
        controls.style = 7
    with pytest.raises(TraitError):
        controls.source = "video"
    with pytest.raises(TraitError):
        controls.collection = 0
    assert controls.count == 2 and controls.source == "style"


def test_errors_show_inline_in_plain_words(studio):
    errors = []
    studio.on_error(errors.append)
    studio.controls.source = "collection"
    studio.controls.collection = 987654
    assert studio.generate().result(timeout=60) is None
    assert isinstance(errors[0], imagekit.CollectionNotFoundError)
    assert "Collection not found (404)" in studio.controls.message and "Traceback" not in studio.controls.message
    studio.controls.source = "image"
    assert studio.generate().result(timeout=60) is None
    assert "choose a reference image" in studio.controls.message and studio.controls.error
    assert not studio.controls.busy


def test_a_mistake_shows_inline_before_anything_is_sent(studio, ik):
    """The studio's settings go through the one validator: the same one line as a call's, nothing sent."""
    errors = []
    studio.on_error(errors.append)
    before = ik.usage().current_credit
    studio.controls.prompt = "x" * 1201  # the button is disabled; a script may still call generate()
    assert studio.generate().result(timeout=60) is None
    assert "prompt = 'xxx" in studio.controls.message and "at most 1200 characters (this has 1201)" in studio.controls.message
    studio.controls.prompt = "   "
    assert studio.generate().result(timeout=60) is None
    assert "prompt = '   ': a prompt is needed" in studio.controls.message
    assert all(isinstance(error, imagekit.ValidationError) for error in errors) and len(errors) == 2
    assert ik.usage().current_credit == before and studio.result is None


def test_a_wrong_client_an_empty_prompt_and_a_file_that_is_no_image_are_told_before_anything_is_sent(studio, ik,
                                                                                                        tmp_path):
    with pytest.raises(TypeError, match=r"PromptStudio takes an imagekit client \(imagekit.connect\(\)\), not str"):
        PromptStudio("sk-my-key")
    before = ik.usage().current_credit
    studio.controls.prompt = ""
    assert studio.enhance().result(timeout=60) is None
    assert studio.controls.message == "write a prompt first: enhance makes a richer one from it"
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    studio.controls.prompt, studio.controls.source, studio.reference = "a fox", "image", str(notes)
    assert studio.generate().result(timeout=60) is None
    assert studio.controls.message == f"{notes} is not a PNG, JPEG or WebP image, which a reference image must be"
    assert ik.usage().current_credit == before


def test_reference_mode_uses_the_given_image(studio):
    studio.controls.source = "image"
    studio.reference = Image.new("RGB", (256, 256), "teal")
    assert len(studio.generate().result(timeout=60)) == 2


def test_reference_mode_uses_the_file_chosen_in_the_page(studio):
    out = io.BytesIO()
    Image.new("RGB", (256, 256), "orange").save(out, format="PNG")
    studio.controls.source = "image"
    studio.controls.set_state({"reference": memoryview(out.getvalue())})  # as the page's buffer arrives
    assert studio._options()["image"] == out.getvalue()
    assert len(studio.generate().result(timeout=60)) == 2


def test_gallery_selection_single_and_multiple():
    items = [Image.new("RGB", (40, 30), c) for c in ("red", "green", "blue")]
    gallery = Gallery(items, multiple=False)
    chosen = []
    gallery.on_select(chosen.append)
    gallery.selected = [2]
    assert gallery.selected_items == [items[2]] and chosen == [[items[2]]]
    assert gallery.captions == ["40x30"] * 3 and repr(gallery) == "Gallery(3 images, 1 selected)"
    gallery.show(items[:1])
    assert gallery.selected == [] and len(gallery.thumbnails) == 1


def test_the_studio_shows_its_gallery_where_no_widget_runs(studio):
    data, metadata = studio._repr_mimebundle_()
    assert "image/jpeg" not in data and studio.snapshot() is None  # nothing generated: nothing to picture
    assert data["text/plain"] == repr(studio) and metadata == {}  # no Colab here: no Colab metadata
    studio.generate().result(timeout=120)
    data, _ = studio._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data and "text/html" not in data
    picture = Image.open(io.BytesIO(base64.b64decode(data["image/jpeg"])))
    assert picture.size == studio.snapshot().size == studio.gallery.snapshot().size


def test_in_colab_the_studio_carries_the_widget_manager_metadata(studio, monkeypatch):
    # Colab's own module as Colab's kernel holds it: what anywidget reads to write its metadata.
    url = "https://ssl.gstatic.com/colaboratory-static/widgets/colab-cdn-widget-manager/abc/manager.min.js"
    output = types.ModuleType("google.colab.output")
    output.enable_custom_widget_manager = lambda: None  # type: ignore[attr-defined]
    output._widgets = types.SimpleNamespace(_installed_url=url)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "google.colab.output", output)
    _, metadata = studio._repr_mimebundle_()
    assert metadata == {"application/vnd.jupyter.widget-view+json": {"colab": {"custom_widget_manager": {"url": url}}}}


def test_marimo_shows_the_studio_as_its_two_anywidgets(studio):
    """marimo asks an object for ``_display_`` before anything else: the controls over the gallery, each
    as marimo shows an anywidget (test_marimo_browser.py drives them)."""
    from marimo._output.formatting import try_format

    shown = try_format(studio)
    assert shown.mimetype == "text/html" and shown.data.startswith('<div class="ik-studio">'), shown
    models = re.findall(r"<marimo-anywidget [^>]*data-model-id='&quot;(\w+)&quot;'", shown.data)
    assert models == [studio.controls.model_id, studio.gallery.model_id]
