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


from svmstruct.losses import perf_oracles as po  # noqa: E402


def contingency_brute_force(y, s, code, k, beta):
    """max over every labeling with Delta > 0 (and svm_perf's restriction for PRBEP/Prec@k/Rec@k)."""
    n = len(y)
    npos = int(np.sum(y > 0))
    best = None
    for ybar in itertools.product([-1.0, 1.0], repeat=n):
        ybar = np.array(ybar)
        a = int(np.sum((y > 0) & (ybar > 0)))
        b = int(np.sum((y < 0) & (ybar > 0)))
        if code == po.PRBEP and a + b != npos:
            continue
        if code == po.PREC_K and a + b < k:
            continue
        if code == po.REC_K and a + b > k:
            continue
        delta = po.contingency_loss(code, a, b, npos, beta)
        if delta <= 0:
            continue
        value = delta + (50.0 / n) * np.dot(ybar - y, s)
        best = value if best is None else max(best, value)
    return best


CODES = [(po.ZEROONE, 0, 1.0), (po.FBETA, 0, 1.0), (po.FBETA, 0, 2.0), (po.FBETA, 0, 0.5), (po.PRBEP, 0, 1.0),
         (po.PREC_K, 1, 1.0), (po.PREC_K, 2, 1.0), (po.PREC_K, 4, 1.0), (po.REC_K, 1, 1.0), (po.REC_K, 3, 1.0)]


@pytest.mark.parametrize("code, k, beta", CODES)
def test_contingency_oracles_equal_brute_force(code, k, beta):
    for y, s in cases(8, 3):
        dcoef, delta = po.contingency_most_violated(y, s, code, k, beta)
        expected = contingency_brute_force(y, s, code, k, beta)
        if expected is None:
            assert delta == 0.0 and not dcoef.any()
            continue
        assert delta - float(np.dot(dcoef, s)) == pytest.approx(expected, abs=1e-9), (y, s)
        # dcoef encodes a labeling whose own table gives this Delta
        flipped = dcoef != 0
        a = int(np.sum((y > 0) & ~flipped))
        b = int(np.sum((y < 0) & flipped))
        assert delta == pytest.approx(po.contingency_loss(code, a, b, int(np.sum(y > 0)), beta))


def average_precision_of(order, y):
    hits, total = 0, 0.0
    for r, i in enumerate(order, 1):
        if y[i] > 0:
            hits += 1
            total += hits / r
    return total / hits


def avgprec_brute_force(y, s, loss_scale, psi_scale):
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    perfect = sum(s[i] - s[j] for i in pos for j in neg)
    best = -np.inf
    for order in itertools.permutations(range(len(y))):
        where = {d: r for r, d in enumerate(order)}
        psi = sum((1 if where[i] < where[j] else -1) * (s[i] - s[j]) for i in pos for j in neg)
        value = loss_scale * (1 - average_precision_of(order, y)) + psi_scale * (psi - perfect)
        best = max(best, value)
    return best


@pytest.mark.parametrize("scales", [(100.0, 1.0), (1.0, None)])
@pytest.mark.parametrize("oracle", ["average_precision_most_violated", "average_precision_most_violated_fast"])
def test_average_precision_oracle_equals_brute_force(scales, oracle):
    from svmstruct.losses import map_oracles

    kernel = getattr(map_oracles, oracle)
    for y, s in cases(7, 2):
        P, N = int(np.sum(y > 0)), int(np.sum(y < 0))
        if P == 0 or N == 0:
            dcoef, delta = kernel(y, s, 1.0, 1.0)
            assert delta == 0.0 and not dcoef.any()
            continue
        loss_scale, psi_scale = scales[0], scales[1] if scales[1] is not None else 1.0 / (P * N)
        dcoef, delta = kernel(y, s, loss_scale, psi_scale)
        expected = avgprec_brute_force(y, s, loss_scale, psi_scale)
        assert delta - float(np.dot(dcoef, s)) == pytest.approx(expected, abs=1e-9), (y, s)
