"""The numba kernels of svmstruct.compute.products (X @ w and X' c without copying X, float32 or float64 X, float64
results). Loaded on first use."""
from svmstruct.compute import threads
from svmstruct.compute.jit import njit, prange


@threads.parallel_kernel
def _csr_matvec(indptr, indices, data, w, out):
    for r in prange(out.shape[0]):
        acc = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            acc += data[p] * w[indices[p]]
        out[r] = acc


@njit(cache=True)
def _csr_rmatvec(indptr, indices, data, coef, out):
    for r in range(coef.shape[0]):
        c = coef[r]
        if c != 0.0:
            for p in range(indptr[r], indptr[r + 1]):
                out[indices[p]] += c * data[p]


@threads.parallel_kernel
def _dense_matvec(X, w, out):
    """Four interleaved partial sums per row: independent chains the CPU runs in parallel (a fixed
    summation order, unlike fastmath, so results do not depend on the machine)."""
    m = X.shape[1]
    m4 = m - m % 4
    for r in prange(X.shape[0]):
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for j in range(0, m4, 4):
            a0 += X[r, j] * w[j]
            a1 += X[r, j + 1] * w[j + 1]
            a2 += X[r, j + 2] * w[j + 2]
            a3 += X[r, j + 3] * w[j + 3]
        for j in range(m4, m):
            a0 += X[r, j] * w[j]
        out[r] = (a0 + a1) + (a2 + a3)


@njit(cache=True)
def _dense_rmatvec(X, coef, out):
    for r in range(X.shape[0]):
        c = coef[r]
        if c != 0.0:
            for j in range(X.shape[1]):
                out[j] += c * X[r, j]


BLOCKS = 8  # row blocks of the parallel X'c: a fixed count, so the sum's order (and result) never varies


@threads.parallel_kernel
def _dense_rmatvec_blocks(X, coef, partial):
    n = X.shape[0]
    for b in prange(BLOCKS):
        for r in range(b * n // BLOCKS, (b + 1) * n // BLOCKS):
            c = coef[r]
            if c != 0.0:
                for j in range(X.shape[1]):
                    partial[b, j] += c * X[r, j]


@threads.parallel_kernel
def _csr_rmatvec_blocks(indptr, indices, data, coef, partial):
    n = coef.shape[0]
    for b in prange(BLOCKS):
        for r in range(b * n // BLOCKS, (b + 1) * n // BLOCKS):
            c = coef[r]
            if c != 0.0:
                for p in range(indptr[r], indptr[r + 1]):
                    partial[b, indices[p]] += c * data[p]
