"""What the editing widgets share: an image on the service, edits run on a worker thread, the result
shown beside the original, "Continue on result", and prices shown before a click."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ipywidgets import CallbackDispatcher
from PIL import Image as PILImage
from traitlets import Bool, Int, Unicode

from ._common import PageWidget, binary_trait, load_picture, plain_error
from .snapshot import opaque, scaled, side_by_side, with_picture

log = logging.getLogger("imagekit.widgets")


def credits_text(price: float | None) -> str:
    """A price as the buttons show it ("3 credits"), or "" when unknown."""
    return "" if price is None else f"{price:g} credit{'' if price == 1 else 's'}"


def _fit(picture: PILImage.Image, max_view: int) -> PILImage.Image:
    """``picture`` at most ``max_view`` wide, opaque, as the widget shows it."""
    scale = min(1.0, max_view / picture.width)
    return scaled(opaque(picture), (max(1, round(picture.width * scale)), max(1, round(picture.height * scale))))


class EditingWidget(PageWidget):
    """An image (Image handle, PIL image or path) that the widget's own buttons edit in the background."""

    image_data = binary_trait("the image shown, as PNG, JPEG or WebP bytes")
    width = Int(help="the image's width in pixels").tag(sync=True)
    height = Int(help="the image's height in pixels").tag(sync=True)
    max_view = Int(640, min=64, help="largest displayed width in CSS pixels; larger images are scaled to fit").tag(sync=True)
    result_data = binary_trait("the last edit's result (PNG), shown beside the original")
    status = Unicode("", help="what the widget is doing, or the last error in plain words").tag(sync=True)
    busy = Bool(False, help="an edit is running (the edit buttons wait and a progress bar shows)").tag(sync=True)
    editable = Bool(False, help="the image is on the service, so the edits can run").tag(sync=True)

    def __init__(self, image: Any, **traits: Any) -> None:
        data, picture, handle = load_picture(image)
        # The picture of the static view, from the pixels decoded here, before the page hears of the widget:
        # decoding a large image again when the widget is shown takes seconds of CPU just when the page
        # must load the widget's module (anywidget gives it 2 s, see _assets.asset_module).
        fitted = _fit(picture, traits.get("max_view", type(self).max_view.default_value))
        super().__init__(image_data=data, width=picture.width, height=picture.height,
                         editable=handle is not None, **traits)
        self._kept = (self.image_data, fitted)
        self.source = handle
        """The Image handle being edited (None for a PIL image or a file)."""
        self.result = None
        """The Image the last edit produced."""
        self.history: list[Any] = [handle] if handle is not None else []
        """The Image handles edited so far, the current one last (``continue_on_result`` adds)."""
        self._result_callbacks = CallbackDispatcher()
        self._pool: ThreadPoolExecutor | None = None
        self.on_msg(self._browser_asked)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # The live widget where a widget manager runs; this picture on GitHub, nbviewer and nbconvert's HTML.
        return with_picture(super()._repr_mimebundle_(**kwargs), self.snapshot)

    def snapshot(self) -> PILImage.Image:
        """The widget as a picture: the image as shown (at most ``max_view`` wide), the result beside it.
        Its mime bundle carries it as JPEG for views without widgets; a cell can show it to keep it."""
        shown = self._drawn(self._fitted().copy())
        if not self.result_data:
            return shown
        return side_by_side([shown, PILImage.open(io.BytesIO(self.result_data))], shown.height)

    def _fitted(self) -> PILImage.Image:
        """The image at most ``max_view`` wide, kept for the next picture of the same image (decoding a
        large one is most of the work)."""
        kept: tuple[bytes, PILImage.Image] | None = getattr(self, "_kept", None)
        if kept is not None and kept[0] is self.image_data and kept[1].width == min(self.max_view, self.width):
            return kept[1]
        fitted = _fit(PILImage.open(io.BytesIO(self.image_data)), self.max_view)
        self._kept = (self.image_data, fitted)
        return fitted

    def _drawn(self, picture: PILImage.Image) -> PILImage.Image:
        """The image as the widget shows it, at the picture's size (subclasses draw on it)."""
        return picture

    def _prices(self, *operations: str) -> dict[str, float | None]:
        """The plan's exact price of each edit operation (None when unknown), from one account read."""
        if self.source is None:
            return dict.fromkeys(operations)
        from ..ledger.prices import Prices, edit_key

        try:
            prices = Prices.of_account(self.source.client.me())
        except Exception as exc:  # noqa: BLE001 - the buttons then show no price, and work
            log.debug("no prices: %s", exc)
            return dict.fromkeys(operations)
        return {operation: prices.exact(edit_key(operation)) for operation in operations}

    def _reprice(self) -> None:
        """Show the prices of the widget's edits for the current image (subclasses say which)."""

    def _edit(self, doing: str, run: Callable[[Any], Any]) -> Any:
        """Run ``run(source)`` as the widget's edit: status and busy while it runs, the result shown."""
        if self.source is None:
            raise ValueError("edits need an image on the service: make the widget from an Image handle")
        self.status, self.busy = f"{doing}…", True
        try:
            result = run(self.source)
            data = result.read("png")
        except BaseException as exc:
            with self.hold_sync():  # the reason and the buttons freed reach the page as one message
                if isinstance(exc, Exception):
                    self.status = plain_error(exc)
                self.busy = False
            raise
        self.result = result
        with self.hold_sync():  # so do the result and its end: the bar never hides before the result shows
            self.result_data, self.status, self.busy = data, "", False
        self._result_callbacks(result)
        return result

    def continue_on_result(self) -> Any:
        """Edit the last result next: it becomes the image."""
        if self.result is None:
            raise ValueError("there is no result to continue on: run an edit first")
        result, data = self.result, self.result_data
        picture = PILImage.open(io.BytesIO(data))
        with self.hold_sync():
            self._now_showing(picture.size)
            self.image_data, self.result_data = data, b""
        self.source, self.result = result, None
        self.history.append(result)
        self._reprice()
        return result

    def _now_showing(self, size: tuple[int, int]) -> None:
        """The image becomes one of ``size`` (inside hold_sync): subclasses reset what depends on it."""
        self.width, self.height = size

    def _browser_asked(self, widget: Any, content: dict, buffers: Any) -> None:
        """The widget's buttons; subclasses add theirs and call this for the rest."""
        if content.get("event") == "continue" and self.result is not None:
            self.continue_on_result()

    def run_in_background(self, edit: Callable[..., Any], *args: Any) -> Future:
        """Run ``edit(*args)`` on the widget's worker thread; errors show in ``status``, not raised."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="imagekit-widget-edit")
        self.busy = True  # at once, so a second click cannot queue a second edit

        def quietly() -> Any:
            try:
                return edit(*args)
            except Exception as exc:  # noqa: BLE001 - shown in the widget by _edit
                log.debug("widget edit failed: %s", exc)
                return None
            finally:
                self.busy = False

        return self._pool.submit(quietly)

    def close(self) -> None:
        """Close the widget and stop its worker thread."""
        pool = getattr(self, "_pool", None)  # absent when __init__ failed before making it
        if pool is not None:
            pool.shutdown(wait=False)  # close() may run on the worker itself, from __del__
        super().close()

    def on_result(self, callback: Callable[[Any], Any], remove: bool = False) -> None:
        """Call ``callback(image)`` with each edit's result."""
        self._result_callbacks.register_callback(callback, remove=remove)
