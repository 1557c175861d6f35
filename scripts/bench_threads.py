"""The thread policy's numbers (svmstruct/compute/threads.py), measured here:

1. the start of a parallel region with the OpenMP team asleep (OMP_WAIT_POLICY=PASSIVE, the policy) and
   spinning (ACTIVE, OpenMP's default): a tiny kernel on 1 and 2 threads;
2. every parallel kernel's one-thread cost per unit (nanoseconds per multiply-add or per document), the
   constants threads.NS_PER_MADD and the oracle modules' NS_PER_DOCUMENT, and its 2-thread speed-up at a size
   where threads pay;
3. `learn -l pairs -c 1 -e 0.0001` on MQ2008 S1 (svm_rank's reference case) as whole processes, training
   time and wall time, on an idle machine and beside two CPU hogs: the policy, OpenMP's spinning default,
   and one thread.
Usage: python scripts/bench_threads.py [--shared ../shared] [--repeat 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import experiment

KERNELS = """
import time, numpy as np, numba
from svmstruct import api
from svmstruct.io import data
from svmstruct.dataset import arrays
from svmstruct.compute import threads
from svmstruct.compute import matvec
from svmstruct.losses import rank_oracles
def per(f, *a):
    f(*a); n = 0; t = time.perf_counter()
    while time.perf_counter() - t < 0.3 or n < 3:
        f(*a); n += 1
    return (time.perf_counter() - t) / n
rng = np.random.default_rng(0)
tiny = np.ones((2, 4)); w4 = np.ones(4); out2 = np.empty(2)
for t in (1, 2):
    numba.set_num_threads(t)
    print(f"region {t} {per(matvec._dense_matvec, tiny, w4, out2) * 1e6:.2f}")
X = rng.random((20000, 46)); w = rng.random(46); out = np.empty(20000)
for t in (1, 2):
    numba.set_num_threads(t)
    print(f"madd {t} {per(matvec._dense_matvec, X, w, out) / X.size * 1e9:.3f}")
def queries(n_q, l, grades):
    y = np.concatenate([rng.integers(0, grades, size=l) for _ in range(n_q)]).astype(float)
    return arrays.from_arrays(rng.random((n_q * l, 5)), y, np.repeat(np.arange(n_q), l))
ds = queries(400, 60, 3)  # 24,000 documents: 1-2 ms an oracle call, where threads pay
s = rng.normal(size=ds.n_docs)
for kind, loss, opts in (("pairs", "pairs", {}), ("map", "map", {}), ("dorm", "ndcg@10", {}),
                         ("perf", "rocarea", {"per_query": True})):
    problem = api.problem(ds, loss, **opts)
    for t in (1, 2):  # the oracle's own threads.for_work gives it count() threads at this size
        threads.set_count(t)
        print(f"{kind} {t} {per(problem.most_violated, s) / ds.n_docs * 1e9:.1f}")
    if kind == "dorm":
        for t in (1, 2):
            threads.set_count(t)
            print(f"dorm-latent {t} {per(problem.latent_target, s) / ds.n_docs * 1e9:.1f}")
y = np.ascontiguousarray(ds.y)
for t in (1, 2):
    numba.set_num_threads(t)
    print(f"labels {t} {per(rank_oracles.query_label_ranks, y, ds.qptr) / ds.n_docs * 1e9:.1f}")
"""


def kernel_table(env_extra: dict) -> dict:
    run = subprocess.run([sys.executable, "-c", KERNELS], capture_output=True, text=True,
                         env={**os.environ, **env_extra})
    if run.returncode:
        sys.exit(run.stderr[-2000:])
    table: dict = {}
    for line in run.stdout.splitlines():
        kind, threads, value = line.split()
        table.setdefault(kind, {})[int(threads)] = float(value)
    return table


def learn_times(train: Path, env_extra: dict, repeat: int) -> tuple[float, float]:
    """Median (training seconds, whole-process wall seconds) of `learn -l pairs -c 1 -e 0.0001`."""
    runtimes, walls = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "svmstruct", "learn", "-l", "pairs", "-c", "1", "-e", "0.0001",
                              str(train), os.devnull], capture_output=True, text=True, env={**os.environ, **env_extra})
        walls.append(time.perf_counter() - start)
        if run.returncode:
            sys.exit(run.stderr[-2000:])
        runtimes.append(float(re.search(r"Runtime in seconds: ([\d.]+)", run.stderr).group(1)))
    return statistics.median(runtimes), statistics.median(walls)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    train = Path(args.shared) / "data" / "mq2008" / "S1.txt"
    experiment.require(train)

    print("1-2. Kernels (one process each; per call of a tiny kernel, then ns per unit at 1 / 2 threads)")
    for policy in ("PASSIVE", "ACTIVE"):
        table = kernel_table({"OMP_WAIT_POLICY": policy})
        region = table.pop("region")
        print(f"  OMP_WAIT_POLICY={policy}: a tiny kernel {region[1]:.1f} µs on 1 thread, {region[2]:.1f} µs on 2")
        if policy == "PASSIVE":
            for kind, values in table.items():
                unit = "ns per multiply-add" if kind == "madd" else "ns per document"
                print(f"    {kind:<12} {values[1]:8.2f} {unit} on 1 thread, {values[1] / values[2]:.2f}x on 2")

    print("\n3. learn -l pairs -c 1 -e 0.0001 on MQ2008 S1, median of "
          f"{args.repeat}: training s / whole process s")
    runs = [("the policy (default)", {}), ("OpenMP spinning (OMP_WAIT_POLICY=ACTIVE)", {"OMP_WAIT_POLICY": "ACTIVE"}),
            ("one thread (--threads 1 via NUMBA_NUM_THREADS=1)", {"NUMBA_NUM_THREADS": "1"})]
    for label, env in runs:
        idle = learn_times(train, env, args.repeat)
        with experiment.CpuHogs():
            busy = learn_times(train, env, args.repeat)
        print(f"  {label:<52} idle {idle[0]:.2f} / {idle[1]:.2f}   beside 2 CPU hogs {busy[0]:.2f} / {busy[1]:.2f} "
              f"({busy[0] / max(idle[0], 1e-3):.1f}x the idle training)")


if __name__ == "__main__":
    main()
