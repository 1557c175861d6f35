"""Which of a job's two implementations runs: its numba kernel, or its plain numpy/Python twin.

numba costs a lone command about half a second and 65 MB to import before its first kernel runs (an `eval` of a
small file is otherwise done in a quarter of a second), so a small input takes the twin, written for the same
result to the bit (tests/test_twins.py checks each pair on every input class), and a large one, or any input once
numba is loaded anyway (the resident worker, a training run), the kernel. SVMSTRUCT_PATH=kernel|twin forces one
(the tests, the benchmarks that show where the switch pays: make bench-startup)."""
from __future__ import annotations

import os
import sys

FORCED = ("kernel", "twin")


def compiled(size: int, threshold: int) -> bool:
    """Whether a job of SIZE (its rows, lines or bytes, as THRESHOLD counts them) runs its numba kernel: when numba
    is loaded already, or SIZE is at least THRESHOLD, where the kernel's speed pays for numba's start."""
    forced = os.environ.get("SVMSTRUCT_PATH", "")
    if forced in FORCED:
        return forced == "kernel"
    return "numba" in sys.modules or size >= threshold
