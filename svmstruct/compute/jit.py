"""numba's njit and prange, as svmstruct's kernel modules import them, and the byte arrays their kernels take
(kernel_bytes). Importing them from here also has this process say once, on stderr, when it compiles a kernel rather
than loading it from the cache (compute.numba_cache: where the compiled kernels are kept), where the command asked
for it (learn and classify at -v 1 set SVMSTRUCT_SAY_COMPILING). A kernel compiles the first time any command runs
it, once per installation; `python -m svmstruct.worker.warmup` compiles them all at once."""
import os
import sys

import numpy as np
from numba import njit, prange  # noqa: F401 - the kernel modules' decorators
from numba.core import event

NOTICE = ("svmstruct: compiling numba's machine code for the kernels this command runs, once per installation (later "
          "runs load it; python -m svmstruct.worker.warmup compiles them all)\n")


class _SayCompiling(event.Listener):
    """numba's compile events (a cache miss: loading from the cache is not one): the first one is said."""

    said = False

    def on_start(self, ev) -> None:
        if not _SayCompiling.said and os.environ.get("SVMSTRUCT_SAY_COMPILING") == "1":
            _SayCompiling.said = True
            sys.stderr.write(NOTICE)
            sys.stderr.flush()

    def on_end(self, ev) -> None:
        pass


event.register("numba:compile", _SayCompiling())


def kernel_bytes(buf, offset: int = 0) -> np.ndarray:
    """BUF's bytes from OFFSET (bytes, a bytearray, a memoryview: no copy) as the read-only uint8 array the numba
    kernels take: one compiled signature of each kernel whichever object holds the bytes (a writable array is
    another type to numba, compiled again)."""
    array = np.frombuffer(buf, dtype=np.uint8, offset=offset)
    array.flags.writeable = False
    return array
