"""Most-violated-constraint kernels of svm_perf's multivariate losses (Joachims 2005).

Each kernel takes labels (+1/-1 as float) and scores w.x of one example and returns the coefficients
dcoef with Psi(x, y) - Psi(x, ybar) = sum_i dcoef[i] x_i for the ybar maximising
Delta(y, ybar) + w.Psi(x, ybar), and that Delta. Scaling follows svm_perf (docs/losses.md, "Conventions"):
Delta in percent, Psi with the label rescaling that makes the objectives equal to svm_perf's.
"""
import numpy as np

from svmstruct.compute import threads
from svmstruct.compute.jit import njit, prange
from svmstruct.losses import perf_codes
from svmstruct.losses.map_oracles import average_precision_most_violated_fast, sorted_desc
from svmstruct.losses.perf_codes import AVGPREC, ERRORRATE, FBETA, PRBEP, PREC_K, REC_K, ROCAREA, ZEROONE

# one-thread nanoseconds a document of the oracle below (scripts/bench_threads.py on this project's 2-core machine)
NS_PER_DOCUMENT = 43.0


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


@njit(cache=True)
def contingency_loss(code, a, b, npos, beta):
    """Delta(a, b) in percent for a true and b false positives (svm_perf's loss functions)."""
    c = npos - a
    if code == ZEROONE:
        return 0.0 if (b == 0 and c == 0) else 1.0
    if code == FBETA:
        if a == 0:
            return 100.0
        b2 = beta * beta
        return 100.0 * (1.0 - (1.0 + b2) * a / ((1.0 + b2) * a + b2 * c + b))
    if code == PRBEP or code == REC_K:
        return 100.0 * c / npos if npos > 0 else 0.0
    # PREC_K
    return 100.0 * b / (a + b) if a + b > 0 else 100.0


@njit(cache=True)
def _best_b(code, a, lo, hi, npos, beta, unit, neg_scores):
    """argmax over b in [lo, hi] of Delta(a, b) + unit * (sum of the b highest negative scores).

    For F-beta and Prec@k the loss is concave in b (for a fixed a) and the added scores fall, so the
    increments decrease: binary search for the last positive increment (O(log n)). For the other
    losses Delta does not depend on b and the increments are the scores themselves.
    """
    left, right = lo, hi  # invariant: the best b lies in [left, right]
    while left < right:
        mid = (left + right + 1) // 2
        inc = contingency_loss(code, a, mid, npos, beta) - contingency_loss(code, a, mid - 1, npos, beta) \
            + unit * neg_scores[mid - 1]
        if inc > 0:
            left = mid
        else:
            right = mid - 1
    return left


