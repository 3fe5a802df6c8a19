"""Per-image cost of the quality signals at 512 and 1024 px, beside the targets (issue 49): hashing
at most 15 ms and all signals at most 80 ms at 512 px, 1,000 images in under 2 minutes, memory held
to one image at a time (the peak resident memory before and after the 1,000).

Synthetic scenes saved as PNG files (shapes over gradients, ``tests/signals/scenes.py``); each cost
includes reading and decoding the file, as ``imagekit.quality`` does. One process, one thread each
for OpenBLAS and OpenCV: what one of two cores gives.

Run: ``.venv/bin/python benchmarks/bench_quality.py [--images 1000]``
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGETS = {"hash": 15.0, "all": 80.0}
"""Milliseconds per image at 512 px."""
MB = 1024**2


def high_water() -> int:
    """This process's peak resident memory so far (VmHWM), in bytes."""
    return int(re.search(r"VmHWM:\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)) * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=1000)
    args = parser.parse_args()

    import cv2
    from PIL import Image

    from imagekit.signals import pixels, quality
    from imagekit.signals.frame import Item, load, measure
    from tests.signals.scenes import scene

    cv2.setNumThreads(1)
    with tempfile.TemporaryDirectory() as tmp:
        for size in (512, 1024):
            files = []
            for seed in range(40):
                path = Path(tmp) / f"{size}-{seed}.png"
                Image.fromarray(scene(seed, size)).save(path)
                files.append(str(path))

            def read(path: str) -> None:
                pixels.rgb(load(path))

            def hashed(path: str) -> None:
                colour = pixels.rgb(load(path))
                pixels.phash(pixels.grey(colour)), pixels.colours(colour)

            def everything(path: str) -> None:
                measure(Item(None, path, lambda: Path(path).read_bytes()))

            for name, work in (("read", read), ("hash", hashed), ("all", everything)):
                work(files[0])  # warm: imports, OpenCV's first call
                started = time.perf_counter()
                for path in files:
                    work(path)
                cost = (time.perf_counter() - started) / len(files) * 1000
                target = f" (target {TARGETS[name]:g} ms)" if size == 512 and name in TARGETS else ""
                label = {"read": "reading", "hash": "hashing", "all": "all signals"}[name]
                print(f"{size:>4} px, {label:<11}: {cost:6.1f} ms an image{target}"
                      + (" (the file read and decoded, as in the two below)" if name == "read" else ""))
        quality(files[:1])  # pandas loaded: the peak before is the process's with all it needs
        before = high_water()
        listed = [f"{tmp}/512-{n % 40}.png" for n in range(args.images)]  # files: measured again each time
        started = time.perf_counter()
        frame = quality(listed)
        took = time.perf_counter() - started
        print(f"{len(frame):,} images at 512 px: {took:.1f} s (target under 120 s), "
              f"{frame['dup_of'].notna().sum():,} flagged as repeats of the 40 distinct pictures")
        print(f"peak memory: {before / MB:.0f} MB before the {len(frame):,}, {high_water() / MB:.0f} MB after")


if __name__ == "__main__":
    main()
