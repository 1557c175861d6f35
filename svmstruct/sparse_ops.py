"""Products with a CSR matrix in numba, without copying X (float32 or float64 data, float64 results).

scipy's sparse products upcast a float32 matrix to float64 first, a transient copy of the whole
training set; these kernels read X in place.
"""
import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def _csr_matvec_parallel(indptr, indices, data, w, out):
    for r in prange(out.shape[0]):
        acc = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            acc += data[p] * w[indices[p]]
        out[r] = acc


@njit(cache=True)
def _csr_matvec(indptr, indices, data, w, out):
    for r in range(out.shape[0]):
        acc = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            acc += data[p] * w[indices[p]]
        out[r] = acc


# Below this many nonzeros threads cost more than they save.
PARALLEL_NNZ = 4_000_000


@njit(cache=True)
def _csr_rmatvec(indptr, indices, data, coef, out):
    for r in range(coef.shape[0]):
        c = coef[r]
        if c != 0.0:
            for p in range(indptr[r], indptr[r + 1]):
                out[indices[p]] += c * data[p]


def matvec(X, w: np.ndarray) -> np.ndarray:
    """X @ w for a CSR matrix X."""
    out = np.empty(X.shape[0])
    kernel = _csr_matvec_parallel if X.nnz >= PARALLEL_NNZ else _csr_matvec
    kernel(X.indptr, X.indices, X.data, np.ascontiguousarray(w, dtype=np.float64), out)
    return out


def rmatvec(X, coef: np.ndarray) -> np.ndarray:
    """X.T @ coef for a CSR matrix X (rows with a zero coefficient are skipped)."""
    out = np.zeros(X.shape[1])
    _csr_rmatvec(X.indptr, X.indices, X.data, np.ascontiguousarray(coef, dtype=np.float64), out)
    return out
