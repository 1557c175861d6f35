"""The thread policy (svmstruct/threads.py): the default count, make -j, and work-dependent parallelism."""
import os

import numba
import pytest

from svmstruct import threads


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
    threads.set_count(None)
    before = numba.get_num_threads()
    with threads.for_work(threads.PARALLEL_SECONDS / 10):
        assert numba.get_num_threads() == 1
    with threads.for_work(threads.PARALLEL_SECONDS * 10):
        assert numba.get_num_threads() == threads.count()
    threads.set_count(1)
    with threads.for_work(threads.PARALLEL_SECONDS * 10):
        assert numba.get_num_threads() == 1
    threads.set_count(None)
    assert numba.get_num_threads() == before


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
