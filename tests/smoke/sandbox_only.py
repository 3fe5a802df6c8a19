"""Smoke check of ``pip install 'imagekit[sandbox]'`` alone: the embedded sandbox creates and vectorizes."""

from __future__ import annotations

import imagekit


def main() -> None:
    with imagekit.connect() as ik:
        style = ik.styles()[0]
        image = ik.create("a red kite over the sea", style=style.style_id, count=1).images[0]
        svg = image.vectorize()
        assert svg.read("svg").lstrip().startswith(b"<"), "vectorize gave no SVG"
        print(f"sandbox install: connect, create #{image.id}, vectorize #{svg.id}: ok")


if __name__ == "__main__":
    main()
