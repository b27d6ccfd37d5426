"""FAULT INJECTION: loaders that misbehave on purpose, registered for suffixes no real format
uses, to test that a reading process holds whatever a reader does (issue 51). Each stands for a
real failure a hostile file causes in a parser: a Python loop that never checks its budget
(a style based on itself), a loop inside C that never returns to Python (a regular expression's
catastrophic backtracking, here the real thing), an allocation past any memory (a repeat count of a
billion), a crash in a C library (here a real SIGSEGV), a reader that waits forever.

Importing this module registers them (in the test process, and in the reading process, which
imports it because the loaders say they live here); ``uninstall`` takes them out again."""
from __future__ import annotations

import ctypes
import re
import time

from ragsift.ingest.loaders.base import LOADERS, LoadLimits, LoadResult, skipped


def spin_in_python(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    n = 0
    while True:  # never ticks its budget
        n += 1


def spin_in_c(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    # catastrophic backtracking: 2**40 steps inside the regular expression engine (C, no signal checks)
    re.match(r"(a+)+$", "a" * 40 + "!")
    return skipped(source, "finished (it should not have)")


def hog_memory(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    grow = []
    for _ in range(1000):
        grow.append(bytearray(256 * 1024 * 1024))  # 256 MB at a time, touched
    return skipped(source, "finished (it should not have)")


def crash(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    ctypes.string_at(0)  # a NULL read: SIGSEGV, as a C library meeting a damaged file
    return skipped(source, "finished (it should not have)")


def wait_forever(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    time.sleep(10_000)
    return skipped(source, "finished (it should not have)")


FAULTS = {".spin": spin_in_python, ".cspin": spin_in_c, ".hog": hog_memory, ".crash": crash, ".wait": wait_forever}


def install() -> None:
    for suffix, fn in FAULTS.items():
        LOADERS.add(suffix, fn)


def uninstall() -> None:
    for suffix in FAULTS:
        LOADERS.remove(suffix)


install()
