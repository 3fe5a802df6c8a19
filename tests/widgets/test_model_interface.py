"""The widgets' JS keeps to the anywidget model interface, the only one marimo implements.

JupyterLab's Backbone models also take several keys in one ``model.set({...})`` and several events in
one ``model.on("change:a change:b")``; marimo's model drops both silently (a stroke never reached the
kernel there). Read from the files, so a habit that works in JupyterLab cannot come back unseen.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SOURCES = sorted((ROOT / "widgets").glob("*.js"))
INTERFACE = {"get", "set", "save_changes", "on", "off", "send", "widget_manager"}
"""What anywidget documents of the model (``widget_manager`` for ``get_model``)."""
EVENT = re.compile(r"change:\w+|msg:custom")
BACKBONE = re.compile(r"(?<!model)\.(listenTo|listenToOnce|stopListening|trigger|once|get_state|set_state|"
                      r"changedAttributes|previous|hasChanged|attributes|unset)\b")
"""Backbone calls JupyterLab's models answer and marimo's do not, on whatever name holds the model."""


def _synced_traits() -> set[str]:
    from imagekit.widgets import Gallery, MaskPainter, OutpaintFramer
    from imagekit.widgets.review import ReviewWidget
    from imagekit.widgets.studio import StudioControls

    return {name for cls in (MaskPainter, OutpaintFramer, Gallery, StudioControls, ReviewWidget)
            for name in cls.class_traits(sync=True)}


def _first_argument(text: str, start: int) -> str:
    """The source of the call's first argument, from ``start`` (just past the opening parenthesis)."""
    depth, at = 0, start
    while at < len(text):
        char = text[at]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif char == "," and depth == 0:
            break
        at += 1
    return text[start:at].strip()


def problems(name: str, text: str, traits: set[str]) -> list[str]:
    """What in one file steps outside the interface, one line each."""
    found = []
    text = re.sub(r"(^|\s)//.*", r"\1", text)  # comments may name what is not done
    for match in re.finditer(r"(?<![\w./])model\s*(?:\.\s*(\w+)|\[)", text):
        if match.group(1) not in INTERFACE:
            found.append(f"{name}: model.{match.group(1) or '[...]'} is not in the anywidget model interface")
    for match in re.finditer(r"\bmodel\.set\(", text):
        argument = _first_argument(text, match.end())
        if argument.startswith(("{", "...")):
            found.append(f"{name}: model.set({argument[:30]}...) sets several keys in one call")
    for match in re.finditer(r"\bmodel\.(on|off)\(", text):
        argument = _first_argument(text, match.end())
        literal = re.fullmatch(r"([\"'`])(.*)\1", argument, re.S)
        if not literal:
            found.append(f"{name}: model.{match.group(1)}({argument}, ...) names no event where it listens")
        elif not EVENT.fullmatch(re.sub(r"\$\{\s*\w+\s*\}", "x", literal.group(2))):
            found.append(f"{name}: model.{match.group(1)}({argument}, ...) is not one event")
    for match in BACKBONE.finditer(text):
        found.append(f"{name}: .{match.group(1)} is Backbone's, not the anywidget model interface's")
    for match in re.finditer(r"\bmodel\.get\(\s*[\"'](\w+)[\"']", text):
        if match.group(1) not in traits:
            found.append(f"{name}: model.get({match.group(1)!r}) reads no synced trait")
    for match in re.finditer(r"\blisten\(\s*model\s*,\s*\{(.*?)\}\s*\)", text, re.S):
        for key in re.findall(r"^\s*(?:\"([\w ]+)\"|(\w+))\s*:", match.group(1), re.M):
            for trait in (key[0] or key[1]).split():
                if trait not in traits:
                    found.append(f"{name}: listen(model, ...) waits on {trait!r}, no synced trait")
    return found


@pytest.mark.parametrize("source", SOURCES, ids=lambda path: path.name)
def test_widget_js_keeps_to_the_anywidget_model_interface(source):
    assert problems(source.name, source.read_text(), _synced_traits()) == []


@pytest.mark.parametrize(("snippet", "complaint"), [
    ('model.set({ tool, mode: "mask" });', "sets several keys in one call"),
    ("model.set({...values});", "sets several keys in one call"),
    ('model.on("change:a change:b", draw);', "is not one event"),
    ("model.off('change:tool change:shape', draw);", "is not one event"),
    ("model.on(events, draw);", "names no event where it listens"),
    ('model.on("change", draw);', "is not one event"),
    ("model.get_state();", "not in the anywidget model interface"),
    ("model.attributes.tool = 1;", "not in the anywidget model interface"),
    ("model[name] = 1;", "not in the anywidget model interface"),
    ("this.listenTo(model, 'change:tool', draw);", "Backbone's"),
    ('model.get("no_such_trait");', "reads no synced trait"),
    ('listen(model, { "tool nope": draw });', "waits on 'nope'"),
])
def test_each_habit_outside_the_interface_is_named(snippet, complaint):
    (found,) = problems("x.js", snippet, _synced_traits())
    assert complaint in found


def test_the_interface_as_the_widgets_use_it_passes():
    snippet = ('model.set("tool", "brush"); model.save_changes(); model.on("change:tool", draw); '
               "model.on(`change:${name}`, draw); model.off(\"msg:custom\", got); model.send({ event: 1 }); "
               'listen(model, { "tool shape": draw, mask_png: onMask });')
    assert problems("x.js", snippet, _synced_traits()) == []
