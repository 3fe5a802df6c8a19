"""Print the test files that took longest, from a JUnit XML report: python slowest_files.py REPORT [N].

A file's time is the sum of its tests' (setup, call and teardown); under pytest-xdist the files run
side by side, so the sum is more than the wall time. Its CPU is the sum of its tests' ``cpu_seconds``
(conftest.py records them): on two cores, the figure a heavier suite shows first.
"""

from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ET
from collections import Counter


def file_of(case: ET.Element) -> str:
    """The file a test case came from: tests/x/test_y.py, a notebook, or the README."""
    if case.get("file"):
        return case.get("file", "")
    module = case.get("classname", "")
    if module.endswith(".ipynb"):  # notebooks.01_quickstart.ipynb
        return module.replace(".", "/", 1)
    if module.startswith("tests."):
        return module.replace(".", "/") + ".py"
    return module  # README.md


def main(report: str, count: int = 10) -> None:
    seconds: Counter[str] = Counter()
    cpu: Counter[str] = Counter()
    tests: Counter[str] = Counter()
    for case in ET.parse(report).getroot().iter("testcase"):
        seconds[file_of(case)] += float(case.get("time", 0))
        cpu[file_of(case)] += sum(float(prop.get("value", 0)) for prop in case.iter("property")
                                  if prop.get("name") == "cpu_seconds")
        tests[file_of(case)] += 1
    print(f"slowest {count} files of {len(seconds)} ({sum(seconds.values()):.0f} s of tests in all, "
          f"{sum(cpu.values()):.0f} CPU-s):")
    for name, spent in seconds.most_common(count):
        print(f"{spent:8.1f} s {cpu[name]:7.1f} CPU-s {tests[name]:5d} tests  {name}")
    print(f"most CPU: {count} files")
    for name, used in cpu.most_common(count):
        print(f"{seconds[name]:8.1f} s {used:7.1f} CPU-s {tests[name]:5d} tests  {name}")


if __name__ == "__main__":
    try:
        main(sys.argv[1], *(int(arg) for arg in sys.argv[2:3]))
    except BrokenPipeError:  # its reader took what it wanted (``| head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
