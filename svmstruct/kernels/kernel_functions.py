"""Kernel values, Gram matrices and the scores of a kernel expansion (the kernels: svmstruct.kernels.table), with
the originals' float handling for svm_light's kernels.

A kernel model scores score(x) = sum_j coef_j k(b_j, x) - threshold over its basis (support) vectors b_j,
as svm_light's classify_example does. To reproduce the originals' predictions to the printed digit, feature
values are floats (svm_light's FVAL), a dot product adds the products of the features two vectors share, in
double and in increasing index order (sprod_ss), |a - b|^2 is |a|^2 - 2 a.b + |b|^2 with each squared norm
a dot product of the vector with itself, and the terms of a score are added in basis order (checked: of
the variants with float products, float sums or a float kernel value, only this one gives svm_perf's
printed predictions on every reference case).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from svmstruct.compute import threads
from svmstruct.compute.jit import njit, prange
from svmstruct.kernels.table import COMPILED, POLYNOMIAL, RBF, TYPES, Kernel

NS_PER_PRODUCT = 2.0  # one-thread cost of a feature pair in a sparse dot product (threads.for_work)


@dataclass
class Basis:
    """Vectors in CSR arrays over 0-based feature ids (a kernel model's basis or support vectors)."""
    indptr: np.ndarray  # int64, len = size + 1
    indices: np.ndarray  # int32, increasing within a row
    values: np.ndarray  # float32 for svm_light's models (their FVAL), float64 for ours

    @property
    def size(self) -> int:
        return len(self.indptr) - 1

    @classmethod
    def of(cls, X, dtype=np.float64) -> Basis:
        import scipy.sparse as sp

        X = sp.csr_matrix(X, copy=True)  # without explicit zeros: the same vectors from a dense or sparse layout
        X.eliminate_zeros()
        X.sort_indices()
        return cls(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(dtype))

    @classmethod
    def of_dataset(cls, data, dtype=np.float64) -> Basis:
        """All of a dataset's rows over feature ids (a file with compact `columns` mapped back to its indices)."""
        rows = Rows.of(data, dtype)
        return rows.block(0, rows.size)

    def select(self, keep) -> Basis:
        """The vectors at positions `keep`, in that order."""
        keep = np.asarray(keep, dtype=np.int64)
        lengths = self.indptr[keep + 1] - self.indptr[keep]
        indptr = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        at = np.concatenate([np.arange(self.indptr[j], self.indptr[j + 1]) for j in keep]) if len(keep) else \
            np.zeros(0, dtype=np.int64)
        return Basis(indptr, self.indices[at], self.values[at])

    @classmethod
    def stack(cls, parts: list) -> Basis:
        """The vectors of every part, in order."""
        starts = np.cumsum([0] + [len(p.values) for p in parts])
        indptr = np.concatenate([[0]] + [p.indptr[1:] + start for p, start in zip(parts, starts)])
        return cls(indptr.astype(np.int64), np.concatenate([p.indices for p in parts]).astype(np.int32),
                   np.concatenate([p.values for p in parts]))

    def block(self, lo: int, hi: int) -> Basis:
        """The vectors lo..hi-1 (views)."""
        hi = min(hi, self.size)
        start, end = self.indptr[lo], self.indptr[hi]
        return Basis(self.indptr[lo:hi + 1] - start, self.indices[start:end], self.values[start:end])

    @property
    def highest_index(self) -> int:
        """The highest 1-based feature index of any vector (0 without features)."""
        return int(self.indices.max()) + 1 if len(self.indices) else 0


@dataclass
class Rows:
    """A dataset's (or a matrix's) rows as Basis blocks over feature ids, each converted when asked for: the
    kernel stages never hold a second copy of the data (as one Basis it takes 12 bytes a value, three times
    a dense float32 dataset)."""
    X: Any  # dense or CSR, rows = documents
    columns: np.ndarray | None = None  # feature id of each column (files with compact columns)
    dtype: Any = np.float64

    @classmethod
    def of(cls, data, dtype=np.float64) -> Rows:
        """The rows of a Dataset (its X and columns) or of a matrix."""
        return cls(data.X, data.columns, dtype) if hasattr(data, "qptr") else cls(data, None, dtype)

    @property
    def size(self) -> int:
        return self.X.shape[0]

    def block(self, lo: int, hi: int) -> Basis:
        """Rows lo..hi-1."""
        return self._basis(slice(lo, min(hi, self.size)))

    def select(self, keep) -> Basis:
        """The rows at positions `keep`, in that order."""
        return self._basis(np.asarray(keep, dtype=np.int64))

    def _basis(self, which) -> Basis:
        rows = Basis.of(self.X[which], self.dtype)
        if self.columns is not None:
            rows.indices = np.asarray(self.columns, dtype=np.int64)[rows.indices].astype(np.int32)
        return rows


BLOCK = 4096  # rows converted, mapped or scored at a time


@dataclass
class KernelExpansion:
    """sum_j coef[j] k(basis_j, x) (svm_light's kernel models: the SV lines, alpha * y as coef)."""
    kernel: Kernel
    basis: Basis
    coef: np.ndarray  # float64

    @property
    def size(self) -> int:
        return len(self.coef)

    def scores(self, data) -> np.ndarray:
        """sum_j coef_j k(b_j, x) for every document x of a Dataset or row of a matrix (threshold not
        subtracted); feature values in the basis's precision (float: the originals read them as float).
        Ours (a double-precision basis, learn -t) by Gram blocks and one product, as training mapped the
        documents (60,000 documents against 500 basis vectors: classify 2.1 s instead of 3.8 s); svm_light's
        term by term in the original classify's order of additions, so that its outputs are reproduced."""
        source = Rows.of(data, self.basis.values.dtype)
        out = np.empty(source.size)
        k, b = self.kernel, self.basis
        for lo in range(0, source.size, BLOCK):
            rows = source.block(lo, lo + BLOCK)
            if b.values.dtype == np.float64:
                out[lo:lo + rows.size] = gram(k, rows, b) @ self.coef
                continue
            work = (len(rows.values) * self.size + rows.size * len(b.values)) * NS_PER_PRODUCT * 1e-9
            with threads.for_work(work):
                expansion_scores(rows.indptr, rows.indices, rows.values, b.indptr, b.indices, b.values, self.coef,
                                 k.kind, k.degree, k.gamma, k.coef_lin, k.coef_const, out[lo:lo + rows.size])
        return out


def gram(kernel: Kernel, rows: Basis, basis: Basis) -> np.ndarray:
    """k(x_r, b_j) for every row r and basis vector j (n x m, float64): the dot products by one sparse or
    dense (BLAS) matrix product over the features the basis uses, then the kernel of each entry, in parallel.
    (Scores of svm_light's models use expansion_scores instead: the originals' order of additions.)"""
    dots = _dots(rows, basis)
    if kernel.kind not in COMPILED:  # a kernel of the table without a compiled twin
        return TYPES[kernel.kind].value(dots, squared_norms(rows)[:, None], squared_norms(basis)[None, :], kernel)
    work = dots.size * NS_PER_ENTRY * 1e-9
    with threads.for_work(work):
        apply_kernel(dots, squared_norms(rows), squared_norms(basis), kernel.kind, kernel.degree, kernel.gamma,
                     kernel.coef_lin, kernel.coef_const)
    return dots


NS_PER_ENTRY = 10.0  # one-thread cost of the kernel of one Gram matrix entry (an exp or a power)
DENSE_FILL = 0.2  # a matrix at least this full is multiplied dense (BLAS)


def _dots(rows: Basis, basis: Basis) -> np.ndarray:
    """rows . basis' (n x m) over the features the basis uses (the others add nothing)."""
    import scipy.sparse as sp

    used = np.unique(basis.indices)
    B = sp.csr_matrix((basis.values.astype(np.float64), np.searchsorted(used, basis.indices), basis.indptr),
                      shape=(basis.size, len(used)))
    at = np.minimum(np.searchsorted(used, rows.indices), max(len(used) - 1, 0))
    hit = used[at] == rows.indices if len(used) else np.zeros(len(rows.indices), dtype=bool)
    row_of = np.repeat(np.arange(rows.size), np.diff(rows.indptr))
    R = sp.csr_matrix((rows.values[hit].astype(np.float64), (row_of[hit], at[hit])), shape=(rows.size, len(used)))
    dense_B = B.nnz >= DENSE_FILL * max(B.shape[0] * B.shape[1], 1)
    dense_R = R.nnz >= DENSE_FILL * max(R.shape[0] * R.shape[1], 1)
    if dense_B:
        Bt = np.ascontiguousarray(B.toarray().T)
        return R.toarray() @ Bt if dense_R else np.asarray(R @ Bt)
    return np.asarray((R @ B.T).toarray())


def squared_norms(vectors: Basis) -> np.ndarray:
    """|v|^2 of every vector (double)."""
    row_of = np.repeat(np.arange(vectors.size), np.diff(vectors.indptr))
    return np.bincount(row_of, weights=vectors.values.astype(np.float64) ** 2, minlength=vectors.size)


@threads.parallel_kernel
def apply_kernel(dots, norm_rows, norm_basis, kind, degree, gamma, coef_lin, coef_const):
    """dots[r, j] = a.b becomes k(a, b) in place, rows in parallel."""
    for r in prange(dots.shape[0]):
        for j in range(dots.shape[1]):
            dots[r, j] = kernel_value(kind, degree, gamma, coef_lin, coef_const, dots[r, j], norm_rows[r],
                                      norm_basis[j])


@njit(cache=True)
def sparse_dot(ai, av, a0, a1, bi, bv, b0, b1):
    """svm_light's sprod_ss: the products of the shared features (float values) added in double, in index order."""
    total = 0.0
    p, q = a0, b0
    while p < a1 and q < b1:
        if ai[p] == bi[q]:
            total += np.float64(av[p]) * np.float64(bv[q])  # (numba keeps float32 under float())
            p += 1
            q += 1
        elif ai[p] < bi[q]:
            p += 1
        else:
            q += 1
    return total


@njit(cache=True)
def kernel_value(kind, degree, gamma, coef_lin, coef_const, dot, norm_a, norm_b):
    """k(a, b) from a.b and the squared norms (svm_light's kernel()): table.TYPES's svm_light rows, compiled."""
    if kind == POLYNOMIAL:
        return (coef_lin * dot + coef_const) ** float(degree)
    if kind == RBF:
        return np.exp(-gamma * (norm_a - 2.0 * dot + norm_b))
    return np.tanh(coef_lin * dot + coef_const)


@threads.parallel_kernel
def expansion_scores(x_ptr, x_idx, x_val, b_ptr, b_idx, b_val, coef, kind, degree, gamma, coef_lin, coef_const,
                     out):
    """out[r] = sum_j coef[j] k(b_j, x_r), rows in parallel (each row's sum in basis order)."""
    n_basis = coef.shape[0]
    basis_norms = np.empty(n_basis)
    for j in range(n_basis):
        basis_norms[j] = sparse_dot(b_idx, b_val, b_ptr[j], b_ptr[j + 1], b_idx, b_val, b_ptr[j], b_ptr[j + 1])
    for r in prange(out.shape[0]):
        x0, x1 = x_ptr[r], x_ptr[r + 1]
        norm_x = sparse_dot(x_idx, x_val, x0, x1, x_idx, x_val, x0, x1)
        total = 0.0
        for j in range(n_basis):
            dot = sparse_dot(b_idx, b_val, b_ptr[j], b_ptr[j + 1], x_idx, x_val, x0, x1)
            total += kernel_value(kind, degree, gamma, coef_lin, coef_const, dot, basis_norms[j], norm_x) * coef[j]
        out[r] = total

