"""Most violated constraint for svm_rank's pairwise losses (Joachims 2006), O(n log n) per query.

Pairs are documents of one query with different labels (graded). With Psi_q(ybar) = (scale/2) sum over
pairs (i above j in the labels) ybar_ij (x_i - x_j) and Delta_q = scale * #swapped pairs, a pair is
swapped in the most violated ranking iff s_i - s_j < 1, independently of the others. Counting, for every
document, its swapped pairs with a Fenwick tree over label ranks during a sweep of the sorted scores
costs O(n log n) per query (svm_rank's own oracle is quadratic).
"""
import numpy as np

from svmstruct.compute import threads
from svmstruct.compute.jit import njit, prange
from svmstruct.compute.sums import sequential_sum


@njit(cache=True)
def _label_ranks(y):
    """Dense ranks 1..L of the labels (equal labels share a rank)."""
    order = np.argsort(y, kind="mergesort")
    ranks = np.empty(y.shape[0], dtype=np.int64)
    r = 0
    for p in range(y.shape[0]):
        if p == 0 or y[order[p]] != y[order[p - 1]]:
            r += 1
        ranks[order[p]] = r
    return ranks, r


@njit(cache=True)
def swapped_pair_counts(y, s):
    """above[i] = #{j: y_j < y_i, pair swapped}, below[j] = #{i: y_i > y_j, pair swapped}.

    Pair (i, j) with y_i > y_j is swapped iff t_i < s_j with t = s - 1 (one rounding for both counts).
    """
    ranks, L = _label_ranks(y)
    above = np.zeros(y.shape[0], dtype=np.int64)
    below = np.zeros(y.shape[0], dtype=np.int64)
    _sweeps(s, ranks, L, above, below)
    return above, below


@njit(cache=True)
def _sweeps(s, ranks, L, above, below):
    """swapped_pair_counts from the labels' dense ranks 1..L (a function of the labels only: computed once
    per training run), into above and below."""
    n = s.shape[0]
    order = np.argsort(s, kind="mergesort")  # t = s - 1 has the same order
    tree = np.zeros(L + 1, dtype=np.int64)
    # above: sweep documents by t descending, inserting documents with s_j > t_i
    p = n - 1
    for q in range(n - 1, -1, -1):
        i = order[q]
        t_i = s[i] - 1.0
        while p >= 0 and s[order[p]] > t_i:
            r = ranks[order[p]]
            while r <= L:
                tree[r] += 1
                r += r & -r
            p -= 1
        r = ranks[i] - 1  # labels strictly lower
        c = 0
        while r > 0:
            c += tree[r]
            r -= r & -r
        above[i] = c
    tree[:] = 0
    # below: sweep documents by s ascending, inserting documents with t_i < s_j
    p = 0
    inserted = 0
    for q in range(n):
        j = order[q]
        while p < n and s[order[p]] - 1.0 < s[j]:
            r = ranks[order[p]]
            while r <= L:
                tree[r] += 1
                r += r & -r
            inserted += 1
            p += 1
        r = ranks[j]  # labels lower or equal
        c = 0
        while r > 0:
            c += tree[r]
            r -= r & -r
        below[j] = inserted - c


@threads.parallel_kernel
def query_label_ranks(y, qptr):
    """(ranks, levels, pairs): every document's dense label rank 1..L within its query, each query's L and
    its number of document pairs with different labels (what the oracle needs of the labels)."""
    nq = qptr.shape[0] - 1
    ranks = np.empty(y.shape[0], dtype=np.int64)
    levels = np.zeros(nq, dtype=np.int64)
    pairs = np.zeros(nq, dtype=np.int64)
    for q in prange(nq):
        lo, hi = qptr[q], qptr[q + 1]
        r, L = _label_ranks(y[lo:hi])
        ranks[lo:hi] = r
        levels[q] = L
        counts = np.zeros(L + 1, dtype=np.int64)
        for i in range(hi - lo):
            counts[r[i]] += 1
        same = 0
        for c in counts:
            same += c * c
        pairs[q] = ((hi - lo) * (hi - lo) - same) // 2
    return ranks, levels, pairs


@threads.parallel_kernel
def pairs_most_violated(s, qptr, ranks, levels, pairs, per_query_average):
    """All queries: dcoef = sum over swapped pairs of +scale (higher-labelled) / -scale (lower-labelled),
    scale 1 (svm_rank -l 1) or 1/pairs_q (-l 2); returns dcoef and the summed Delta. ranks, levels, pairs:
    query_label_ranks of the labels."""
    nq = qptr.shape[0] - 1
    dcoef = np.zeros(s.shape[0])
    deltas = np.zeros(nq)
    for q in prange(nq):
        lo, hi = qptr[q], qptr[q + 1]
        if pairs[q] == 0:
            continue
        above = np.empty(hi - lo, dtype=np.int64)
        below = np.empty(hi - lo, dtype=np.int64)
        _sweeps(s[lo:hi], ranks[lo:hi], levels[q], above, below)
        scale = 1.0 / pairs[q] if per_query_average else 1.0
        swapped = 0
        for i in range(hi - lo):
            dcoef[lo + i] = scale * (above[i] - below[i])
            swapped += above[i]
        deltas[q] = scale * swapped
    return dcoef, sequential_sum(deltas)