@njit(cache=True)
def contingency_most_violated(y, s, code, k, beta):
    """Most violated labeling for svm_perf's zero/one, F-beta, PRBEP, Prec@k and Rec@k (Joachims 2005).

    Psi(x, ybar) = sum_i (50/N) ybar_i x_i. A labeling is a contingency table: the a highest-scored
    positives and the b highest-scored negatives predicted positive (any other choice with the same
    table scores less). Value(a, b) = Delta(a, b) - (100/N)(sum of the other positives' scores) +
    (100/N)(sum of the b negatives' scores). As svm_perf: only tables with Delta > 0 compete; PRBEP
    predicts exactly #pos positives, Prec@k at least k, Rec@k at most k. For each a the best b is found
    in O(log n) (see _best_b), so the search is O(n log n) against svm_perf's O(#pos * #neg).
    Returns dcoef (+100/N for each positive predicted negative, -100/N for each negative predicted
    positive) and Delta; an all-zero dcoef with Delta 0 if no table qualifies.
    """
    n = y.shape[0]
    unit = 100.0 / n
    pos = sorted_desc(y, s, True)
    neg = sorted_desc(y, s, False)
    npos, nneg = pos.shape[0], neg.shape[0]
    pos_scores = s[pos]
    neg_scores = s[neg]
    pos_tail = np.zeros(npos + 1)  # pos_tail[a] = sum of the scores of positives a.. (sorted)
    for i in range(npos - 1, -1, -1):
        pos_tail[i] = pos_tail[i + 1] + pos_scores[i]
    neg_head = np.zeros(nneg + 1)
    for j in range(nneg):
        neg_head[j + 1] = neg_head[j] + neg_scores[j]
    positive_negs = 0  # negatives with a positive score: the best b when Delta ignores b
    while positive_negs < nneg and neg_scores[positive_negs] > 0:
        positive_negs += 1
    best_value = -np.inf
    best_a = -1
    best_b = -1
    for a in range(npos + 1):
        if code == PRBEP:
            lo = npos - a
            hi = min(npos - a, nneg)
        elif code == PREC_K:
            lo = max(1, k - a)  # b = 0 would give precision 1, i.e. Delta = 0
            hi = nneg
        elif code == REC_K:
            lo = 0
            hi = min(k - a, nneg)
        else:
            lo = 0
            hi = nneg
        if (code == PRBEP or code == REC_K) and a == npos:
            continue  # recall 1: Delta = 0
        if (code == ZEROONE or code == FBETA) and a == npos:
            lo = max(lo, 1)  # the table of y itself has Delta = 0
        if lo > hi:
            continue
        if code == FBETA or code == PREC_K:
            b = _best_b(code, a, lo, hi, npos, beta, unit, neg_scores)
        else:
            b = min(max(positive_negs, lo), hi)
        value = contingency_loss(code, a, b, npos, beta) - unit * pos_tail[a] + unit * neg_head[b]
        if value > best_value:
            best_value, best_a, best_b = value, a, b
    dcoef = np.zeros(n)
    if best_a < 0:
        return dcoef, 0.0
    for i in range(best_a, npos):
        dcoef[pos[i]] = unit
    for j in range(best_b):
        dcoef[neg[j]] = -unit
    return dcoef, contingency_loss(code, best_a, best_b, npos, beta)



needs_positives = njit(cache=True)(perf_codes.needs_positives)
needs_negatives = njit(cache=True)(perf_codes.needs_negatives)


@njit(cache=True)
def example_most_violated(yq, sq, code, k_abs, frac, beta):
    """One example: (dcoef, Delta, used) for svm_perf loss `code` (see examples_most_violated)."""
    npos = 0
    for i in range(yq.shape[0]):
        if yq[i] > 0:
            npos += 1
    nneg = yq.shape[0] - npos
    if (needs_positives(code) and npos == 0) or (needs_negatives(code) and nneg == 0):
        return np.zeros(yq.shape[0]), 0.0, False
    if code == ERRORRATE:
        d, delta = errorrate_most_violated(yq, sq)
    elif code == ROCAREA:
        d, delta = rocarea_most_violated(yq, sq)
    elif code == AVGPREC:
        d, delta = average_precision_most_violated_fast(yq, sq, 100.0, 1.0)
    else:
        k = k_abs if k_abs > 0 else max(1, int(npos * frac))
        d, delta = contingency_most_violated(yq, sq, code, k, beta)
    return d, delta, True


@threads.parallel_kernel
def _examples_parallel(y, s, qptr, code, k_abs, frac, beta, dcoef, deltas, used):
    for q in prange(qptr.shape[0] - 1):
        lo, hi = qptr[q], qptr[q + 1]
        d, deltas[q], used[q] = example_most_violated(y[lo:hi], s[lo:hi], code, k_abs, frac, beta)
        dcoef[lo:hi] = d


def examples_most_violated(y, s, qptr, code, k_abs, frac, beta):
    """The most violated labeling of every example (rows qptr[q]:qptr[q+1]) for svm_perf loss `code`.

    k for Prec@k / Rec@k: k_abs if > 0, else max(1, int(frac * #pos of the example)) as svm_perf.
    Examples on which the loss is undefined (no positive, or no negative for ROCArea / AvgPrec) are
    left out: used[q] is False and they contribute nothing. Threads only pay off for many examples.
    """
    nq = len(qptr) - 1
    dcoef, deltas, used = np.zeros(len(y)), np.zeros(nq), np.zeros(nq, dtype=np.bool_)
    with threads.for_work(threads.documents(NS_PER_DOCUMENT, len(y)) if nq >= 8 else 0.0):  # few examples: one thread
        _examples_parallel(y, s, qptr, code, int(k_abs), float(frac), float(beta), dcoef, deltas, used)
    return dcoef, deltas, used
