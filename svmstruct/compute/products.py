"""Products with the design matrix, X @ w and X' c, without copying X (float32 or float64, float64 results).

X is a scipy CSR matrix or a dense ndarray (data.read_svmlight(layout="dense")). scipy's and numpy's
products upcast a float32 matrix to float64 first, a transient copy of the whole training set; the numba
kernels of svmstruct.compute.matvec read X in place.
"""
import numpy as np

from svmstruct.compute import paths, threads
from svmstruct.compute.identity import Identity

PARALLEL_NNZ = 4_000_000  # below this many nonzeros threads cost more than they save
KERNEL_NNZ = 2_000_000  # matvec: numba's kernels from this many values (make bench-startup)


def matvec(X, w: np.ndarray) -> np.ndarray:
    """X @ w for a CSR matrix, a dense array or the Identity X (w itself, not a copy); below KERNEL_NNZ values, in a
    process where numba runs no kernel yet (compute.paths: a small classify, a small learn -l pairs), by
    _matvec_twin, to the same bits (training calls it every iteration: where an oracle's kernel runs, the product's
    kernel costs milliseconds to load and the twin 60 ms a call on Reuters' corn)."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    if isinstance(X, Identity):
        return w
    if not paths.compiled(_nnz(X), KERNEL_NNZ, "svmstruct.compute.matvec", repeated=True):
        return _matvec_twin(X, w)
    from svmstruct.compute import matvec as kernels

    out = np.empty(X.shape[0])
    if isinstance(X, np.ndarray):
        with threads.for_work(threads.madds(X.size)):
            kernels._dense_matvec(X, w, out)
        return out
    with threads.for_work(threads.madds(X.nnz) if X.nnz >= PARALLEL_NNZ else 0.0):  # below: its one-thread twin
        kernels._csr_matvec(X.indptr, X.indices, X.data, w, out)
    return out


def _matvec_twin(X, w: np.ndarray) -> np.ndarray:
    """matvec's kernels without numba, summed in their order (a CSR row's products added one by one to 0.0; a dense
    row as four interleaved running sums from 0.0, (a0 + a1) + (a2 + a3)): every product is exact in double
    precision, and cumsum and reduce add in order."""
    if isinstance(X, np.ndarray):
        m = X.shape[1]
        m4 = m - m % 4
        products = X.astype(np.float64) * w
        zero = np.zeros((X.shape[0], 1))
        chains = [np.hstack([zero, products[:, k:m4:4], products[:, m4:] if k == 0 else zero[:, :0]]) for k in range(4)]
        a0, a1, a2, a3 = (np.cumsum(chain, axis=1)[:, -1] for chain in chains)
        return (a0 + a1) + (a2 + a3)
    import functools
    import operator

    products = (X.data.astype(np.float64) * w[X.indices]).tolist()
    bounds = X.indptr.tolist()
    return np.array([functools.reduce(operator.add, products[a:b], 0.0) for a, b in zip(bounds[:-1], bounds[1:])],
                    dtype=np.float64)


def rmatvec(X, coef: np.ndarray) -> np.ndarray:
    """X.T @ coef for a CSR matrix, a dense array or the Identity X (coef itself); rows with a zero coefficient are
    skipped."""
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    if isinstance(X, Identity):
        return coef
    if not paths.compiled(_nnz(X), KERNEL_NNZ, "svmstruct.compute.matvec", repeated=True):
        return _rmatvec_twin(X, coef)
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


def _rmatvec_twin(X, coef: np.ndarray) -> np.ndarray:
    """rmatvec's one-thread kernels in numpy: each nonzero coefficient's row added in row order (np.add.at adds in
    the order given), a dense row c x_r at a time."""
    out = np.zeros(X.shape[1])
    if isinstance(X, np.ndarray):
        for r in np.flatnonzero(coef).tolist():
            out += coef[r] * X[r].astype(np.float64)
        return out
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    kept = coef[rows] != 0.0
    np.add.at(out, X.indices[kept], coef[rows[kept]] * X.data[kept].astype(np.float64))
    return out


def _nnz(X) -> int:
    return X.size if isinstance(X, np.ndarray) else X.nnz
