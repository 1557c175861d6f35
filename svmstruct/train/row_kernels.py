"""The wide working set's arithmetic in numba (svmstruct.train.loop_state.WideWorkingSet): a stored constraint kept
sparse, its dot product with a vector and its multiple added into one, each reading the constraint once (numpy's
`values @ a[indices]` and `w[indices] += alpha * values` make a temporary of the row first), on several threads over
CHUNKS fixed slices summed in their order — any number of threads gives the same numbers."""
import numpy as np

from svmstruct.compute import threads
from svmstruct.compute.jit import njit, prange

CHUNKS = 16  # fixed slices of a row (not one per thread: the sums must not depend on the thread count)
NS_PER_ENTRY = 1.0  # one-thread nanoseconds of a stored entry's multiply-add (a gathered or scattered weight)


@threads.parallel_kernel
def sparse_dot(indices, values, a):
    """sum_p values[p] a[indices[p]], each slice summed in order, then the slices in order."""
    n = values.shape[0]
    partial = np.zeros(CHUNKS)
    for c in prange(CHUNKS):
        total = 0.0
        for p in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
            total += values[p] * a[indices[p]]
        partial[c] = total
    total = 0.0
    for c in range(CHUNKS):
        total += partial[c]
    return total


@threads.parallel_kernel
def sparse_add(indices, values, alpha, w):
    """w[indices] += alpha * values (the indices distinct: the slices write apart)."""
    n = values.shape[0]
    for c in prange(CHUNKS):
        for p in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
            w[indices[p]] += alpha * values[p]


@threads.parallel_kernel
def dense_add(values, alpha, w):
    """w += alpha * values."""
    n = values.shape[0]
    for c in prange(CHUNKS):
        for j in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
            w[j] += alpha * values[j]


@njit(cache=True)
def nonzeros(a):
    """(the indices of a's nonzero entries as int32, their values): a row kept sparse."""
    count = 0
    for j in range(a.shape[0]):
        if a[j] != 0.0:
            count += 1
    indices = np.empty(count, dtype=np.int32)
    values = np.empty(count)
    k = 0
    for j in range(a.shape[0]):
        if a[j] != 0.0:
            indices[k] = j
            values[k] = a[j]
            k += 1
    return indices, values
