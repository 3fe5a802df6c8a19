"""The stand-in for ``rfc3987_syntax`` (tests/lazy_iri.py) defers building its parser and checks IRIs
as the real module does once one is asked about."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.helpers import ROOT


def test_jsonschema_loads_without_the_parser_and_builds_it_for_the_first_iri():
    script = textwrap.dedent("""
        import sys
        import tests.lazy_iri
        from jsonschema import Draft202012Validator
        built = lambda: "rfc3987_syntax.syntax_helpers" in sys.modules
        print(built())
        iri = Draft202012Validator({"format": "iri"}, format_checker=Draft202012Validator.FORMAT_CHECKER)
        print(iri.is_valid("https://example.org/ä?x=1#y"), iri.is_valid("no scheme ::"), built())
        import rfc3987_syntax
        print(rfc3987_syntax.is_valid_syntax("iri_reference", "../ä"))
    """)
    printed = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert printed.stdout.split("\n")[:3] == ["False", "True False True", "True"], printed
