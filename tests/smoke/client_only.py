"""Smoke check of ``pip install imagekit`` alone: every kind of client call against a served sandbox.

Usage: ``python tests/smoke/client_only.py BASE_URL API_KEY`` from a venv holding only the core.
"""

from __future__ import annotations

import importlib.util
import sys

import imagekit


def main(base_url: str, api_key: str) -> None:
    for extra in ("numpy", "fastapi", "pandas"):
        assert importlib.util.find_spec(extra) is None, f"the core install pulled in {extra}"
    with imagekit.Client(base_url, api_key) as ik:
        assert ik.me().email, "me() answered without an e-mail"
        balance = ik.usage().current_credit
        style = ik.styles()[0]
        image = ik.create("a lighthouse at dusk", style=style.style_id, count=1).images[0]
        assert image.pil().size[0] >= 100
        bigger = image.upsize()
        prompt = ik.text_to_prompt("a red kite", style=style.style_id)
        assert prompt.enhanced_prompt
        assert ik.usage().current_credit < balance, "nothing was charged"
        print(f"core install: me, usage, styles, create #{image.id}, upsize #{bigger.id}, "
              f"textToPrompt: ok")


def check_install_hint() -> None:
    """``connect()`` with no service configured names the extra to install."""
    try:
        imagekit.connect()
    except imagekit.ConfigError as exc:
        assert "imagekit[sandbox]" in str(exc), exc
    else:
        raise AssertionError("connect() started a sandbox without the [sandbox] extra")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
    check_install_hint()
