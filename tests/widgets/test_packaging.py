"""The widgets' browser assets: loaded lazily, present in the wheel, found from an installed copy."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).parents[2]
ASSETS = sorted(p.name for p in (ROOT / "widgets").iterdir() if p.suffix in (".js", ".css"))


def test_import_imagekit_does_not_load_widget_libraries():
    code = ("import sys, imagekit, imagekit.widgets; "
            "print(sorted(m for m in ('ipywidgets', 'anywidget', 'traitlets') if m in sys.modules))")
    assert subprocess.check_output([sys.executable, "-c", code], text=True).strip() == "[]"


def test_assets_are_es_modules_importing_only_their_siblings():
    assert {"mask_painter.js", "mask_painter.css", "gallery.js", "gallery.css"} <= set(ASSETS)
    for name in ASSETS:
        text = (ROOT / "widgets" / name).read_text()
        assert "http://" not in text and "https://" not in text, name
        if name.endswith(".js"):
            assert "export " in text, name
            for spec in re.findall(r"\bimport\b[^;]*?from\s*[\"']([^\"']+)[\"']", text):
                assert spec.startswith("./") and spec[2:] in ASSETS, (name, spec)
            assert "import(" not in text, name


def test_a_widget_module_binds_at_once_and_carries_its_siblings_inline():
    from imagekit.widgets._assets import asset_module

    loader = asset_module("mask_painter.js")  # nothing to fetch before anywidget binds it (see asset_module)
    assert len(loader.splitlines()) == 3 and " from " not in loader
    assert "import(MODULE)" in loader and "import(LINK)" in loader and "keepHearing(context.model)" in loader
    linked, link = (base64.b64decode(encoded).decode()
                    for encoded in re.findall(r'"data:text/javascript;base64,([^"]+)"', loader))
    assert linked.endswith((ROOT / "widgets" / "mask_painter.js").read_text()[-200:])
    assert link == (ROOT / "widgets" / "kernel_link.js").read_text()
    assert './mask_bits.js' in (ROOT / "widgets" / "mask_painter.js").read_text()
    assert "./" not in "".join(re.findall(r"from\s*\"([^\"]*)\"", linked))
    assert linked.count('from "data:text/javascript;base64,') == 7  # mask_bits, _compare, _controls, _shapes, _view, outpaint_frame, model


def test_wheel_ships_the_assets_and_an_installed_copy_loads_them(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--quiet",
                    "--wheel-dir", str(tmp_path / "dist")], check=True)
    (wheel,) = (tmp_path / "dist").glob("imagekit-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {f"imagekit/widgets/static/{name}" for name in ASSETS} <= set(names), names
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target),
                    str(wheel)], check=True)
    code = """
import imagekit.widgets._assets as assets
from imagekit.widgets import Gallery, MaskPainter
from PIL import Image
painter = MaskPainter(Image.new("RGB", (8, 8)))
print(assets.asset_path("mask_painter.js"))
print(painter._esm == assets.asset_module("mask_painter.js"), "export default" in painter._esm,
      ".ik-painter" in painter._css, "export default" in Gallery()._esm)
"""
    env = {**os.environ, "PYTHONPATH": str(target)}  # ahead of the editable install in site-packages
    out = subprocess.check_output([sys.executable, "-c", code], text=True, env=env, cwd=tmp_path).splitlines()
    assert out[0] == str(target / "imagekit" / "widgets" / "static" / "mask_painter.js")
    assert out[1] == "True True True True"
