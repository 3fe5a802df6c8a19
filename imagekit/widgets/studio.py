"""PromptStudio: write a prompt, pick a style, a reference image or a collection, and generate.

Calls run on a worker thread, so the kernel stays free while images are made; progress and any error
(in plain words) show inline, and after every call the balance shown is the one ``usage()`` reports.
The images land in a Gallery with selection.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import ipywidgets as w
from ipywidgets import CallbackDispatcher

from ..errors import GenerationFailedError
from ..validation import PROMPT_LIMIT, check_create
from ._common import plain_error
from .choice import Choice
from .gallery import Gallery
from .snapshot import with_picture

__all__ = ["PromptStudio"]

RATIOS = [("square 1:1", "1:1"), ("portrait 3:4", "3:4"), ("landscape 4:3", "4:3"),
          ("tall 9:16", "9:16"), ("wide 16:9", "16:9")]
SOURCES = [("Style", "style"), ("Reference image", "image"), ("Collection", "collection")]


class PromptStudio:
    """Generate images from a notebook: prompt, source, ratio, count, enhance, Generate, gallery.

    ``client`` defaults to ``imagekit.connect()``. ``studio.selected`` gives the chosen Image handles;
    ``reference`` may be set to an Image handle, PIL image or path for reference-image mode.
    """

    def __init__(self, client: Any = None, *, prompt: str = "", count: int = 4, ratio: str = "1:1") -> None:
        if client is None:
            from .. import connect

            client = connect()
        self.client = client
        """The client every call goes through."""
        self.reference: Any = None
        """Reference image for the reference mode; an uploaded file is used when this is None."""
        self.result: Any = None
        """The last CreateResult."""
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="imagekit-studio")
        self._enhanced: tuple[str, str] | None = None
        self._callbacks = {"generate": CallbackDispatcher(), "error": CallbackDispatcher()}
        self._build(prompt, count, ratio)
        self._guarded(self._load_styles)  # at once: the pickers must be filled before the first click

    def _build(self, prompt: str, count: int, ratio: str) -> None:
        full = w.Layout(width="100%")
        self.prompt_box = w.Textarea(prompt, description="Prompt", placeholder="Describe the image…", rows=3,
                                     layout=full)
        self.prompt_box.add_class("ik-prompt")
        self.counter = w.HTML()
        self.source_picker = Choice(SOURCES, "style", description="Source")
        self.style_picker = w.Dropdown(description="Style", options=[])
        self.upload = w.FileUpload(accept="image/*", multiple=False, description="Reference")
        self.collection_box = w.BoundedIntText(1, min=1, max=2**31 - 1, description="Collection")
        self.ratio_picker = w.Dropdown(description="Ratio", options=RATIOS, value=ratio)
        self.count_picker = Choice([1, 2, 4], count, description="Count")
        self.count_picker.add_class("ik-count")
        self.enhance_button = w.Button(description="Enhance prompt", icon="magic")
        self.generate_button = w.Button(description="Generate", button_style="primary")
        self.generate_button.add_class("ik-generate")
        self.suggestion = Suggestion(self.use_prompt)
        self.progress = w.IntProgress(0, min=0, max=count, description="Generating",
                                      layout=w.Layout(visibility="hidden"))
        self.progress.add_class("ik-progress")
        self.balance = w.HTML()
        self.balance.add_class("ik-balance")
        self.message = w.HTML()
        self.message.add_class("ik-message")
        self.gallery = Gallery()
        self.source_box = w.HBox([self.style_picker])
        self.widget = w.VBox([
            self.prompt_box, self.counter, self.source_picker, self.source_box,
            w.HBox([self.ratio_picker, self.count_picker]),
            w.HBox([self.enhance_button, self.generate_button, self.progress, self.balance]),
            self.suggestion.widget, self.message, self.gallery,
        ])
        """The widget tree; showing the studio shows this."""
        self.widget.add_class("ik-studio")
        self.prompt_box.observe(self._count_prompt, "value")
        self.source_picker.observe(self._switch_source, "index")
        self.enhance_button.on_click(lambda _: self.enhance())
        self.generate_button.on_click(lambda _: self.generate())
        self._count_prompt()

    def __repr__(self) -> str:
        return f"PromptStudio(count={self.count_picker.value}, images={len(self.gallery.items)}, selected={len(self.selected)})"

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict]:
        # anywidget's metadata: Colab runs its custom widget manager (which the Choice and Gallery
        # anywidgets inside need) only for outputs that carry it; {} anywhere else.
        from anywidget._util import get_repr_metadata

        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        return with_picture(bundle, self.snapshot), get_repr_metadata()

    def _mime_(self) -> tuple[str, str]:
        """What marimo shows (only marimo asks for ``_mime_``): it runs no Jupyter widgets, so a line
        saying what to use there rather than its bare "not supported" banner."""
        return "text/html", (
            '<p class="ik-studio-elsewhere">PromptStudio is built of Jupyter widgets, which marimo does not run: '
            "open this notebook in JupyterLab or Notebook 7 for it, or here call <code>ik.create(prompt, "
            "style=...)</code> and show the images with <code>imagekit.widgets.Gallery(result.images)</code>; "
            "<code>MaskPainter</code> and <code>OutpaintFramer</code> work in marimo.</p>")

    def snapshot(self) -> Any:
        """The gallery as a picture (None before any image): what views without widgets show."""
        return self.gallery.snapshot()

    def close(self) -> None:
        """Stop the worker thread and close the widgets (the client stays open)."""
        self._pool.shutdown(wait=True)
        self.gallery.close()
        _close_tree(self.widget)

    @property
    def selected(self) -> list[Any]:
        """The Image handles chosen in the gallery."""
        return self.gallery.selected_items

    # -- actions (each runs on the worker thread; returns a Future) -------------------------------
    def generate(self) -> Future:
        """Generate with the current settings, without blocking; the Future gives the CreateResult."""
        try:  # checked as every create is, before anything is sent: the mistake shows inline
            options = self._options()
            check_create(self.prompt_box.value, options)
        except ValueError as exc:
            return self._failed(exc)
        return self._call(self._generate, self.prompt_box.value, options)

    def enhance(self) -> Future:
        """Text-to-prompt on the current prompt; shows both versions side by side to choose from (the
        prompt stays as it is until one is chosen)."""
        style = self.style_picker.value if self.source_picker.value == "style" else None
        return self._call(self._enhance, self.prompt_box.value, style)

    def on_generate(self, callback: Callable[[Any], Any], remove: bool = False) -> None:
        """Call ``callback(result)`` with each CreateResult."""
        self._callbacks["generate"].register_callback(callback, remove=remove)

    def on_error(self, callback: Callable[[BaseException], Any], remove: bool = False) -> None:
        """Call ``callback(exception)`` when a call fails (the message also shows inline)."""
        self._callbacks["error"].register_callback(callback, remove=remove)

    def _call(self, work: Callable[..., Any], *args: Any) -> Future:
        self._set_busy(True)
        self.message.value = ""
        return self._pool.submit(self._guarded, work, *args)

    def use_prompt(self, which: str) -> str:
        """Take the ``"enhanced"`` or the ``"initial"`` prompt the last ``enhance()`` offered."""
        if not self._enhanced:
            raise ValueError("nothing to choose from: run enhance() first")
        self.prompt_box.value = self._enhanced[{"initial": 0, "enhanced": 1}[which]]
        self.suggestion.hide()
        return self.prompt_box.value

    def _guarded(self, work: Callable[..., Any], *args: Any) -> Any:
        try:
            return work(*args)
        except Exception as exc:  # shown inline; the Future resolves to None
            self._show_error(exc)
            return None
        finally:  # every outcome: nothing left spinning, and the balance the service has now
            self.progress.layout.visibility = "hidden"
            self._show_balance()
            self._set_busy(False)

    def _failed(self, exc: Exception) -> Future:
        self._show_error(exc)
        done: Future = Future()
        done.set_result(None)
        return done

    def _show_error(self, exc: Exception) -> None:
        self.message.value = f'<span style="color:var(--jp-error-color1,#c62828)">{html.escape(plain_error(exc))}</span>'
        self._callbacks["error"](exc)

    # -- work ------------------------------------------------------------------------------------
    def _load_styles(self) -> None:
        styles = self.client.styles()
        self.style_picker.options = [(f"{s.main_text or s.main} · {s.credit_cost} credits", s.style_id)
                                     for s in styles]
        self.style_picker.value = styles[0].style_id if styles else None

    def _generate(self, prompt: str, options: dict) -> Any:
        count = options["count"]
        self.progress.max, self.progress.value = count, 0
        self.progress.layout.visibility = "visible"
        result = self.client.create(prompt, is_async=True, **options)
        failed = 0
        for image in result.images:
            try:
                image.wait()
            except GenerationFailedError:
                failed += 1
            self.progress.value += 1
        self.gallery.show([image for image in result.images if image.status == "COMPLETED"])
        if failed:
            self.message.value = f"{failed} of {count} images failed to generate (their credits were refunded)."
        self.result = result
        self._callbacks["generate"](result)
        return result

    def _enhance(self, text: str, style: Any) -> Any:
        answer = self.client.text_to_prompt(text, style=style)
        initial, enhanced = answer.initial_prompt or text, answer.enhanced_prompt or text
        self._enhanced = (initial, enhanced)
        self.suggestion.offer(initial, enhanced)
        return answer

    # -- view helpers ----------------------------------------------------------------------------
    def _options(self) -> dict:
        options: dict[str, Any] = {"count": self.count_picker.value, "ratio": self.ratio_picker.value}
        mode = self.source_picker.value
        if mode == "style":
            options["style"] = self.style_picker.value
        elif mode == "collection":
            options["collection"] = self.collection_box.value
        else:
            options["image"] = self.reference if self.reference is not None else _uploaded(self.upload)
        if self._enhanced and self.prompt_box.value in self._enhanced:
            options["initial_prompt"], options["enhanced_prompt"] = self._enhanced
        return options

    def _show_balance(self) -> None:
        # Asked of the service after every call: a refund or another session may have moved it.
        try:
            self.balance.value = f"<b>{self.client.usage().current_credit}</b> credits left"
        except Exception as exc:  # noqa: BLE001 - the call's own outcome matters more than this
            self.balance.value = f"balance unknown ({html.escape(plain_error(exc))})"

    def _set_busy(self, busy: bool) -> None:
        self.enhance_button.disabled = busy
        self.count_picker.disabled = busy
        self.generate_button.disabled = busy or not self._prompt_ok()

    def _prompt_ok(self) -> bool:
        return 0 < len(self.prompt_box.value.strip()) and len(self.prompt_box.value) <= PROMPT_LIMIT

    def _count_prompt(self, change: Any = None) -> None:
        n = len(self.prompt_box.value)
        colour = "var(--jp-error-color1,#c62828)" if n > PROMPT_LIMIT else "var(--jp-ui-font-color2,#666)"
        self.counter.value = f'<span style="color:{colour}">{n} / {PROMPT_LIMIT} characters</span>'
        self.generate_button.disabled = not self._prompt_ok()

    def _switch_source(self, change: Any) -> None:
        self.source_box.children = [{"style": self.style_picker, "image": self.upload,
                                     "collection": self.collection_box}[self.source_picker.value]]


class Suggestion:
    """The initial and the enhanced prompt side by side, each readable in full, with a button to take it."""

    def __init__(self, choose: Callable[[str], Any]) -> None:
        self._texts = {which: w.HTML(layout=w.Layout(width="100%")) for which in ("initial", "enhanced")}
        panes = []
        for which, title, label in (("initial", "Your prompt", "Keep mine"), ("enhanced", "Enhanced", "Use enhanced")):
            button = w.Button(description=label, tooltip=f"{label}: put this version in the prompt box")
            button.add_class(f"ik-use-{which}")
            button.on_click(lambda _, which=which: choose(which))
            panes.append(w.VBox([w.HTML(f"<b>{title}</b>"), self._texts[which], button],
                                layout=w.Layout(flex="1 1 0", min_width="0", padding="0 8px 0 0")))
        self.widget = w.HBox(panes, layout=w.Layout(display="none", width="100%"))
        """Both versions; hidden until ``offer``."""
        self.widget.add_class("ik-suggestion")

    def offer(self, initial: str, enhanced: str) -> None:
        for which, text in (("initial", initial), ("enhanced", enhanced)):
            self._texts[which].value = f'<div style="white-space:pre-wrap;overflow-wrap:anywhere">{html.escape(text)}</div>'
        self.widget.layout.display = "flex"

    def hide(self) -> None:
        self.widget.layout.display = "none"


def _close_tree(widget: w.Widget) -> None:
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    widget.close()


def _uploaded(upload: w.FileUpload) -> bytes:
    if not upload.value:
        raise ValueError("choose a reference image first (or set studio.reference)")
    return bytes(upload.value[0]["content"])
