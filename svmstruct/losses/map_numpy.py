"""numpy twin of svmstruct.losses.map_oracles.map_most_violated for training sets of few queries (at most
svmstruct.small.MAP_QUERIES): the same dcoef and Delta to the bit (tests/test_small_inputs.py), without loading
numba. A query at a time: its positives and negatives by score (stable), then the kernel's divide and conquer
over the negatives j (Yue et al. 2007, Theorem 2), each middle j's g_j(k) over its range of k at once, ties to
the largest k, with the kernel's arithmetic (prefix sums and harmonic numbers added from 0.0 in order).
"""
from __future__ import annotations

import numpy as np


def _in_order(values: np.ndarray) -> np.ndarray:
    """[0.0, 0.0 + v0, 0.0 + v0 + v1, ...]: the kernel's running sums."""
    return np.cumsum(np.concatenate(([0.0], values)))


def _positions(sp: np.ndarray, sn: np.ndarray, loss_scale: float, psi_scale: float) -> np.ndarray:
    """map_oracles._positions_divide_conquer: every negative's k_j."""
    P, N = len(sp), len(sn)
    H = _in_order(1.0 / np.arange(1, P + N + 1))
    SP = _in_order(sp)
    k_of = np.empty(N, dtype=np.int64)
    stack = [(1, N, 0, P)]
    while stack:
        j_lo, j_hi, k_lo, k_hi = stack.pop()
        if j_lo > j_hi:
            continue
        j = (j_lo + j_hi) // 2
        k = np.arange(k_lo, k_hi + 1)
        loss = j * (H[P + j] - H[k + j]) - (j - 1) * (H[P + j - 1] - H[k + j - 1])
        g = loss_scale / P * loss - 2.0 * psi_scale * ((SP[P] - SP[k]) - (P - k) * sn[j - 1])
        best_k = int(k[np.flatnonzero(g == g.max())[-1]])
        k_of[j - 1] = best_k
        stack.append((j_lo, j - 1, k_lo, best_k))
        stack.append((j + 1, j_hi, best_k, k_hi))
    return k_of


def map_most_violated(y: np.ndarray, s: np.ndarray, qptr: np.ndarray):
    """(dcoef, summed Delta) of every query (y = +1 relevant / -1 not), SVM-map's scaling."""
    dcoef = np.zeros(len(y))
    deltas = np.zeros(len(qptr) - 1)
    for q in range(len(qptr) - 1):
        lo, hi = int(qptr[q]), int(qptr[q + 1])
        positive = y[lo:hi] > 0
        pos, neg = np.flatnonzero(positive), np.flatnonzero(~positive)
        P, N = len(pos), len(neg)
        if P == 0 or N == 0:
            continue
        psi_scale = 1.0 / (P * N)
        pos = lo + pos[np.argsort(-s[lo + pos], kind="stable")]
        neg = lo + neg[np.argsort(-s[lo + neg], kind="stable")]
        k_of = _positions(s[pos], s[neg], 1.0, psi_scale)
        i = np.arange(1, P + 1)
        above = np.searchsorted(k_of, i, side="left")  # negatives above positive i (k_of is non-decreasing)
        ap = _in_order(i / (i + above + 0.0))[-1] / P
        dcoef[pos] = 2.0 * psi_scale * above
        dcoef[neg] = -2.0 * psi_scale * (P - k_of)
        deltas[q] = 1.0 * (1.0 - ap)
    return dcoef, float(_in_order(deltas)[-1])
