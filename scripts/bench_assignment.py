"""Linear assignment time on DORM-like matrices C = outer(g, c) - outer(b, a) (g ~ normal, b the NDCG@10
gains of grades 0-2, c = (i+1)^-0.5, a the NDCG@10 position weights): scipy's linear_sum_assignment
against svmstruct.losses.assignment.max_weight_assignment (numba, compiled before timing).
Usage: python scripts/bench_assignment.py [n ...]
"""
import sys
import time

import numpy as np
from scipy.optimize import linear_sum_assignment

from svmstruct.losses import dorm
from svmstruct.losses.assignment import max_weight_assignment


def median_ms(fn, C, budget=0.5, min_reps=5, max_reps=200):
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or (time.perf_counter() - start < budget and len(times) < max_reps):
        t0 = time.perf_counter()
        fn(C)
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def dorm_matrix(rng, n):
    labels = rng.integers(0, 3, size=n).astype(float)
    g = rng.normal(size=n)
    a, b = dorm.measure_vectors("ndcg@k", labels, {"k": 10})
    c = dorm.position_weights("pow:0.5", n)
    return np.outer(g, c) - np.outer(b, a)


def main():
    sizes = [int(s) for s in sys.argv[1:]] or [50, 100, 200, 500]
    rng = np.random.default_rng(0)
    max_weight_assignment(dorm_matrix(rng, 5))  # compile (or load the cache)

    def scipy_lsa(C):
        return linear_sum_assignment(C, maximize=True)

    print(f"{'n':>5} {'scipy ms':>10} {'numba ms':>10} {'numba/scipy':>12}")
    for n in sizes:
        C = dorm_matrix(rng, n)
        rows, cols = scipy_lsa(C)
        ours = max_weight_assignment(C)
        gap = C[rows, cols].sum() - C[np.arange(n), ours].sum()
        assert abs(gap) <= 1e-12 * max(1.0, abs(C[rows, cols].sum())), gap
        t_scipy = median_ms(scipy_lsa, C)
        t_ours = median_ms(max_weight_assignment, C)
        print(f"{n:5d} {t_scipy:10.3f} {t_ours:10.3f} {t_ours / t_scipy:12.2f}", flush=True)


if __name__ == "__main__":
    main()
