"""Products with the design matrix, X @ w and X' c, without copying X (float32 or float64, float64 results).

X is a scipy CSR matrix or a dense ndarray (data.read_svmlight(layout="dense")). scipy's and numpy's
products upcast a float32 matrix to float64 first, a transient copy of the whole training set; the numba
kernels of svmstruct.compute.matvec read X in place.
"""
import numpy as np

from svmstruct.compute import threads
from svmstruct.compute.identity import Identity

PARALLEL_NNZ = 4_000_000  # below this many nonzeros threads cost more than they save


def matvec(X, w: np.ndarray) -> np.ndarray:
    """X @ w for a CSR matrix, a dense array or the Identity X (w itself, not a copy)."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    if isinstance(X, Identity):
        return w
    from svmstruct.compute import matvec as kernels

    out = np.empty(X.shape[0])
    if isinstance(X, np.ndarray):
        with threads.for_work(threads.madds(X.size)):
            kernels._dense_matvec(X, w, out)
        return out
    with threads.for_work(threads.madds(X.nnz) if X.nnz >= PARALLEL_NNZ else 0.0):  # below: its one-thread twin
        kernels._csr_matvec(X.indptr, X.indices, X.data, w, out)
    return out


def rmatvec(X, coef: np.ndarray) -> np.ndarray:
    """X.T @ coef for a CSR matrix, a dense array or the Identity X (coef itself); rows with a zero coefficient are
    skipped."""
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    if isinstance(X, Identity):
        return coef
    from svmstruct.compute import matvec as kernels

    if _nnz(X) >= PARALLEL_NNZ:
        partial = np.zeros((kernels.BLOCKS, X.shape[1]))
        with threads.for_work(threads.madds(_nnz(X))):
            if isinstance(X, np.ndarray):
                kernels._dense_rmatvec_blocks(X, coef, partial)
            else:
                kernels._csr_rmatvec_blocks(X.indptr, X.indices, X.data, coef, partial)
        return partial.sum(axis=0)
    out = np.zeros(X.shape[1])
    if isinstance(X, np.ndarray):
        kernels._dense_rmatvec(X, coef, out)
        return out
    kernels._csr_rmatvec(X.indptr, X.indices, X.data, coef, out)
    return out


def _nnz(X) -> int:
    return X.size if isinstance(X, np.ndarray) else X.nnz
