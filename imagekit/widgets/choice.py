"""Choice: a labelled group of buttons with one chosen, named for screen readers by its label."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anywidget
from traitlets import Bool, Int, List, TraitError, Unicode, validate

from ._assets import asset_module, asset_text

__all__ = ["Choice"]


class Choice(anywidget.AnyWidget):
    """Pick one of ``options`` ((label, value) pairs or plain values); ``value`` is the chosen value."""

    _esm = asset_module("choice.js")
    _css = asset_text("choice.css")

    description = Unicode("", help="the group's visible label, which also names it").tag(sync=True)
    labels = List(Unicode(), help="the buttons' labels, in order").tag(sync=True)
    index = Int(0, help="the chosen button's position").tag(sync=True)
    disabled = Bool(False, help="whether the buttons take clicks").tag(sync=True)

    def __init__(self, options: Sequence[Any], value: Any = None, **traits: Any) -> None:
        pairs = [option if isinstance(option, tuple) else (str(option), option) for option in options]
        self._values = [v for _, v in pairs]
        index = self._values.index(value) if value is not None else 0
        super().__init__(labels=[label for label, _ in pairs], index=index, **traits)

    def __repr__(self) -> str:
        return f"Choice({self.description!r}, value={self.value!r})"

    @validate("index")
    def _in_range(self, proposal: Any) -> int:
        if not 0 <= proposal["value"] < len(self._values):
            raise TraitError(f"no option at {proposal['value']}; there are {len(self._values)}")
        return proposal["value"]

    @property
    def value(self) -> Any:
        """The chosen option's value."""
        return self._values[self.index]

    @value.setter
    def value(self, value: Any) -> None:
        self.index = self._values.index(value)
