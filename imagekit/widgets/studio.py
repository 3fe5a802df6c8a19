"""PromptStudio: write a prompt, pick a style, a reference image or a collection, and generate.

Two anywidgets, so it runs wherever anywidgets do (JupyterLab, Notebook 7, marimo): ``StudioControls``
(everything but the images) and a ``Gallery`` with selection, shown one above the other. Calls run on a
worker thread, so the kernel stays free while images are made; progress and any error (in plain words)
show inline, and after every call the balance shown is the one ``usage()`` reports.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ipywidgets import CallbackDispatcher
from traitlets import Bool, Enum, Int, List, TraitError, Unicode, observe, validate

from ..errors import GenerationFailedError
from ..validation import PROMPT_LIMIT, check_create
from ._assets import asset_module, asset_text
from ._common import PageWidget, binary_trait, plain_error
from .gallery import Gallery
from .snapshot import with_picture

__all__ = ["PromptStudio", "StudioControls"]

RATIOS = [("square 1:1", "1:1"), ("portrait 3:4", "3:4"), ("landscape 4:3", "4:3"),
          ("tall 9:16", "9:16"), ("wide 16:9", "16:9")]
COUNTS = [1, 2, 4]


class StudioControls(PageWidget):
    """The studio's controls in one widget; its buttons send ``{"event": ...}`` messages that the
    PromptStudio answers by setting the traits below."""

    _esm = asset_module("studio.js")
    _css = asset_text("studio.css")

    prompt = Unicode("", help="the prompt as typed").tag(sync=True)
    limit = Int(PROMPT_LIMIT, help="the most characters a prompt may have").tag(sync=True)
    ready = Bool(False, help="whether the prompt may be sent: not blank, within the limit").tag(sync=True)
    source = Enum(["style", "image", "collection"], "style", help="what the images follow").tag(sync=True)
    styles = List(List(), help="the account's styles as [label, style id] pairs").tag(sync=True)
    style = Int(None, allow_none=True, help="the chosen style's id").tag(sync=True)
    reference = binary_trait("the reference image chosen in the page (empty: none)")
    collection = Int(1, min=1, help="the collection's id").tag(sync=True)
    ratios = List(List(), help="the ratios as [label, ratio] pairs").tag(sync=True)
    ratio = Unicode("1:1", help="the chosen ratio").tag(sync=True)
    counts = List(Int(), help="the image counts offered").tag(sync=True)
    count = Int(4, help="how many images to make").tag(sync=True)
    busy = Bool(False, help="whether a call is running (the controls wait)").tag(sync=True)
    working = Bool(False, help="whether the progress bar shows").tag(sync=True)
    done = Int(0, help="images finished so far").tag(sync=True)
    total = Int(0, help="images asked for").tag(sync=True)
    balance = Unicode("", help="the balance line, as usage() last reported it").tag(sync=True)
    message = Unicode("", help="the last call's outcome in plain words ('' when it went well)").tag(sync=True)
    error = Bool(False, help="whether the message reports an error").tag(sync=True)
    suggestion = List(Unicode(), help="[initial, enhanced] prompts offered side by side ([]: none)").tag(sync=True)

    def __init__(self, **traits: Any) -> None:
        super().__init__(ratios=[list(pair) for pair in RATIOS], counts=COUNTS, **traits)
        self._check_prompt()

    def __repr__(self) -> str:
        return f"StudioControls(source={self.source!r}, count={self.count}, busy={self.busy})"

    @observe("prompt", "limit")
    def _check_prompt(self, change: Any = None) -> None:
        self.ready = 0 < len(self.prompt.strip()) and len(self.prompt) <= self.limit

    @validate("ratio")
    def _known_ratio(self, proposal: Any) -> str:
        return _offered(proposal["value"], [value for _, value in self.ratios], "ratio")

    @validate("count")
    def _known_count(self, proposal: Any) -> int:
        return _offered(proposal["value"], self.counts, "count")

    @validate("style")
    def _known_style(self, proposal: Any) -> int | None:
        value = proposal["value"]
        return value if value is None else _offered(value, [value for _, value in self.styles], "style")


def _offered(value: Any, offered: list, what: str) -> Any:
    if value not in offered:
        raise TraitError(f"{what} {value!r} is not offered; choose one of {', '.join(map(repr, offered))}")
    return value


class PromptStudio:
    """Generate images from a notebook: prompt, source, ratio, count, enhance, Generate, gallery.

    ``client`` defaults to ``imagekit.connect()``. The settings are ``studio.controls``' traits
    (``prompt``, ``source``, ``style``, ``collection``, ``ratio``, ``count``); ``studio.selected`` gives the
    chosen Image handles; ``reference`` may be set to an Image handle, PIL image or path for reference mode.
    """

    def __init__(self, client: Any = None, *, prompt: str = "", count: int = 4, ratio: str = "1:1") -> None:
        if client is None:
            from ..embedded import connect

            client = connect()
        elif not all(callable(getattr(client, name, None)) for name in ("create", "styles", "text_to_prompt", "usage")):
            raise TypeError(f"PromptStudio takes an imagekit client (imagekit.connect()), not {type(client).__name__}")
        self.client = client
        """The client every call goes through."""
        self.reference: Any = None
        """Reference image for the reference mode; the file chosen in the page is used when this is None."""
        self.result: Any = None
        """The last CreateResult."""
        self.controls = StudioControls(prompt=prompt, count=count, ratio=ratio)
        """Everything but the images: the settings, the buttons, progress, balance and message."""
        self.gallery = Gallery()
        """The last call's images, with selection."""
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="imagekit-studio")
        self._enhanced: tuple[str, str] | None = None
        self._callbacks = {"generate": CallbackDispatcher(), "error": CallbackDispatcher()}
        self._widget: Any = None
        self.controls.on_msg(self._browser_asked)
        self._guarded(self._load_styles)  # at once: the pickers must be filled before the first click

    def __repr__(self) -> str:
        return f"PromptStudio(count={self.controls.count}, images={len(self.gallery.items)}, selected={len(self.selected)})"

    @property
    def widget(self) -> Any:
        """The controls above the gallery in one ipywidgets box: what Jupyter front ends show."""
        if self._widget is None:
            import ipywidgets as w

            self._widget = w.VBox([self.controls, self.gallery])
            self._widget.add_class("ik-studio")
        return self._widget

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict]:
        # anywidget's metadata: Colab runs its custom widget manager (which the anywidgets inside need)
        # only for outputs that carry it; {} anywhere else.
        from anywidget._util import get_repr_metadata

        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        return with_picture(bundle, self.snapshot), get_repr_metadata()

    def _display_(self) -> Any:
        """What marimo shows (only marimo asks for ``_display_``): the two anywidgets one above the other,
        in a box of the class Jupyter's has."""
        import marimo as mo

        return mo.Html(f'<div class="ik-studio">{mo.vstack([self.controls, self.gallery]).text}</div>')

    def snapshot(self) -> Any:
        """The gallery as a picture (None before any image): what views without widgets show."""
        return self.gallery.snapshot()

    def close(self) -> None:
        """Stop the worker thread and close the widgets (the client stays open)."""
        self._pool.shutdown(wait=True)
        for widget in (self.controls, self.gallery, self._widget):
            if widget is not None:
                widget.close()

    @property
    def selected(self) -> list[Any]:
        """The Image handles chosen in the gallery."""
        return self.gallery.selected_items

    # -- actions (each runs on the worker thread; returns a Future) -------------------------------
    def generate(self) -> Future:
        """Generate with the current settings, without blocking; the Future gives the CreateResult."""
        try:  # checked as every create is, before anything is sent: the mistake shows inline
            options = self._options()
            check_create(self.controls.prompt, options)
        except ValueError as exc:
            return self._failed(exc)
        return self._call(self._generate, self.controls.prompt, options)

    def enhance(self) -> Future:
        """Text-to-prompt on the current prompt; shows both versions side by side to choose from (the
        prompt stays as it is until one is chosen)."""
        if not self.controls.prompt.strip():
            return self._failed(ValueError("write a prompt first: enhance makes a richer one from it"))
        style = self.controls.style if self.controls.source == "style" else None
        return self._call(self._enhance, self.controls.prompt, style)

    def on_generate(self, callback: Callable[[Any], Any], remove: bool = False) -> None:
        """Call ``callback(result)`` with each CreateResult."""
        self._callbacks["generate"].register_callback(callback, remove=remove)

    def on_error(self, callback: Callable[[BaseException], Any], remove: bool = False) -> None:
        """Call ``callback(exception)`` when a call fails (the message also shows inline)."""
        self._callbacks["error"].register_callback(callback, remove=remove)

    def use_prompt(self, which: str) -> str:
        """Take the ``"enhanced"`` or the ``"initial"`` prompt the last ``enhance()`` offered."""
        if not self._enhanced:
            raise ValueError("nothing to choose from: run enhance() first")
        self.controls.prompt = self._enhanced[{"initial": 0, "enhanced": 1}[which]]
        self.controls.suggestion = []
        return self.controls.prompt

    def _browser_asked(self, widget: Any, content: dict, buffers: Any) -> None:
        """The page's buttons."""
        event = content.get("event")
        if event == "generate":
            self.generate()
        elif event == "enhance":
            self.enhance()
        elif event == "use" and content.get("which") in ("initial", "enhanced") and self._enhanced:
            self.use_prompt(content["which"])

    def _call(self, work: Callable[..., Any], *args: Any) -> Future:
        self.controls.busy, self.controls.message, self.controls.error = True, "", False  # a second click waits
        return self._pool.submit(self._guarded, work, *args)

    def _guarded(self, work: Callable[..., Any], *args: Any) -> Any:
        try:
            return work(*args)
        except Exception as exc:  # shown inline; the Future resolves to None
            self._show_error(exc)
            return None
        finally:  # every outcome: the balance the service has now, and nothing left spinning, in one message
            balance = self._balance_line()
            with self.controls.hold_sync():  # the bar never hides before the balance it paid for shows
                self.controls.balance, self.controls.working, self.controls.busy = balance, False, False

    def _failed(self, exc: Exception) -> Future:
        self._show_error(exc)
        done: Future = Future()
        done.set_result(None)
        return done

    def _show_error(self, exc: Exception) -> None:
        self.controls.message, self.controls.error = plain_error(exc), True
        self._callbacks["error"](exc)

    # -- work ------------------------------------------------------------------------------------
    def _load_styles(self) -> None:
        styles = self.client.styles()
        with self.controls.hold_trait_notifications():  # the style is checked against the new list
            self.controls.styles = [[f"{s.main_text or s.main} · {s.credit_cost} credits", s.style_id] for s in styles]
            self.controls.style = styles[0].style_id if styles else None

    def _generate(self, prompt: str, options: dict) -> Any:
        count = options["count"]
        self.controls.total, self.controls.done, self.controls.working = count, 0, True
        result = self.client.create(prompt, is_async=True, **options)
        failed = 0
        for image in result.images:
            try:
                image.wait()
            except GenerationFailedError:
                failed += 1
            self.controls.done += 1
        self.gallery.show([image for image in result.images if image.status == "COMPLETED"])
        if failed:
            self.controls.message, self.controls.error = (
                f"{failed} of {count} images failed to generate (their credits were refunded).", False)
        self.result = result
        self._callbacks["generate"](result)
        return result

    def _enhance(self, text: str, style: Any) -> Any:
        answer = self.client.text_to_prompt(text, style=style)
        initial, enhanced = answer.initial_prompt or text, answer.enhanced_prompt or text
        self._enhanced = (initial, enhanced)
        self.controls.suggestion = [initial, enhanced]
        return answer

    # -- view helpers ----------------------------------------------------------------------------
    def _options(self) -> dict:
        controls = self.controls
        options: dict[str, Any] = {"count": controls.count, "ratio": controls.ratio}
        if controls.source == "style":
            options["style"] = controls.style
        elif controls.source == "collection":
            options["collection"] = controls.collection
        elif self.reference is not None:
            options["image"] = self.reference
        elif controls.reference:
            options["image"] = controls.reference
        else:
            raise ValueError("choose a reference image first (or set studio.reference)")
        if self._enhanced and controls.prompt in self._enhanced:
            options["initial_prompt"], options["enhanced_prompt"] = self._enhanced
        return options

    def _balance_line(self) -> str:
        # Asked of the service after every call: a refund or another session may have moved it.
        try:
            return f"{self.client.usage().current_credit} credits left"
        except Exception as exc:  # noqa: BLE001 - the call's own outcome matters more than this
            return f"balance unknown ({plain_error(exc)})"
