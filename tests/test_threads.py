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


def test_importing_the_package_changes_no_environment_and_no_thread_pool():
    """`import svmstruct` (and its API's first use) leaves os.environ and BLAS's threads as they were; a command's
    process sets BLAS to one thread unless the user chose."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "KMP_", "OPENBLAS_", "MKL_"))}
    program = ("import os, numpy, threadpoolctl; before = dict(os.environ); "
               "pools = [p['num_threads'] for p in threadpoolctl.threadpool_info()]; "
               "import svmstruct; svmstruct.read_svmlight; "
               "assert dict(os.environ) == before, set(os.environ.items()) ^ set(before.items()); "
               "assert [p['num_threads'] for p in threadpoolctl.threadpool_info()] == pools; print('ok')")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env)
    assert run.stdout.strip() == "ok", run.stderr
    program = ("import os, sys; from svmstruct import __main__ as m; m._as_a_command(); "
               "print(os.environ['OPENBLAS_NUM_THREADS'], os.environ['MKL_NUM_THREADS'])")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env)
    assert run.stdout.split() == ["1", "1"], run.stderr
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         env={**env, "OPENBLAS_NUM_THREADS": "2"})
    assert run.stdout.split() == ["2", "1"], run.stderr


def test_numba_threads_start_sleeping_and_the_environment_is_restored():
    """OpenMP reads its wait policy once, when numba's threads start (threads.launch): PASSIVE then, unless the
    user set it; os.environ afterwards as before. OMP_DISPLAY_ENV has libgomp print what it read."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "KMP_BLOCKTIME")}
    program = ("import os, numpy as np; from svmstruct.compute import threads, matvec; before = dict(os.environ); "
               "threads.set_count(2); X = np.ones((5000, 3), np.float32); out = np.empty(5000)\n"
               "with threads.for_work(1.0): matvec._dense_matvec(X, np.ones(3), out)\n"
               "assert dict(os.environ) == before; print('ok')")
    for user, read in ((None, "PASSIVE"), ("ACTIVE", "ACTIVE")):
        run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                             env={**env, "OMP_DISPLAY_ENV": "TRUE", **({"OMP_WAIT_POLICY": user} if user else {})})
        assert run.stdout.strip() == "ok", run.stderr
        assert f"OMP_WAIT_POLICY = '{read}'" in run.stderr, run.stderr
