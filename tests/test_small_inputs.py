"""Small inputs without numba: the numpy twins of the numba kernels give the kernels' results to the bit.

A training run on a small file never loads numba (its import and the kernels' cache cost ~0.45 s, more than
the whole run); it is the same run: each twin is checked against its kernel here on random inputs with
wide-ranging values, ties, zero coefficients and -0.0.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from svmstruct import sparse_kernels, sparse_ops

BITS = dict(deadline=None, database=None, max_examples=300)
VALUE = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5]), st.floats(-1e30, 1e30, allow_nan=False, allow_infinity=False).map(lambda v: float(np.float32(v))))


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


@st.composite
def dense_problem(draw):
    n = draw(st.integers(1, 12))
    m = draw(st.integers(1, 11))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    X = np.array(draw(st.lists(VALUE, min_size=n * m, max_size=n * m)), dtype=dtype).reshape(n, m)
    w = np.array(draw(st.lists(VALUE, min_size=m, max_size=m)), dtype=np.float64)
    coef = np.array(draw(st.lists(VALUE, min_size=n, max_size=n)), dtype=np.float64)
    return X, w, coef


@settings(**BITS)
@given(problem=dense_problem())
def test_the_dense_products_in_numpy_are_the_kernels_to_the_bit(problem):
    X, w, coef = problem
    with np.errstate(all="ignore"):
        out = np.empty(X.shape[0])
        sparse_kernels._dense_matvec(X, w, out)
        assert bits(sparse_ops._small_dense_matvec(X, w)) == bits(out)
        out = np.zeros(X.shape[1])
        sparse_kernels._dense_rmatvec(X, coef, out)
        assert bits(sparse_ops._small_dense_rmatvec(X, coef)) == bits(out)


def test_small_dense_matrices_are_multiplied_in_numpy_and_large_ones_by_the_kernels(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 46)).astype(np.float32)
    w, coef = rng.normal(size=46), rng.normal(size=300)
    small = sparse_ops.matvec(X, w), sparse_ops.rmatvec(X, coef)
    monkeypatch.setattr(sparse_ops, "SMALL", 0)
    large = sparse_ops.matvec(X, w), sparse_ops.rmatvec(X, coef)
    assert bits(small[0]) == bits(large[0]) and bits(small[1]) == bits(large[1])


@st.composite
def ranking_problem(draw):
    sizes = draw(st.lists(st.integers(0, 9), min_size=1, max_size=6))
    n = sum(sizes)
    grades = draw(st.sampled_from([[0.0], [0.0, 1.0], [0.0, 1.0, 2.0, 3.5], [-1.0, 0.0, -0.0, 2.0]]))
    y = np.array(draw(st.lists(st.sampled_from(grades), min_size=n, max_size=n)), dtype=np.float64)
    # scores on a grid of 0.5 make s_i - 1 = s_j ties; wide values make the subtraction round
    score = st.one_of(st.integers(-6, 6).map(lambda k: k / 2), st.floats(-1e17, 1e17, allow_nan=False))
    s = np.array(draw(st.lists(score, min_size=n, max_size=n)), dtype=np.float64)
    qptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return y, s, qptr


@settings(**BITS)
@given(problem=ranking_problem(), per_query_average=st.booleans(), padded=st.sampled_from([1, 50, 1 << 22]),
       by_level=st.booleans())
def test_the_pairs_oracle_in_numpy_is_the_kernels_to_the_bit(problem, per_query_average, padded, by_level):
    from svmstruct.losses import rank_numpy, rank_oracles

    y, s, qptr = problem
    labels = rank_oracles.query_label_ranks(y, qptr)
    twin = rank_numpy.query_label_ranks(y, qptr)
    for a, b in zip(labels, twin):
        assert a.tolist() == b.tolist()
    dcoef, delta = rank_oracles.pairs_most_violated(s, qptr, *labels, per_query_average)
    # level by level, or all pairs in batches of one query, a few, all
    kept = rank_numpy.PADDED, rank_numpy.LEVELS
    rank_numpy.PADDED, rank_numpy.LEVELS = padded, 16 if by_level else 0
    try:
        dcoef_twin, delta_twin = rank_numpy.PairsOracle(qptr, *labels, per_query_average)(s)
    finally:
        rank_numpy.PADDED, rank_numpy.LEVELS = kept
    assert bits(dcoef_twin) == bits(dcoef) and bits(np.array(delta_twin)) == bits(np.array(delta))
