"""svm_light's kernels (`-t 1|2|3`) and the scores of a kernel expansion, with the originals' float handling.

    1 polynomial  (s a.b + r)^d        2 RBF  exp(-g |a - b|^2)        3 sigmoid  tanh(s a.b + r)

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

import numpy as np
from numba import njit, prange

from svmstruct import threads

POLYNOMIAL, RBF, SIGMOID = 1, 2, 3
NAMES = {POLYNOMIAL: "polynomial", RBF: "rbf", SIGMOID: "sigmoid"}
NS_PER_PRODUCT = 2.0  # one-thread cost of a feature pair in a sparse dot product (threads.for_work)


@dataclass
class KernelExpansion:
    """sum_j coef[j] k(basis_j, x): the basis as CSR arrays over 0-based feature ids, values float32."""
    kind: int
    degree: int  # -d
    gamma: float  # -g
    coef_lin: float  # -s
    coef_const: float  # -r
    indptr: np.ndarray  # int64, len = basis size + 1
    indices: np.ndarray  # int32, increasing within a row
    values: np.ndarray  # float32
    coef: np.ndarray  # float64 (alpha * y of svm_light's SV lines)

    @property
    def size(self) -> int:
        return len(self.coef)

    def scores(self, X) -> np.ndarray:
        """sum_j coef_j k(b_j, x) for every row x of a CSR matrix or dense array (threshold not subtracted)."""
        import scipy.sparse as sp

        X = sp.csr_matrix(X)
        values = X.data.astype(np.float32)  # the originals read feature values as float
        out = np.empty(X.shape[0])
        work = (X.nnz * self.size + X.shape[0] * len(self.values)) * NS_PER_PRODUCT * 1e-9
        with threads.for_work(work):
            expansion_scores(X.indptr.astype(np.int64), X.indices.astype(np.int32), values, self.indptr, self.indices,
                             self.values, self.coef, self.kind, self.degree, self.gamma, self.coef_lin,
                             self.coef_const, out)
        return out


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
    """k(a, b) from a.b and the squared norms (svm_light's kernel())."""
    if kind == POLYNOMIAL:
        return (coef_lin * dot + coef_const) ** float(degree)
    if kind == RBF:
        return np.exp(-gamma * (norm_a - 2.0 * dot + norm_b))
    return np.tanh(coef_lin * dot + coef_const)


@njit(cache=True, parallel=True)
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
