"""How many threads the numba kernels use: a policy that never makes a run slower than one thread.

Three parts (measured by scripts/bench_threads.py, `make bench-threads`):
- Waiting threads sleep instead of spinning: OpenMP reads OMP_WAIT_POLICY (and Intel's KMP_BLOCKTIME) once, when
  numba first starts its threads; svmstruct starts them itself (launch) with PASSIVE and 0 in the environment for
  that moment only, unless the user set them. numba's OpenMP threads otherwise spin between parallel regions: on
  cores shared with other jobs (`make -j2`, a CI runner) every region then waits for a descheduled spinner, and
  MQ2008 S1's `pairs` training took 3.3 s instead of 0.04 s beside two CPU hogs.
- BLAS on one thread while a run trains (one_blas_thread): its dense algebra is a working set's Gram matrix of a
  few hundred constraints, where BLAS threads only add overhead and two runs side by side crawl (4x slower on
  2 cores). A command's process starts so (svmstruct.__main__ sets OPENBLAS_NUM_THREADS and MKL_NUM_THREADS to 1
  unless the user set them); in a user's own program threadpoolctl limits BLAS for the run's duration where it is
  installed (scikit-learn brings it), and nothing is changed where it is not.
- A sleeping team costs ~60 µs to wake, so a kernel runs in parallel only when its work on one thread
  would take longer than PARALLEL_SECONDS (for_work: each call site states its work in that kernel's
  measured nanoseconds per unit); below, it runs on the calling thread alone.
- The default number of threads (count) is what the process may use: the cores of its CPU affinity, no
  more than OMP_NUM_THREADS or NUMBA_NUM_THREADS when set, and one inside `make -jN` (MAKEFLAGS holds -j:
  make runs N jobs side by side, each should use one core). `--threads N` overrides it.
Results never depend on the number of threads (tests/test_cli.py checks the bytes of the models).
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import threading
import types

PARALLEL_SECONDS = 1e-3  # one-thread work (s) above which a parallel region pays for its ~60 µs start
# one-thread cost of a product's multiply-add with X, in nanoseconds (scripts/bench_threads.py on this project's
# 2-core machine); each oracle module declares its own cost per document (NS_PER_DOCUMENT, measured alike)
NS_PER_MADD = 0.6

_chosen: int | None = None  # --threads, or set_count from the library


def parallel_seconds() -> float:
    """PARALLEL_SECONDS, or $SVMSTRUCT_PARALLEL_SECONDS when set (0: every kernel runs in parallel, whatever its
    work: how the tests run the parallel kernels on small inputs through any process)."""
    value = os.environ.get("SVMSTRUCT_PARALLEL_SECONDS", "")
    try:
        return max(0.0, float(value)) if value else PARALLEL_SECONDS
    except ValueError:
        return PARALLEL_SECONDS


def _positive(name: str) -> int | None:
    value = os.environ.get(name, "").strip().split(",")[0]
    return int(value) if value.isdigit() and int(value) > 0 else None


def inside_make_jobs(makeflags: str | None = None) -> bool:
    """True inside `make -jN` with N > 1 (or an unbounded -j), which runs jobs side by side."""
    flags = os.environ.get("MAKEFLAGS", "") if makeflags is None else makeflags
    for word in flags.split():
        if word.startswith("--jobserver"):
            return True
        match = re.fullmatch(r"-?[a-zA-Z]*j(\d*)[a-zA-Z]*", word) if not word.startswith("--") else None
        if match and (match.group(1) == "" or int(match.group(1)) > 1):
            return True
    return False


def default_count() -> int:
    """The threads a run uses when nobody chose (see the module docstring)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    for name in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
        limit = _positive(name)
        if limit:
            cores = min(cores, limit)
    if inside_make_jobs():
        return 1
    return max(1, cores)


def set_count(n: int | None) -> None:
    """Choose the number of threads (None: the default again); at most numba's pool size."""
    global _chosen
    _chosen = n


