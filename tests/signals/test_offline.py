"""The signals need nothing from the network, and a missing extra is one line naming it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
from PIL import Image

from tests.helpers import ROOT
from tests.signals.scenes import jpeg, scene

OFFLINE = textwrap.dedent("""
    import socket, sys

    def refused(*args, **kwargs):
        raise OSError("the network is blocked in this test")

    socket.socket.connect = socket.socket.connect_ex = refused
    socket.create_connection = refused
    import imagekit, numpy as np
    from PIL import Image
    folder = sys.argv[1]
    frame = imagekit.quality([f"{folder}/a.png", f"{folder}/b.jpg", f"{folder}/c.png", Image.open(f"{folder}/a.png")])
    mask = np.zeros((256, 256), np.uint8); mask[64:128, 64:128] = 255
    leak = imagekit.edit_leak(f"{folder}/a.png", f"{folder}/a.png", mask)
    print([x if isinstance(x, str) else None for x in frame["dup_of"]], frame["noise"].notna().all(), leak)
""")


def test_everything_runs_with_the_network_blocked(tmp_path):
    Image.fromarray(scene(1, 256)).save(tmp_path / "a.png")
    (tmp_path / "b.jpg").write_bytes(jpeg(scene(1, 256), 70))
    Image.fromarray(scene(2, 256)).save(tmp_path / "c.png")
    out = subprocess.run([sys.executable, "-c", OFFLINE, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    path = str(tmp_path / "a.png")
    assert out.stdout.strip() == f"[None, {path!r}, None, {path!r}] True 0.0"


MISSING = textwrap.dedent("""
    import sys
    sys.modules["cv2"] = None  # as if opencv were not installed
    import imagekit
    try:
        imagekit.quality(sys.argv[1])
    except imagekit.ConfigError as exc:
        print(exc)
    try:
        imagekit.chain(leak_limit=0.1)
    except imagekit.ConfigError as exc:
        print(exc)
""")


def test_a_missing_extra_is_one_line_naming_it(tmp_path):
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(tmp_path / "a.png")
    out = subprocess.run([sys.executable, "-c", MISSING, str(tmp_path / "a.png")], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.splitlines() == ["this needs cv2, which is not installed: pip install 'imagekit[quality]'"] * 2


def test_what_cannot_be_measured_is_one_line(tmp_path):
    import pytest

    import imagekit

    with pytest.raises(imagekit.ValidationError, match=r"^.*nothing\.png: no such image file$"):
        imagekit.quality(str(tmp_path / "nothing.png"))
    (tmp_path / "notes.txt").write_text("not a picture")
    with pytest.raises(imagekit.ValidationError, match=r"^.*notes\.txt: the image is not a PNG, JPEG or WebP image Pillow can read$"):
        imagekit.quality(str(tmp_path / "notes.txt"))
    with pytest.raises(imagekit.ValidationError, match="^cannot measure a float: give an image handle"):
        imagekit.quality(1.5)
