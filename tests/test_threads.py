"""The thread policy (svmstruct/threads.py): the default count, make -j, and work-dependent parallelism."""
import os

import numba
import pytest

from svmstruct.compute import threads


@pytest.mark.parametrize("flags, inside", [
    ("", False), ("-j1", False), ("-j2", True), ("-j", True), ("-kj4", True), ("k -j2", True),
    ("--jobserver-auth=3,4 -j2", True), ("--jobserver-fds=3,4", True), ("-k", False), ("-n", False),
    ("--no-print-directory", False), ("j2", True), ("-- FOO=-j2", False),
])
def test_make_parallel_jobs_are_recognised_from_makeflags(flags, inside):
    assert threads.inside_make_jobs(flags) is inside


def test_the_default_count_respects_affinity_omp_and_make(monkeypatch):
    monkeypatch.delenv("MAKEFLAGS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    cores = len(os.sched_getaffinity(0))
    assert threads.default_count() == cores
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert threads.default_count() == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setenv("MAKEFLAGS", "-j2 --jobserver-auth=3,4")
    assert threads.default_count() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    monkeypatch.delenv("MAKEFLAGS")
    assert threads.default_count() == 1


def test_small_work_runs_on_one_thread_and_large_work_on_all(monkeypatch):
    monkeypatch.delenv("MAKEFLAGS", raising=False)
    assert numba.config.NUMBA_NUM_THREADS >= 2  # conftest: two threads even on a one-core runner
    threads.set_count(2)
    before = numba.get_num_threads()
    with threads.for_work(threads.PARALLEL_SECONDS / 10):
        assert threads._state.one_thread and numba.get_num_threads() == before
    with threads.for_work(threads.PARALLEL_SECONDS * 10):
        assert not threads._state.one_thread and numba.get_num_threads() == 2
    threads.set_count(1)
    with threads.for_work(threads.PARALLEL_SECONDS * 10):
        assert threads._state.one_thread
    threads.set_count(None)
    assert numba.get_num_threads() == before and not threads._state.one_thread


def test_a_parallel_kernel_runs_its_one_thread_twin_for_small_work(monkeypatch):
    """The twin: the same function without parallel=True, the same results to the bit; chosen by for_work."""
    import numpy as np

    from svmstruct.compute import matvec

    kernel = matvec._dense_matvec
    calls = []
    for name in ("parallel", "one_thread"):
        real = getattr(kernel, name)
        monkeypatch.setattr(kernel, name, lambda *a, real=real, name=name: (calls.append(name), real(*a))[1])
    rng = np.random.default_rng(0)
    X, w = rng.normal(size=(301, 17)).astype(np.float32), rng.normal(size=17)
    outs = [np.empty(301), np.empty(301)]
    monkeypatch.setattr(threads, "_chosen", 2)
    assert threads.count() == 2  # conftest: numba's pool has two threads even on a one-core runner
    with threads.for_work(threads.PARALLEL_SECONDS / 10):
        kernel(X, w, outs[0])
    with threads.for_work(threads.PARALLEL_SECONDS * 10):
        kernel(X, w, outs[1])
    assert calls == ["one_thread", "parallel"] and outs[0].tobytes() == outs[1].tobytes()


def test_the_package_makes_waiting_threads_sleep():
    """Set at import, before numba loads OpenMP (a user's own setting is kept)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "KMP_BLOCKTIME")}
    out = subprocess.run([sys.executable, "-c", "import os, svmstruct; print(os.environ['OMP_WAIT_POLICY'])"],
                         capture_output=True, text=True, env=env).stdout.strip()
    assert out == "PASSIVE"
    out = subprocess.run([sys.executable, "-c", "import os, svmstruct; print(os.environ['OMP_WAIT_POLICY'])"],
                         capture_output=True, text=True, env={**env, "OMP_WAIT_POLICY": "ACTIVE"}).stdout.strip()
    assert out == "ACTIVE"
