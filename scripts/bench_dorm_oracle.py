"""DORM oracle time per query against the query size: the linear assignment (scipy, O(l^3)) and the
truncated dynamic program (NDCG@10 with grades 0-2 and 0-4), on random queries.
Usage: python scripts/bench_dorm_oracle.py [n ...]
"""
import sys
import time

import numpy as np

from svmstruct.losses import dorm, dorm_oracles


def per_call(fn, *args):
    fn(*args)
    reps, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.3 or reps < 3:
        fn(*args)
        reps += 1
    return (time.perf_counter() - start) / reps


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [50, 100, 200, 500, 1000]
    rng = np.random.default_rng(0)
    print(f"{'n':>6} {'grades':>6} {'assignment ms':>14} {'truncated ms':>13} {'speed-up':>9}")
    for n in sizes:
        for grades in (3, 5):
            labels = rng.integers(0, grades, size=n).astype(float)
            g = rng.normal(size=n)
            a, b = dorm.measure_vectors("ndcg@k", labels, 10, 5.0, 0.0, 0.0)
            c = dorm.position_weights("pow:0.5", n)
            lsa = per_call(dorm_oracles.assignment_oracle, g, a, b, c)
            fast = per_call(dorm_oracles.truncated_oracle, g, a, b, c, 10)
            print(f"{n:6d} {grades:6d} {1e3 * lsa:14.3f} {1e3 * fast:13.3f} {lsa / fast:9.1f}", flush=True)


if __name__ == "__main__":
    main()
