"""The numba linear assignment against all permutations, against scipy's linear_sum_assignment, and
DORM's eq. 24 positions against dorm_oracles.assignment_oracle. Also run with NUMBA_DISABLE_JIT=1
(plain Python kernels): the scipy comparisons then use smaller matrices."""
import itertools

import numba
import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from svmstruct.losses import dorm, dorm_oracles
from svmstruct.losses.assignment import assignment_positions, max_weight_assignment

JIT = not numba.config.DISABLE_JIT
MAX_N = 200 if JIT else 50  # plain Python is far slower


def value(C, cols):
    return C[np.arange(C.shape[0]), cols].sum()


def brute_force(C):
    n = C.shape[0]
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64).reshape(-1, n)
    return C[np.arange(n), perms].sum(axis=1).max()


def check_permutation(cols, n):
    assert cols.dtype == np.int64
    assert cols.shape == (n,)
    assert sorted(cols.tolist()) == list(range(n))


def brute_force_cases(rng):
    for n in range(1, 8):
        for _ in range(12):
            yield "normal", rng.normal(size=(n, n)) * rng.choice([0.01, 1.0, 100.0])
            yield "integer ties", rng.integers(-2, 3, size=(n, n)).astype(float)
            yield "binary", rng.integers(0, 2, size=(n, n)).astype(float)
            mixed = rng.normal(size=(n, n)) * rng.choice([1e6, 1e-6, 1.0], size=(n, n))
            yield "mixed magnitudes", mixed
        yield "constant", np.full((n, n), rng.normal())
        yield "zeros", np.zeros((n, n))
        g, b = np.round(rng.normal(size=n)), rng.integers(0, 3, size=n).astype(float)
        c, a = (np.arange(n) + 2.0) ** -0.5, 1.0 / np.log2(np.arange(n) + 2)
        yield "dorm rank 2", np.outer(g, c) - np.outer(b, a)
        yield "rank 1", np.outer(np.round(rng.normal(size=n)), np.round(rng.normal(size=n)))


def test_empty_and_single():
    check_permutation(max_weight_assignment(np.zeros((0, 0))), 0)
    assert max_weight_assignment(np.array([[-3.5]])).tolist() == [0]
    empty = np.zeros(0)
    check_permutation(assignment_positions(empty, empty, empty, empty), 0)


def test_equals_the_best_permutation_for_n_up_to_7():
    rng = np.random.default_rng(0)
    count = 0
    for kind, C in brute_force_cases(rng):
        n = C.shape[0]
        cols = max_weight_assignment(C)
        check_permutation(cols, n)
        best = brute_force(C)
        if kind in ("integer ties", "binary", "zeros", "rank 1"):  # sums of small integers are exact
            assert value(C, cols) == best, (kind, C)
        else:
            assert value(C, cols) == pytest.approx(best, rel=1e-12, abs=1e-300), (kind, C)
        count += 1
    assert count == 7 * 52


def test_ties_go_to_the_lowest_index_and_repeat():
    """Constant matrices: every row takes the first free column, so the identity."""
    for n in (1, 2, 5, 17):
        assert max_weight_assignment(np.full((n, n), 2.5)).tolist() == list(range(n))
    rng = np.random.default_rng(1)
    C = rng.integers(0, 2, size=(30, 30)).astype(float)
    assert max_weight_assignment(C).tolist() == max_weight_assignment(C.copy()).tolist()


def scipy_cases(rng):
    for trial in range(320):
        n = int(rng.integers(1, MAX_N + 1)) if trial % 4 else int(rng.integers(1, 12))
        kind = trial % 8
        if kind == 0:
            C = rng.normal(size=(n, n))
        elif kind == 1:
            C = rng.uniform(-1e3, 1e3, size=(n, n))
        elif kind == 2:
            C = rng.integers(0, 4, size=(n, n)).astype(float)
        elif kind == 3:
            C = rng.normal(size=(n, n)) * rng.choice([1e6, 1e-6], size=(n, n))
        elif kind == 4:
            C = np.outer(rng.normal(size=n), rng.normal(size=n))
        else:  # DORM: outer(g, c) - outer(b, a) with tied g and b
            g = rng.normal(size=n)
            if kind != 5:
                g = np.round(g * rng.choice([1.0, 3.0]))
            if kind == 7:
                g[:] = g[0]
            b = rng.integers(0, 3, size=n).astype(float)
            c = (np.arange(n) + 2.0) ** -rng.choice([0.5, 1.0])
            a = np.zeros(n)
            top = min(n, int(rng.choice([1, 3, 10, n])))
            a[:top] = 1.0 / np.log2(np.arange(top) + 2)
            C = np.outer(g, c) - np.outer(b, a)
        yield C


def test_equals_scipy_on_320_matrices():
    rng = np.random.default_rng(2)
    count = 0
    for C in scipy_cases(rng):
        n = C.shape[0]
        cols = max_weight_assignment(C)
        check_permutation(cols, n)
        rows, ref = linear_sum_assignment(C, maximize=True)
        assert value(C, cols) == pytest.approx(C[rows, ref].sum(), rel=1e-12, abs=1e-300), C
        count += 1
    assert count == 320


def random_query(rng, l):
    labels = rng.integers(0, int(rng.integers(2, 6)), size=l).astype(float)
    g = rng.normal(size=l) * rng.choice([0.1, 1.0, 10.0])
    if rng.random() < 0.5:
        g = np.round(g)
    return labels, g


def test_assignment_positions_equal_the_scipy_oracle():
    rng = np.random.default_rng(3)
    losses = ["ndcg@k", "dcg@k", "precision@k", "wta", "mwta", "eru"]
    for trial in range(240):
        l = int(rng.integers(1, 8)) if trial % 2 else int(rng.integers(8, MAX_N + 1))
        labels, g = random_query(rng, l)
        a, b = dorm.measure_vectors(losses[trial % 6], labels, {"k": int(rng.choice([1, 3, 10])),
                                                                  "eru_alpha": 3.0})
        c = dorm.position_weights(["pow:0.5", "log", "pow:2"][trial % 3], l)
        pos = assignment_positions(g, a, b, c)
        check_permutation(pos, l)
        ref = dorm_oracles.assignment_oracle(g, a, b, c)
        expected = dorm_oracles.ranking_value(ref, g, a, b, c)
        assert dorm_oracles.ranking_value(pos, g, a, b, c) == pytest.approx(expected, rel=1e-12, abs=1e-12)
        if l < 8:
            assert value(np.outer(g, c) - np.outer(b, a), pos) == pytest.approx(
                brute_force(np.outer(g, c) - np.outer(b, a)), rel=1e-12, abs=1e-12)
