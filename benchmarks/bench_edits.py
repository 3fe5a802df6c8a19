"""The edit engines at 1024x1024, each beside the bare library call it wraps, in one run.

For every edit: the median time of ours over ``--repeat`` runs (1 for the slow ones), the median
of the bare call, and ours/bare. The bare calls are what a naive implementation would do:

- enhance 2x / 8x   vs ``cv2.resize`` LANCZOS4 of the same factor
- upsize            vs ``cv2.resize`` LANCZOS4 2x (ours is that call plus checks)
- outpaint          vs ``cv2.copyMakeBorder`` + full-resolution TELEA over the border
- fill              vs ``cv2.seamlessClone`` NORMAL_CLONE of the content into the mask
- cleanUp           vs one full-resolution ``cv2.inpaint`` TELEA over the same grown mask
- removeBg          vs ``cv2.grabCut`` at full resolution, 1 iteration from a rectangle
- vectorize         vs ``vtracer.convert_raw_image_to_svg`` with its defaults (run once: slow)
- reimagine         vs one ``cv2.remap`` with a random smooth field (its warp step)
- encode png        vs Pillow's default PNG save

Then the peak resident memory of an 8x enhance of 1024x1024, measured in a fresh subprocess beside
a bare ``cv2.resize`` 8x and a baseline that only imports and loads the test image.

Run: ``.venv/bin/python benchmarks/bench_edits.py [--repeat 5]`` (about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import cv2
import numpy as np
import vtracer
from PIL import Image

from imagekit.sandbox.engines.base import never_cancelled as never
from imagekit.sandbox.engines.edits import (
    clean_up,
    cleanup_radius,
    encode_image,
    enhance,
    fill,
    outpaint,
    reimagine,
    remove_background,
    upsize,
    vectorize,
)

SIDE = 1024


def photo(side: int = SIDE, seed: int = 0) -> np.ndarray:
    """A photo-like scene: sky gradient, sun, textured hills, a house, sensor noise and slight blur."""
    rng = np.random.default_rng(seed)
    y = np.linspace(0, 1, side, dtype=np.float32)[:, None]
    image = np.stack([np.broadcast_to(a + b * y, (side, side)) for a, b in ((90, 110), (150, 70), (230, 10))], -1)
    image = np.ascontiguousarray(image)
    xs = np.arange(side) / side
    horizon = (0.55 + 0.05 * np.sin(xs * 6 + 1) + 0.03 * np.sin(xs * 17)) * side
    ground = np.arange(side)[:, None] > horizon[None, :]
    grain = cv2.GaussianBlur(rng.normal(0, 1, (side, side)).astype(np.float32), (0, 0), 1.2) * 40
    grass = np.dstack([60 + grain * 0.5, 120 + grain, 50 + grain * 0.4]) + y[..., None] * 20
    image[ground] = grass[ground]
    s = side / 1024
    cv2.circle(image, (int(770 * s), int(200 * s)), int(70 * s), (255, 230, 150), -1, cv2.LINE_AA)
    cv2.rectangle(image, (int(200 * s), int(460 * s)), (int(410 * s), int(720 * s)), (180, 70, 60), -1)
    roof = np.array([[185, 460], [305, 340], [425, 460]], np.float32) * s
    cv2.fillPoly(image, [roof.astype(np.int32)], (90, 60, 50), cv2.LINE_AA)
    cv2.rectangle(image, (int(275 * s), int(590 * s)), (int(330 * s), int(720 * s)), (70, 40, 30), -1)
    image = cv2.GaussianBlur(image, (0, 0), 0.8) + rng.normal(0, 3, image.shape)
    return np.clip(image, 0, 255).astype(np.uint8)


def house_mask(side: int = SIDE) -> np.ndarray:
    mask = np.zeros((side, side), bool)
    mask[int(330 * side / 1024) : int(730 * side / 1024), int(175 * side / 1024) : int(435 * side / 1024)] = True
    return mask


def median_seconds(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def bare_outpaint(small: np.ndarray) -> np.ndarray:
    pad = (SIDE - small.shape[0]) // 2
    canvas = cv2.copyMakeBorder(small, pad, pad, pad, pad, cv2.BORDER_CONSTANT)
    hole = np.full((SIDE, SIDE), 255, np.uint8)
    hole[pad:-pad, pad:-pad] = 0
    return cv2.inpaint(canvas, hole, 3, cv2.INPAINT_TELEA)


def bare_grabcut(image: np.ndarray) -> np.ndarray:
    mask = np.zeros(image.shape[:2], np.uint8)
    models = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.grabCut(image, mask, (32, 32, SIDE - 64, SIDE - 64), *models, 1, cv2.GC_INIT_WITH_RECT)
    return mask


def bare_remap(image: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(0)
    shift = cv2.resize(rng.uniform(-20, 20, (5, 5, 2)).astype(np.float32), (SIDE, SIDE), interpolation=cv2.INTER_CUBIC)
    gx, gy = np.meshgrid(np.arange(SIDE, dtype=np.float32), np.arange(SIDE, dtype=np.float32))
    return cv2.remap(image, gx + shift[..., 0], gy + shift[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def pillow_png(image: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG")
    return buffer.getvalue()


def timings(repeat: int) -> list[tuple[str, float, str, float]]:
    image = photo()
    small = cv2.resize(image, (SIDE // 2, SIDE // 2), interpolation=cv2.INTER_AREA)
    mask = house_mask()
    grown = cv2.dilate(mask.view(np.uint8), cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (2 * cleanup_radius(mask.shape) + 1,) * 2))
    content = photo(seed=1)[::-1].copy()  # "generated" content: another scene
    centre = (SIDE * 305 // 1024, SIDE * 530 // 1024)
    lanczos = lambda f: cv2.resize(image, None, fx=f, fy=f, interpolation=cv2.INTER_LANCZOS4)  # noqa: E731
    png = encode_image(image, "png")
    cases = [
        ("enhance 2x", lambda: enhance(image, 2, never), "cv2.resize lanczos 2x", lambda: lanczos(2), repeat),
        ("enhance 8x", lambda: enhance(image, 8, never), "cv2.resize lanczos 8x", lambda: lanczos(8), 1),
        ("upsize 2x", lambda: upsize(image, never), "cv2.resize lanczos 2x", lambda: lanczos(2), repeat),
        ("outpaint 512->1024", lambda: outpaint(small, (SIDE, SIDE), (SIDE // 2,) * 2, (SIDE // 4,) * 2, 0, never),
         "copyMakeBorder+TELEA", lambda: bare_outpaint(small), repeat),
        ("fill", lambda: fill(image, mask, content, never),
         "cv2.seamlessClone", lambda: cv2.seamlessClone(content, image, mask.view(np.uint8) * 255, centre,
                                                        cv2.NORMAL_CLONE), repeat),
        ("cleanUp", lambda: clean_up(image, mask, never),
         "cv2.inpaint TELEA full", lambda: cv2.inpaint(image, grown, 3, cv2.INPAINT_TELEA), repeat),
        ("removeBg", lambda: remove_background(image, never), "grabCut full, 1 iter", lambda: bare_grabcut(image), 1),
        ("vectorize", lambda: vectorize(image, never),
         "vtracer defaults", lambda: vtracer.convert_raw_image_to_svg(png, img_format="png"), 1),
        ("reimagine strong", lambda: reimagine(image, "strong", 0, never), "cv2.remap warp", lambda: bare_remap(image),
         repeat),
        ("encode png", lambda: encode_image(image, "png"), "Pillow PNG default", lambda: pillow_png(image), repeat),
    ]
    rows = []
    for name, ours, bare_name, bare, runs in cases:
        ours()  # warm up caches and lazy initialisation on both sides
        rows.append((name, median_seconds(ours, runs), bare_name, median_seconds(bare, runs)))
        print(f"  {name:<20} {rows[-1][1]:8.3f} s   {bare_name:<22} {rows[-1][3]:8.3f} s   "
              f"ratio {rows[-1][1] / rows[-1][3]:6.2f}", flush=True)
    return rows


_MEMORY_SNIPPETS = {
    "import + load only": "",
    "cv2.resize lanczos 8x": "out = cv2.resize(image, None, fx=8, fy=8, interpolation=cv2.INTER_LANCZOS4)",
    "enhance 8x (ours)": "out = enhance(image, 8, never)",
}


def peak_rss_mb(snippet: str, image_path: str) -> float:
    """Peak resident memory (MB) of a fresh interpreter that loads the test image and runs ``snippet``.

    Linux carries ``ru_maxrss`` over from the parent through fork and exec, so a child would report
    at least this process's own peak; the child's ``VmHWM`` (peak RSS of its own address space) is
    read instead where /proc exists. The image comes from a PNG so that building it leaves no peak.
    """
    code = (
        "import resource, sys\n"
        "import cv2, numpy as np\n"
        "from imagekit.sandbox.engines.base import never_cancelled as never\n"
        "from imagekit.sandbox.engines.edits import enhance\n"
        "image = np.ascontiguousarray(cv2.imread(sys.argv[1])[..., ::-1])\n"
        f"{snippet}\n"
        "try:\n"
        "    print(int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]))\n"
        "except OSError:\n"
        "    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    result = subprocess.run([sys.executable, "-c", code, image_path], capture_output=True, text=True, check=True)
    return int(result.stdout.strip().splitlines()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per fast case (median taken)")
    args = parser.parse_args()
    print(f"edit engines at {SIDE}x{SIDE}; python {platform.python_version()}, OpenCV {cv2.__version__}, "
          f"{os.cpu_count()} CPUs, cv2 threads {cv2.getNumThreads()}")
    print("median seconds, ours beside the bare call:")
    timings(args.repeat)
    print("peak resident memory (VmHWM), each in a fresh subprocess:")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "photo.png")
        cv2.imwrite(path, photo()[..., ::-1])
        peaks = {name: peak_rss_mb(snippet, path) for name, snippet in _MEMORY_SNIPPETS.items()}
    base = peaks["import + load only"]
    for name, peak in peaks.items():
        print(f"  {name:<24} {peak:7.0f} MB   (+{peak - base:.0f} MB over the baseline)")
    print(f"  the 8192x8192x3 result alone is {8192 * 8192 * 3 / 2**20:.0f} MB")


if __name__ == "__main__":
    main()
