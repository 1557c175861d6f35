"""Which of a job's two implementations runs: its numba kernel, or its plain numpy/Python twin.

numba costs a lone command about half a second and 65 MB to import, and each kernel tens to hundreds of
milliseconds to load from the cache, before it runs (an `eval` of a small file is otherwise done in a quarter of a
second). So a small input takes the twin, written for the same result to the bit (tests/test_twins.py checks each
pair on every input class), and a large one the kernel, as does any input once the kernel's module is loaded anyway
(the resident worker preloads them all), and a job that training repeats once numba runs any kernel in the process.
SVMSTRUCT_PATH=kernel|twin forces one (the tests; make bench-startup shows where the switch pays)."""
from __future__ import annotations

import os
import sys

FORCED = ("kernel", "twin")


# in sys.modules once numba has run a kernel: its CPU target is loaded (the second of numba's start-up, 55 MB), and
# loading another kernel from the cache costs milliseconds
NUMBA_RUNNING = "numba.np.arraymath"


def compiled(size: int, threshold: int, module: str, repeated: bool = False) -> bool:
    """Whether a job of SIZE (its rows, lines or bytes, as THRESHOLD counts them) runs its numba kernel, of MODULE:
    when SIZE is at least THRESHOLD, where the kernel's speed pays for its start, or MODULE is loaded already, or (a
    job the caller repeats: the training loop's products) numba runs kernels already in this process."""
    forced = os.environ.get("SVMSTRUCT_PATH", "")
    if forced in FORCED:
        return forced == "kernel"
    return size >= threshold or module in sys.modules or (repeated and NUMBA_RUNNING in sys.modules)
