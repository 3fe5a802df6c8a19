"""PromptStudio and Gallery without a browser: pickers, generate, enhance, selection, inline errors."""

from __future__ import annotations

import base64
import io
import sys
import types

import httpx
import pytest
from PIL import Image
from traitlets import TraitError

import imagekit
from imagekit.widgets import Gallery, PromptStudio
from imagekit.widgets.choice import Choice
from tests.conftest import make_user
from tests.helpers import TLS


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
    assert studio.style_picker.value == styles[0].style_id
    assert studio.style_picker.options[0][0] == f"{styles[0].main_text} · {styles[0].credit_cost} credits"
    assert studio.balance.value == f"<b>{ik.usage().current_credit}</b> credits left"
    assert studio.progress.layout.visibility == "hidden"
    assert repr(studio) == "PromptStudio(count=2, images=0, selected=0)"


def test_counter_and_generate_button_follow_the_prompt(studio):
    assert "20 / 1200" in studio.counter.value and not studio.generate_button.disabled
    studio.prompt_box.value = "x" * 1201
    assert "1201 / 1200" in studio.counter.value and studio.generate_button.disabled
    studio.prompt_box.value = "  "
    assert studio.generate_button.disabled


def test_generate_fills_the_gallery_and_the_balance(studio):
    results = []
    studio.on_generate(results.append)
    result = studio.generate().result(timeout=60)
    assert len(result) == 2 and results == [result]
    assert studio.gallery.items == result.images and len(studio.gallery.thumbnails) == 2
    assert all(url.startswith("data:image/png;base64,") for url in studio.gallery.thumbnails)
    assert studio.balance.value == f"<b>{studio.client.usage().current_credit}</b> credits left"
    assert studio.progress.value == 2 and studio.message.value == ""
    assert studio.progress.layout.visibility == "hidden"
    studio.gallery.selected = [1]
    assert studio.selected == [result.images[1]]


def test_enhance_offers_both_prompts_and_replaces_nothing_until_chosen(studio):
    typed = studio.prompt_box.value
    answer = studio.enhance().result(timeout=60)
    assert studio.prompt_box.value == typed and studio.suggestion.widget.layout.display == "flex"
    shown = "".join(text.value for text in studio.suggestion._texts.values())
    assert answer.enhanced_prompt in shown and answer.initial_prompt in shown
    assert studio.use_prompt("enhanced") == answer.enhanced_prompt == studio.prompt_box.value
    assert studio.suggestion.widget.layout.display == "none"
    assert studio._options()["enhanced_prompt"] == answer.enhanced_prompt
    studio.use_prompt("initial")
    assert studio.prompt_box.value == answer.initial_prompt


def test_a_refused_generate_clears_progress_and_shows_the_real_balance(either_sandbox):
    user_id, key = make_user(either_sandbox)
    httpx.post(f"{either_sandbox.url}/sandbox/users/{user_id}/credits",
               json={"defaultCredit": 1, "dailyCredit": 0, "monthlyCredit": 0}, verify=TLS).raise_for_status()
    with imagekit.Client(either_sandbox.url, key) as client:
        studio = PromptStudio(client, prompt="a kite", count=4)
        try:
            assert studio.generate().result(timeout=60) is None
            assert "Not enough credit (402)" in studio.message.value
            assert studio.progress.layout.visibility == "hidden" and not studio.generate_button.disabled
            assert studio.balance.value == f"<b>{client.usage().current_credit}</b> credits left"
        finally:
            studio.close()


def test_choice_names_its_group_and_keeps_values():
    choice = Choice([("one", 1), ("four", 4)], 4, description="Count")
    assert (choice.value, choice.index, choice.labels) == (4, 1, ["one", "four"])
    choice.value = 1
    assert choice.index == 0 and repr(choice) == "Choice('Count', value=1)"
    with pytest.raises(TraitError):
        choice.index = 2


def test_errors_show_inline_in_plain_words(studio):
    errors = []
    studio.on_error(errors.append)
    studio.source_picker.value = "collection"
    studio.collection_box.value = 987654
    assert studio.generate().result(timeout=60) is None
    assert isinstance(errors[0], imagekit.CollectionNotFoundError)
    assert "Collection not found (404)" in studio.message.value and "Traceback" not in studio.message.value
    studio.source_picker.value = "image"
    assert studio.generate().result(timeout=60) is None
    assert "choose a reference image" in studio.message.value
    assert not studio.enhance_button.disabled


def test_a_mistake_shows_inline_before_anything_is_sent(studio, ik):
    """The studio's settings go through the one validator: the same one line as a call's, nothing sent."""
    errors = []
    studio.on_error(errors.append)
    before = ik.usage().current_credit
    studio.prompt_box.value = "x" * 1201  # the button is disabled; a script may still call generate()
    assert studio.generate().result(timeout=60) is None
    assert "prompt = &#x27;xxx" in studio.message.value and "at most 1200 characters (this has 1201)" in studio.message.value
    studio.prompt_box.value = "   "
    assert studio.generate().result(timeout=60) is None
    assert "prompt = &#x27;   &#x27;: a prompt is needed" in studio.message.value
    assert all(isinstance(error, imagekit.ValidationError) for error in errors) and len(errors) == 2
    assert ik.usage().current_credit == before and studio.result is None


def test_reference_mode_uses_the_given_image(studio):
    studio.source_picker.value = "image"
    studio.reference = Image.new("RGB", (256, 256), "teal")
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


def test_marimo_is_told_what_to_use_instead_of_the_studio(studio):
    mime, text = studio._mime_()  # only marimo asks for _mime_
    assert mime == "text/html" and "JupyterLab" in text and "Gallery" in text and "MaskPainter" in text
