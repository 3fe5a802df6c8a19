"""Pick the caption language from an HTTP Accept-Language header (RFC 9110 q-values)."""

from __future__ import annotations

import re

SUPPORTED_LANGUAGES = ("en", "ko")
DEFAULT_LANGUAGE = "en"


def normalise_language(tag: str) -> str | None:
    """The supported primary language of a tag ("ko-KR" → "ko", "EN_us" → "en"), else None."""
    primary = re.split(r"[-_]", tag.strip(), maxsplit=1)[0].lower()
    return primary if primary in SUPPORTED_LANGUAGES else None


def _quality(params: list[str]) -> float:
    """The entry's q-value; 1 when absent, 0 (not acceptable) when malformed."""
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                return min(max(float(value.strip()), 0.0), 1.0)
            except ValueError:
                return 0.0
    return 1.0


def parse_accept_language(header: str | None) -> str:
    """The supported language the client prefers most; "en" when none is acceptable.

    Equal q-values keep the header's order; q=0 marks a language as unacceptable; "*" and
    unsupported languages are skipped, since only the supported ones can be served.
    """
    best, best_q = DEFAULT_LANGUAGE, 0.0
    for entry in (header or "").split(","):
        tag, *params = entry.split(";")
        lang, q = normalise_language(tag), _quality(params)
        if lang is not None and q > best_q:
            best, best_q = lang, q
    return best
