"""The error-rate and ROCArea oracles against brute-force enumeration of every labeling (Joachims 2005)."""
import itertools

import numpy as np
import pytest

from svmstruct.losses.perf_oracles import errorrate_most_violated, rocarea_most_violated


def errorrate_brute_force(y, s):
    """max over ybar in {-1,+1}^n of Delta + w.Psi(ybar) - w.Psi(y), Psi = sum (50/N) ybar_i x_i."""
    n = len(y)
    best = -np.inf
    for ybar in itertools.product([-1.0, 1.0], repeat=n):
        ybar = np.array(ybar)
        delta = 100.0 * np.sum(ybar != y) / n
        best = max(best, delta + (50.0 / n) * np.dot(ybar - y, s))
    return best


def rocarea_brute_force(y, s):
    """max over pair labelings ybar_ij in {-1,+1} of Delta + w.Psi(ybar) - w.Psi(y),
    Psi = (50/(P N)) sum_ij ybar_ij (x_i - x_j), Delta = 100 #(ybar_ij = -1) / (P N)."""
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    if len(pos) == 0 or len(neg) == 0:
        return 0.0
    pairs = [(i, j) for i in pos for j in neg]
    unit = 100.0 / len(pairs)
    best = -np.inf
    for labels in itertools.product([-1.0, 1.0], repeat=len(pairs)):
        value = 0.0
        for (i, j), l in zip(pairs, labels):
            value += unit * (l < 0) + (unit / 2) * (l - 1.0) * (s[i] - s[j])
        best = max(best, value)
    return best


def oracle_value(kernel, y, s):
    """Delta + w.Psi(ybar) - w.Psi(y) of the oracle's answer, from its own dcoef = Psi(y) - Psi(ybar)."""
    dcoef, delta = kernel(y, s)
    return delta - float(np.dot(dcoef, s))


def cases(max_n, seeds):
    rng = np.random.default_rng(1)
    for n in range(1, max_n + 1):
        for _ in range(seeds):
            y = rng.choice([-1.0, 1.0], size=n)
            for s in (rng.normal(size=n) * 2, np.round(rng.normal(size=n) * 2) / 2, np.zeros(n), np.ones(n)):
                yield y, s
        yield np.ones(n), rng.normal(size=n)
        yield -np.ones(n), rng.normal(size=n)


@pytest.mark.parametrize("y, s", list(cases(8, 6)))
def test_errorrate_oracle_equals_brute_force(y, s):
    assert oracle_value(errorrate_most_violated, y, s) == pytest.approx(errorrate_brute_force(y, s), abs=1e-9)


@pytest.mark.parametrize("y, s", [c for c in cases(6, 4) if np.sum(c[0] > 0) * np.sum(c[0] < 0) <= 9])
def test_rocarea_oracle_equals_brute_force(y, s):
    assert oracle_value(rocarea_most_violated, y, s) == pytest.approx(rocarea_brute_force(y, s), abs=1e-9)


def test_rocarea_counts_margin_ties_as_not_swapped():
    # s_pos - s_neg == 1 exactly: hinge 0, the pair is not swapped and contributes nothing
    dcoef, delta = rocarea_most_violated(np.array([1.0, -1.0]), np.array([1.0, 0.0]))
    assert delta == 0.0 and not dcoef.any()


def test_rocarea_dcoef_counts_swaps_per_document():
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0])
    s = np.array([3.0, 0.0, 0.5, -2.0, 2.5])
    dcoef, delta = rocarea_most_violated(y, s)
    unit = 100.0 / 6
    # positive 0 (s=3): swapped with neg s=2.5 only; positive 1 (s=0): with 0.5 and 2.5 (and not -2)
    np.testing.assert_allclose(dcoef, [unit, 2 * unit, -unit, 0.0, -2 * unit])
    assert delta == pytest.approx(3 * unit)