def count() -> int:
    """The number of threads kernels may use: the chosen one, else default_count(), within numba's pool."""
    import numba

    wanted = _chosen if _chosen is not None else default_count()
    return max(1, min(wanted, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]


PASSIVE = {"OMP_WAIT_POLICY": "PASSIVE", "KMP_BLOCKTIME": "0"}  # sleeping waiters, unless the user set otherwise
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")  # what a command's process sets before numpy loads


_launched = False


def launch() -> None:
    """Start numba's threads with PASSIVE in the environment for that moment (OpenMP reads it once, then); the
    environment is restored at once. Nothing when they are started already."""
    global _launched
    if _launched:
        return
    from numba.np.ufunc import parallel

    _launched = True
    if parallel._is_initialized:
        return
    saved = {name: os.environ.get(name) for name in PASSIVE}
    for name, value in PASSIVE.items():
        os.environ.setdefault(name, value)
    try:
        parallel._launch_threads()
    finally:
        for name, before in saved.items():
            if before is None:
                del os.environ[name]
            else:
                os.environ[name] = before


@contextlib.contextmanager
def one_blas_thread():
    """BLAS on one thread for the duration (see the module docstring): nothing to do in a command's process, which
    starts so; threadpoolctl's scoped limit in a program where it is installed; else nothing."""
    if all(os.environ.get(name) == "1" for name in BLAS_VARIABLES):
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(1, user_api="blas"):
        yield


_state = threading.local()  # .one_thread: the ParallelKernels called in this thread run their one-thread twin


class for_work:
    """`with threads.for_work(seconds):` around a ParallelKernel's call: count() threads when the call's
    one-thread work is at least parallel_seconds(), else one — the kernel's one-thread twin, which does not
    start numba's threading layer. Nothing to set while numba is not loaded (import the kernel's module
    first)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.before: int | None = None
        self.one_thread_before = False

    def __enter__(self):
        numba = sys.modules.get("numba")
        if numba is None:
            return self
        n = count() if self.seconds >= parallel_seconds() else 1
        self.one_thread_before = getattr(_state, "one_thread", False)
        _state.one_thread = n == 1
        if n > 1:
            launch()
            self.before = numba.get_num_threads()
            numba.set_num_threads(n)
        return self

    def __exit__(self, *exc) -> None:
        _state.one_thread = self.one_thread_before
        if self.before is not None:
            sys.modules["numba"].set_num_threads(self.before)


class ParallelKernel:
    """`@threads.parallel_kernel`: FUNCTION compiled by numba twice, with parallel=True and, for one thread,
    without it (prange is then range: the same loops in the same order, so the same results to the bit; its
    own cache entry). A call inside `for_work` that chose one thread runs the twin, which neither launches
    numba's threading layer nor loads the parallel code, and leaves the process safe to fork
    (svmstruct.worker.resident); any other call runs the parallel kernel on numba's current number of threads."""

    def __init__(self, function):
        import numba

        self.parallel = numba.njit(cache=True, parallel=True)(function)
        twin = types.FunctionType(function.__code__, function.__globals__, function.__name__ + "_one_thread",
                                  function.__defaults__, function.__closure__)
        twin.__qualname__ = function.__qualname__ + "_one_thread"  # names the cache files
        twin.__module__ = function.__module__
        self.one_thread = numba.njit(cache=True)(twin)
        functools.update_wrapper(self, function)

    def __call__(self, *args):
        if getattr(_state, "one_thread", False):
            return self.one_thread(*args)
        launch()
        return self.parallel(*args)


parallel_kernel = ParallelKernel


def documents(ns_per_document: float, n: int) -> float:
    """The one-thread seconds of an oracle that costs ns_per_document nanoseconds a document, over n documents."""
    return n * ns_per_document * 1e-9


def madds(n: int) -> float:
    """The one-thread seconds of a product with n nonzeros (or dense entries)."""
    return n * NS_PER_MADD * 1e-9
