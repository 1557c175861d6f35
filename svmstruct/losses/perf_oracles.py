"""Most-violated-constraint kernels of svm_perf's multivariate losses (Joachims 2005).

Each kernel takes labels (+1/-1 as float) and scores w.x of one example and returns the coefficients
dcoef with Psi(x, y) - Psi(x, ybar) = sum_i dcoef[i] x_i for the ybar maximising
Delta(y, ybar) + w.Psi(x, ybar), and that Delta. Scaling follows svm_perf (DESIGN.md section 4):
Delta in percent, Psi with the label rescaling that makes the objectives equal to svm_perf's.
"""
import numpy as np
from numba import njit


@njit(cache=True)
def errorrate_most_violated(y, s):
    """Error rate: Delta = 100 * #errors / N, Psi = sum_i (50/N) ybar_i x_i.

    Documents decouple: flipping i gains 100/N - (100/N) y_i s_i, so ybar_i = -y_i iff y_i s_i < 1.
    """
    n = y.shape[0]
    unit = 100.0 / n
    dcoef = np.zeros(n)
    delta = 0.0
    for i in range(n):
        if y[i] * s[i] < 1.0:
            dcoef[i] = unit * y[i]
            delta += unit
    return dcoef, delta


@njit(cache=True)
def rocarea_most_violated(y, s):
    """ROCArea (Joachims 2005, Algorithm 3): Delta = 100 * #swapped pairs / (P N).

    Psi = (50/(P N)) sum_{i pos, j neg} ybar_ij (x_i - x_j); the pair (i, j) is swapped iff
    s_i - s_j < 1. Counting the swaps of every document after one sort is O(n log n).
    """
    n = y.shape[0]
    order = np.argsort(s, kind="mergesort")
    pos = 0
    for i in range(n):
        if y[i] > 0:
            pos += 1
    neg = n - pos
    dcoef = np.zeros(n)
    if pos == 0 or neg == 0:
        return dcoef, 0.0
    unit = 100.0 / (pos * neg)
    # positives: count negatives j with s_j > s_i - 1 (scan scores ascending, two pointers)
    neg_scores = np.empty(neg)
    pos_scores = np.empty(pos)
    neg_idx = np.empty(neg, dtype=np.int64)
    pos_idx = np.empty(pos, dtype=np.int64)
    a = 0
    b = 0
    for r in range(n):
        i = order[r]
        if y[i] > 0:
            pos_scores[a] = s[i] - 1.0  # compare s_i - 1 with s_j in both passes: one rounding
            pos_idx[a] = i
            a += 1
        else:
            neg_scores[b] = s[i]
            neg_idx[b] = i
            b += 1
    swapped = 0
    j = 0  # negatives with s_j <= s_i - 1
    for a in range(pos):
        while j < neg and neg_scores[j] <= pos_scores[a]:
            j += 1
        c = neg - j
        dcoef[pos_idx[a]] = unit * c
        swapped += c
    # negatives: count positives i with s_i < s_j + 1
    a = 0
    for b in range(neg):
        while a < pos and pos_scores[a] < neg_scores[b]:
            a += 1
        dcoef[neg_idx[b]] = -unit * a
    return dcoef, unit * swapped
