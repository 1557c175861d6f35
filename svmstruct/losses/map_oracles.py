"""SVM-map's most violated ranking (Yue, Finley, Radlinski & Joachims 2007), also svm_perf's AvgPrec."""
import numpy as np

from svmstruct.compute import threads
from svmstruct.compute.jit import njit, prange
from svmstruct.compute.sums import sequential_sum


@njit(cache=True)
def sorted_desc(y, s, positive):
    """Indices of the positive (or negative) documents by score descending, ties by input order."""
    count = 0
    for i in range(y.shape[0]):
        if (y[i] > 0) == positive:
            count += 1
    idx = np.empty(count, dtype=np.int64)
    c = 0
    for i in range(y.shape[0]):
        if (y[i] > 0) == positive:
            idx[c] = i
            c += 1
    order = np.argsort(-s[idx], kind="mergesort")
    return idx[order]


@njit(cache=True)
def average_precision_most_violated(y, s, loss_scale, psi_scale):
    """Most violated ranking for 1 - AP (Yue et al. 2007, Algorithm 2; svm_perf's AvgPrec).

    Maximises loss_scale (1 - AP(ybar)) + psi_scale sum_{i pos, j neg} ybar_ij (s_i - s_j) over
    rankings. With positives and negatives each in score order, a ranking is the number k_j of positives
    above the j-th negative; 1 - AP = (1/P) sum_j sum_{i > k_j} [i/(i+j-1) - i/(i+j)] splits over the
    negatives, so each k_j is maximised on its own (the optima are monotone in j, the paper's Theorem 2):
    O(n log n + P N). svm_perf: loss_scale 100, psi_scale 1; SVM-map: 1 and 1/(P N).
    Returns dcoef = Psi(y) - Psi(ybar) per document and the loss.
    """
    return _most_violated(y, s, loss_scale, psi_scale, False)


@njit(cache=True)
def _positions_scan(sp, sn, loss_scale, psi_scale):
    """k_j for every negative j by scanning every k (Algorithm 2): O(P N)."""
    P, N = sp.shape[0], sn.shape[0]
    k_of = np.empty(N, dtype=np.int64)
    for j in range(1, N + 1):
        # f(k) relative to k = P (negative j below every positive): walk k from P down to 0
        value = 0.0
        best = 0.0
        best_k = P
        for k in range(P, 0, -1):
            # move negative j above positive k: the loss gains k/(k+j-1) - k/(k+j) (over P),
            # the pair (k, j) turns from +1 to -1
            value += (loss_scale * (k / (k + j - 1.0) - k / (k + j + 0.0)) / P
                      - 2.0 * psi_scale * (sp[k - 1] - sn[j - 1]))
            if value > best:
                best = value
                best_k = k - 1
        k_of[j - 1] = best_k
    return k_of


@njit(cache=True)
def _most_violated(y, s, loss_scale, psi_scale, fast):
    """Shared frame: sort, find the positions k_j (scan or divide and conquer), then AP and dcoef."""
    n = y.shape[0]
    pos = sorted_desc(y, s, True)
    neg = sorted_desc(y, s, False)
    P, N = pos.shape[0], neg.shape[0]
    dcoef = np.zeros(n)
    if P == 0 or N == 0:
        return dcoef, 0.0
    sp = s[pos]
    sn = s[neg]
    if fast:
        k_of = _positions_divide_conquer(sp, sn, loss_scale, psi_scale)
    else:
        k_of = _positions_scan(sp, sn, loss_scale, psi_scale)
    ap = 0.0
    j = 0  # negatives above the current positive
    for i in range(1, P + 1):
        while j < N and k_of[j] < i:
            j += 1
        ap += i / (i + j + 0.0)
        dcoef[pos[i - 1]] = 2.0 * psi_scale * j
    ap /= P
    for jj in range(N):
        dcoef[neg[jj]] = -2.0 * psi_scale * (P - k_of[jj])
    return dcoef, loss_scale * (1.0 - ap)


@njit(cache=True)
def _suffix_gain(j, k, P, H, SP, sn_j, loss_scale, psi_scale):
    """g_j(k): objective of putting negative j below exactly k positives, relative to below all P.

    sum_{i=k+1}^{P} [loss_scale/P * i/((i+j-1)(i+j)) - 2 psi_scale (s_i - sn_j)], where
    i/((i+j-1)(i+j)) = j/(i+j) - (j-1)/(i+j-1) telescopes into harmonic numbers H."""
    loss = j * (H[P + j] - H[k + j]) - (j - 1) * (H[P + j - 1] - H[k + j - 1])
    return loss_scale / P * loss - 2.0 * psi_scale * ((SP[P] - SP[k]) - (P - k) * sn_j)


@njit(cache=True)
def average_precision_most_violated_fast(y, s, loss_scale, psi_scale):
    """The same maximiser as average_precision_most_violated in O(n log n).

    g_j(k) is O(1) from prefix sums and harmonic numbers, and the optimal k_j are monotone in j
    (Yue et al. 2007, Theorem 2), so divide and conquer over j finds them all with O((P + N) log N)
    evaluations: the middle negative's best k is searched in the range its neighbours allow, then both
    halves recurse with the narrowed ranges. Ties go to the largest k, as in the quadratic version.
    """
    return _most_violated(y, s, loss_scale, psi_scale, True)


@njit(cache=True)
def _positions_divide_conquer(sp, sn, loss_scale, psi_scale):
    """k_j for every negative j by divide and conquer over j (see the fast oracle): O((P + N) log N)."""
    P, N = sp.shape[0], sn.shape[0]
    H = np.zeros(P + N + 1)
    for t in range(1, P + N + 1):
        H[t] = H[t - 1] + 1.0 / t
    SP = np.zeros(P + 1)
    for i in range(P):
        SP[i + 1] = SP[i] + sp[i]
    k_of = np.empty(N, dtype=np.int64)
    # stack of (first j, last j, lowest k, highest k), j 1-based
    stack = np.empty((2 * N + 2, 4), dtype=np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3] = 1, N, 0, P
    top = 1
    while top > 0:
        top -= 1
        j_lo, j_hi, k_lo, k_hi = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        if j_lo > j_hi:
            continue
        j = (j_lo + j_hi) // 2
        best = -np.inf
        best_k = k_hi
        for k in range(k_lo, k_hi + 1):
            g = _suffix_gain(j, k, P, H, SP, sn[j - 1], loss_scale, psi_scale)
            if g >= best:
                best = g
                best_k = k
        k_of[j - 1] = best_k
        stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = j_lo, j - 1, k_lo, best_k
        top += 1
        stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = j + 1, j_hi, best_k, k_hi
        top += 1
    return k_of


@threads.parallel_kernel
def map_most_violated(y, s, qptr):
    """All queries (y = +1 relevant / -1 not): SVM-map's scaling, Delta = 1 - AP and
    Psi = 1/(|C+||C-|) sum_ij ybar_ij (x_i - x_j). Queries with no relevant or no non-relevant
    document have no defined loss and contribute nothing."""
    nq = qptr.shape[0] - 1
    dcoef = np.zeros(y.shape[0])
    deltas = np.zeros(nq)
    for q in prange(nq):
        lo, hi = qptr[q], qptr[q + 1]
        P = 0
        for i in range(lo, hi):
            if y[i] > 0:
                P += 1
        N = hi - lo - P
        if P == 0 or N == 0:
            continue
        d, delta = average_precision_most_violated_fast(y[lo:hi], s[lo:hi], 1.0, 1.0 / (P * N))
        dcoef[lo:hi] = d
        deltas[q] = delta
    return dcoef, sequential_sum(deltas)
