"""SVM-multiclass's cut in numba (svmstruct.problems.multiclass.cut): every example's K class scores, on several
threads, and the cut's blocks from the examples whose most violated class is wrong — the sums in the order scipy's
X @ W' and X' G take them, so the same numbers to the bit, without G's n x K zeros."""
from numba import njit, prange

from svmstruct.compute import threads

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


@njit(cache=True)
def cut_blocks(indptr, indices, data, truth, ybar, scale, out):
    """out[truth_i] += scale_i x_i and out[ybar_i] -= scale_i x_i for every row i with scale_i != 0, rows in order."""
    for i in range(truth.shape[0]):
        s = scale[i]
        if s == 0.0:
            continue
        for p in range(indptr[i], indptr[i + 1]):
            out[truth[i], indices[p]] += data[p] * s
            out[ybar[i], indices[p]] += data[p] * -s
    return out
