"""Products with the design matrix, X @ w and X' c, without copying X (float32 or float64, float64 results).

X is a scipy CSR matrix or a dense ndarray (data.read_svmlight(layout="dense")). scipy's and numpy's
products upcast a float32 matrix to float64 first, a transient copy of the whole training set; the numba
kernels of svmstruct.sparse_kernels read X in place. A small dense X (at most small.VALUES) is multiplied
here in numpy instead, column by column in the kernels' order of additions, so that the results are the
kernels' to the bit (tests/test_small_inputs.py) and a small training run never loads numba.
"""
import numpy as np

from svmstruct import small, threads

PARALLEL_NNZ = 4_000_000  # below this many nonzeros threads cost more than they save
SUMS = 4  # the dense kernel's interleaved partial sums per row


def matvec(X, w: np.ndarray) -> np.ndarray:
    """X @ w for a CSR matrix or a dense array X."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    if isinstance(X, np.ndarray) and X.size <= small.VALUES:
        return _small_dense_matvec(X, w)
    from svmstruct import sparse_kernels as kernels

    out = np.empty(X.shape[0])
    if isinstance(X, np.ndarray):
        with threads.for_work(threads.madds(X.size)):
            kernels._dense_matvec(X, w, out)
        return out
    with threads.for_work(threads.madds(X.nnz) if X.nnz >= PARALLEL_NNZ else 0.0):  # below: its one-thread twin
        kernels._csr_matvec(X.indptr, X.indices, X.data, w, out)
    return out


def rmatvec(X, coef: np.ndarray) -> np.ndarray:
    """X.T @ coef for a CSR matrix or a dense array X (rows with a zero coefficient are skipped)."""
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    if isinstance(X, np.ndarray) and X.size <= small.VALUES:
        return _small_dense_rmatvec(X, coef)
    from svmstruct import sparse_kernels as kernels

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


def _small_dense_matvec(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """sparse_kernels._dense_matvec in numpy: per row SUMS partial sums over the columns j = r (mod SUMS),
    each added left to right from 0.0, combined as (a0 + a1) + (a2 + a3) (float32 values widened first)."""
    n, m = X.shape
    whole = m - m % SUMS
    partial = np.zeros((SUMS, n))
    for j in range(m):
        partial[j % SUMS if j < whole else 0] += X[:, j] * w[j]  # float32 * float64 scalar: float64 (NEP 50)
    return (partial[0] + partial[1]) + (partial[2] + partial[3])


def _small_dense_rmatvec(X: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """sparse_kernels._dense_rmatvec in numpy: the sum over the rows of coef_r x_r in row order, rows with a
    zero coefficient skipped; + 0.0 turns the -0.0 of an all-(-0.0) column into the kernel's 0.0 (which starts
    from 0.0). Row order: numpy reduces the first axis of a C-ordered array of two or more columns row after
    row (its pairwise summation is for a reduction along the contiguous axis, which a single column is: cumsum,
    always left to right, 4x slower, for that case; tests/test_small_inputs.py checks both at several sizes)."""
    rows = np.flatnonzero(coef)
    if len(rows) == 0:
        return np.zeros(X.shape[1])
    products = np.ascontiguousarray(coef[rows, None] * X[rows])
    if X.shape[1] == 1:
        return np.cumsum(products, axis=0)[-1] + 0.0
    return np.add.reduce(products, axis=0) + 0.0


def _nnz(X) -> int:
    return X.size if isinstance(X, np.ndarray) else X.nnz
