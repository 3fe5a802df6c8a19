"""The eight edits at 1024x1024 beside the bare library call each one wraps, and the peak memory of
an 8x enhance beside a bare 8x resize, measured side by side in one run.

Read the ratio as "what our edit costs over the one library call at its heart"; every edit adds
work on purpose (detail enhancement, seam-free filling, refined alpha, pre-quantising).

Run: ``.venv/bin/python benchmarks/bench_edits.py [--repeat 5]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import vtracer

from imagekit.sandbox.engines import edits
from imagekit.sandbox.engines.base import GenerationRequest, never_cancelled
from imagekit.sandbox.engines.generate import ProceduralEngine

ROOT = Path(__file__).resolve().parents[1]
SIZE = 1024


def photo_like() -> np.ndarray:
    """A 1024x1024 procedural 'photo' (gradients, shapes, grain): what the sandbox's edits receive."""
    return ProceduralEngine().generate(GenerationRequest("a red apple on a wooden table", SIZE, SIZE, 3, style="photo"))


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def cases(image: np.ndarray) -> list[tuple[str, object, str, object]]:
    """(edit, our call, bare call's name, bare call)."""
    mask = np.zeros(image.shape[:2], bool)
    mask[384:640, 384:640] = True
    mask_u8 = mask.astype(np.uint8) * 255
    bgr = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    content = np.full_like(image, 128)
    check = never_cancelled

    def grabcut_full() -> None:
        gc = np.zeros(image.shape[:2], np.uint8)
        cv2.grabCut(bgr, gc, (32, 32, SIZE - 64, SIZE - 64), np.zeros((1, 65)), np.zeros((1, 65)), 1,
                    cv2.GC_INIT_WITH_RECT)

    return [
        ("enhance 2x", lambda: edits.enhance(image, 2, check), "cv2.resize LANCZOS4 2x",
         lambda: cv2.resize(image, (2 * SIZE, 2 * SIZE), interpolation=cv2.INTER_LANCZOS4)),
        ("upsize", lambda: edits.upsize(image, check), "cv2.resize LANCZOS4 2x",
         lambda: cv2.resize(image, (2 * SIZE, 2 * SIZE), interpolation=cv2.INTER_LANCZOS4)),
        ("outpaint 1280x1280", lambda: edits.outpaint(image, (1280, 1280), (SIZE, SIZE), (128, 128), 1, check),
         "copyMakeBorder + TELEA", lambda: cv2.inpaint(cv2.copyMakeBorder(bgr, 128, 128, 128, 128, cv2.BORDER_CONSTANT),
                                                       cv2.copyMakeBorder(np.zeros((SIZE, SIZE), np.uint8), 128, 128, 128,
                                                                          128, cv2.BORDER_CONSTANT, value=255),
                                                       3, cv2.INPAINT_TELEA)),
        ("retry strong", lambda: edits.reimagine(image, "strong", 1, check), "cv2.remap",
         lambda: cv2.remap(image, *np.meshgrid(np.arange(SIZE, dtype=np.float32), np.arange(SIZE, dtype=np.float32)),
                           cv2.INTER_LINEAR)),
        ("fill", lambda: edits.fill(image, mask, content, check), "cv2.seamlessClone",
         lambda: cv2.seamlessClone(content, image, mask_u8, (SIZE // 2, SIZE // 2), cv2.NORMAL_CLONE)),
        ("cleanUp", lambda: edits.clean_up(image, mask, check), "cv2.inpaint TELEA full res",
         lambda: cv2.inpaint(bgr, mask_u8, 3, cv2.INPAINT_TELEA)),
        ("removeBg", lambda: edits.remove_background(image, check), "cv2.grabCut full res, 1 iter", grabcut_full),
        ("vectorize", lambda: edits.vectorize(image, check), "vtracer defaults",
         lambda: vtracer.convert_raw_image_to_svg(cv2.imencode(".png", bgr)[1].tobytes(), img_format="png")),
    ]


PEAK = """
import resource, sys, numpy as np, cv2
image = np.random.default_rng(0).integers(0, 256, (1024, 1024, 3), dtype=np.uint8)
if sys.argv[1] == "ours":
    from imagekit.sandbox.engines.edits import enhance
    enhance(image, 8, lambda: None)
else:
    cv2.resize(image, (8192, 8192), interpolation=cv2.INTER_LANCZOS4)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_mb(which: str) -> float:
    out = subprocess.run([sys.executable, "-c", PEAK, which], cwd=ROOT, capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    image = photo_like()
    print(f"edits at {SIZE}x{SIZE}, median of {args.repeat} (bare calls that take seconds: 1 run)")
    print(f"  {'edit':20} {'ours':>8}   {'bare call':32} {'bare':>8}   ratio")
    for name, ours, bare_name, bare in cases(image):
        ours_s = median_seconds(ours, args.repeat)
        bare_s = median_seconds(bare, 1 if name in ("removeBg", "vectorize") else args.repeat)
        print(f"  {name:20} {ours_s:7.3f}s   {bare_name:32} {bare_s:7.3f}s   {ours_s / bare_s:5.2f}x")
    ours_peak, bare_peak = peak_mb("ours"), peak_mb("bare")
    print(f"peak memory, 8x of 1024x1024: enhance {ours_peak:.0f} MB, bare cv2.resize {bare_peak:.0f} MB "
          f"(ratio {ours_peak / bare_peak:.2f})")


if __name__ == "__main__":
    main()
