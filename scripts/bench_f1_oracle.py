"""How the F1 oracle's time grows with n: ours (O(n log n)) against svm_perf's search of every
contingency table (O(#pos * #neg)), both numba, on the same random scores (10% positives).

Prints the time per call at each n and the growth factor from one n to the next; n log n predicts
a factor of about 12.5 from 1e4 to 1e5, the full table search about 100.
Usage: python scripts/bench_f1_oracle.py [n ...]
"""
import sys
import time

import numpy as np
from numba import njit

from svmstruct.losses import perf_oracles as po


@njit(cache=True)
def all_tables_f1(y, s):
    """svm_perf's search: every (a, d) table, value = loss + score sums (the baseline)."""
    n = y.shape[0]
    unit = 100.0 / n
    pos = po.sorted_desc(y, s, True)
    neg = po.sorted_desc(y, s, False)
    npos, nneg = pos.shape[0], neg.shape[0]
    tail = np.zeros(npos + 1)
    for i in range(npos - 1, -1, -1):
        tail[i] = tail[i + 1] + s[pos[i]]
    head = np.zeros(nneg + 1)
    for j in range(nneg):
        head[j + 1] = head[j] + s[neg[j]]
    best = -np.inf
    for a in range(npos + 1):
        for b in range(nneg + 1):
            if a == npos and b == 0:
                continue
            v = po.contingency_loss(po.FBETA, a, b, npos, 1.0) - unit * tail[a] + unit * head[b]
            if v > best:
                best = v
    return best


def timed(fn, *args, repeat=3):
    fn(*args)  # compile / warm
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    sizes = [int(float(a)) for a in sys.argv[1:]] or [10_000, 100_000]
    rng = np.random.default_rng(0)
    previous = None
    print(f"{'n':>8} {'ours s':>10} {'all tables s':>13} {'speed-up':>9} {'ours growth':>12} {'tables growth':>14}")
    for n in sizes:
        y = np.where(rng.random(n) < 0.1, 1.0, -1.0)
        s = rng.normal(size=n) + 0.5 * y
        dcoef, delta = po.contingency_most_violated(y, s, po.FBETA, 0, 1.0)
        assert abs((delta - dcoef @ s) - all_tables_f1(y, s)) < 1e-6 * max(1.0, abs(delta))
        ours = timed(po.contingency_most_violated, y, s, po.FBETA, 0, 1.0)
        tables = timed(all_tables_f1, y, s, repeat=1)
        growth = "" if previous is None else f"{ours / previous[0]:12.1f} {tables / previous[1]:14.1f}"
        print(f"{n:8d} {ours:10.5f} {tables:13.5f} {tables / ours:9.0f} {growth}", flush=True)
        previous = (ours, tables)


if __name__ == "__main__":
    main()
