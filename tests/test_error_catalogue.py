"""One catalogue: the sandbox's error table, the documentation's error table and the client's error classes
name the same errors with the same statuses."""

from __future__ import annotations

import re
from pathlib import Path

from imagekit.errors import ERRORS_BY_NAME
from imagekit.sandbox.interface.errors import ERRORS

CATALOGUE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "errors.md"
ROW = re.compile(r"^\| (\d{3}) \| ((?:`[a-z_]+`(?: / )?)+) \|", re.MULTILINE)


def readme_catalogue() -> dict[str, int]:
    """Every ``| status | `name` / `name` | when |`` row of the documentation's error catalogue."""
    section = CATALOGUE.read_text(encoding="utf-8")
    return {name: int(status) for status, names in ROW.findall(section) for name in re.findall(r"`([a-z_]+)`", names)}


def test_the_documentation_lists_every_error_the_sandbox_answers():
    assert readme_catalogue() == ERRORS


def test_the_client_has_a_class_for_every_error_with_its_status():
    assert {name: cls.status for name, cls in ERRORS_BY_NAME.items()} == ERRORS
