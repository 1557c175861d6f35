"""SVM-multiclass's cut in numba (svmstruct.problems.multiclass.cut): every example's K class scores, on several
threads, and the cut's blocks from the examples whose most violated class is wrong — the sums in the order scipy's
X @ W' and X' G take them, so the same numbers to the bit, without G's n x K zeros."""
import numpy as np

from svmstruct.compute import threads
from svmstruct.compute.jit import prange

NS_PER_MADD = 0.6  # one-thread nanoseconds of a score's multiply-add (as compute.threads.NS_PER_MADD)


@threads.parallel_kernel
def class_scores(indptr, indices, data, WT, out):
    """out[i, k] = x_i . WT[:, k] for the CSR rows x_i, WT the D x K weights (each row on its own: any number of
    threads, the same sums)."""
    K = WT.shape[1]
    for i in prange(out.shape[0]):
        for k in range(K):
            out[i, k] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            a, j = data[p], indices[p]
            for k in range(K):
                out[i, k] += a * WT[j, k]


@threads.parallel_kernel
def cut_blocks(indptr, indices, data, spans, truth, ybar, scale, out):
    """out[truth_i, j] += scale_i x_ij and out[ybar_i, j] -= scale_i x_ij for every row i with scale_i != 0, from X's
    columns (CSC: indptr, indices, data), a column's rows in order — each weight takes its rows in the order of a pass
    row after row, so any number of threads gives the same sums. spans: column boundaries of about equal work."""
    for c in prange(spans.shape[0] - 1):
        for j in range(spans[c], spans[c + 1]):
            for p in range(indptr[j], indptr[j + 1]):
                i = indices[p]
                s = scale[i]
                if s == 0.0:
                    continue
                out[truth[i], j] += data[p] * s
                out[ybar[i], j] += data[p] * -s
    return out


SPANS = 64  # column ranges of cut_blocks, split among the threads


def column_spans(indptr) -> np.ndarray:
    """SPANS + 1 boundaries splitting the columns of a CSC matrix into ranges of about equal nonzeros (text: the first
    columns are the common words)."""
    return np.searchsorted(indptr, np.linspace(0, indptr[-1], SPANS + 1)).astype(np.int64).clip(0, len(indptr) - 1)


@threads.parallel_kernel
def signed_rows(indptr, indices, data, rows, first, second, out):
    """out[k] += c x_r for every listed row r (rows[i], in order) whose first[i] or second[i] is k, c = [first[i] ==
    k] - [second[i] == k] (0.0 where both are k): G' X of the n x width matrix G of +1 at (i, first[i]) and -1 at (i,
    second[i]), each output row's terms in the order of the rows, as scipy's product of the two adds them (SVM-hmm's
    cut: the true tags' emissions minus the most violated tagging's). Output rows on several threads."""
    K = out.shape[0]
    count = np.zeros(K + 1, dtype=np.int64)
    for i in range(rows.shape[0]):
        count[first[i] + 1] += 1
        if second[i] != first[i]:
            count[second[i] + 1] += 1
    for k in range(K):
        count[k + 1] += count[k]
    listed = np.empty(count[K], dtype=np.int64)
    at = count[:K].copy()
    for i in range(rows.shape[0]):
        listed[at[first[i]]] = i
        at[first[i]] += 1
        if second[i] != first[i]:
            listed[at[second[i]]] = i
            at[second[i]] += 1
    for k in prange(K):
        for q in range(count[k], count[k + 1]):
            i = listed[q]
            c = (1.0 if first[i] == k else 0.0) - (1.0 if second[i] == k else 0.0)
            r = rows[i]
            for p in range(indptr[r], indptr[r + 1]):
                out[k, indices[p]] += c * data[p]


@threads.parallel_kernel
def row_dots(indptr, indices, data, W, which, out):
    """out[i] = x_i . W[which[i]] for the CSR rows x_i (0.0 where which[i] < 0): the score of one chosen weight row per
    row of X (SVM-hmm's emission scores of a given tagging), rows on several threads."""
    for i in prange(out.shape[0]):
        r = which[i]
        total = 0.0
        if r >= 0:
            for p in range(indptr[i], indptr[i + 1]):
                total += data[p] * W[r, indices[p]]
        out[i] = total
