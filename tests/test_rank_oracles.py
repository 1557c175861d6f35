"""svm_rank's pairwise oracle and SVM-map's oracle against exhaustive enumeration."""
import itertools

import numpy as np
import pytest

from svmstruct.losses import map_oracles, rank_oracles


def pair_list(y):
    return [(i, j) for i in range(len(y)) for j in range(len(y)) if y[i] > y[j]]


def pairs_brute_force(y, s, scale):
    """max over every labeling of the pairs of Delta + w.Psi(ybar) - w.Psi(y), all 2^pairs labelings
    enumerated at once (a 7-document query with graded labels has up to 21 pairs: 2 million rows)."""
    pairs = pair_list(y)
    if not pairs:
        return 0.0
    m = len(pairs)
    swapped = (np.arange(2 ** m)[:, None] >> np.arange(m)[None, :]) & 1  # 1 = the pair is swapped
    per_pair = np.array([scale * (1 - (s[i] - s[j])) for i, j in pairs])  # its gain when swapped
    return float((swapped * per_pair).sum(axis=1).max())


def queries(max_n, seeds, labels=(0, 1, 2)):
    rng = np.random.default_rng(5)
    for n in range(1, max_n + 1):
        for _ in range(seeds):
            y = rng.choice(labels, size=n).astype(float)
            for s in (rng.normal(size=n) * 2, np.round(rng.normal(size=n)), np.zeros(n), np.arange(n) * 1.0):
                yield y, s


@pytest.mark.parametrize("average", [False, True])
def test_pairs_oracle_equals_exhaustive_search(average):
    checked = 0
    for y, s in queries(7, 4):
        pairs = rank_oracles.count_pairs(y)
        assert pairs == len(pair_list(y))
        qptr = np.array([0, len(y)])
        dcoef, delta = rank_oracles.pairs_most_violated(y, s, qptr, average)
        scale = 1.0 / pairs if (average and pairs) else 1.0
        assert delta - float(dcoef @ s) == pytest.approx(pairs_brute_force(y, s, scale), abs=1e-9)
        checked += 1
    assert checked > 100


def test_pair_counts_equal_a_quadratic_loop_on_larger_queries():
    rng = np.random.default_rng(11)
    for _ in range(30):
        n = int(rng.integers(2, 200))
        y = rng.integers(0, 5, size=n).astype(float)
        s = np.round(rng.normal(size=n) * 3, 1)
        above, below = rank_oracles.swapped_pair_counts(y, s)
        for i in range(n):
            assert above[i] == sum(1 for j in range(n) if y[j] < y[i] and s[i] - 1 < s[j])
            assert below[i] == sum(1 for j in range(n) if y[j] > y[i] and s[j] - 1 < s[i])


def test_several_queries_sum_and_queries_without_pairs_contribute_nothing():
    y = np.array([1.0, 0.0, 2.0, 2.0, 2.0, 0.0, 1.0])
    s = np.array([0.1, 0.3, 0.0, 1.0, 2.0, 0.5, 0.4])
    qptr = np.array([0, 2, 5, 7])
    dcoef, delta = rank_oracles.pairs_most_violated(y, s, qptr, False)
    assert not dcoef[2:5].any()
    first = rank_oracles.pairs_most_violated(y[:2], s[:2], np.array([0, 2]), False)
    last = rank_oracles.pairs_most_violated(y[5:], s[5:], np.array([0, 2]), False)
    assert delta == first[1] + last[1]
    assert np.isfinite(dcoef).all()


def map_brute_force(y, s):
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    scale = 1.0 / (len(pos) * len(neg))
    perfect = sum(s[i] - s[j] for i in pos for j in neg)
    best = -np.inf
    for order in itertools.permutations(range(len(y))):
        where = {d: r for r, d in enumerate(order)}
        hits, ap = 0, 0.0
        for r, d in enumerate(order, 1):
            if y[d] > 0:
                hits += 1
                ap += hits / r
        psi = sum((1 if where[i] < where[j] else -1) * (s[i] - s[j]) for i in pos for j in neg)
        best = max(best, 1 - ap / len(pos) + scale * (psi - perfect))
    return best


def test_map_oracle_equals_exhaustive_search_over_rankings():
    checked = 0
    for y, s in queries(7, 3, labels=(-1, 1)):
        P, N = int(np.sum(y > 0)), int(np.sum(y < 0))
        dcoef, delta = map_oracles.map_most_violated(y, s * 5, np.array([0, len(y)]))
        if P == 0 or N == 0:
            assert delta == 0 and not dcoef.any()
            continue
        assert delta - float(dcoef @ (s * 5)) == pytest.approx(map_brute_force(y, s * 5), abs=1e-9)
        checked += 1
    assert checked > 30


def test_fast_map_oracle_equals_algorithm_2_on_large_random_queries():
    rng = np.random.default_rng(8)
    for trial in range(300):
        n = int(rng.integers(2, 400))
        y = np.where(rng.random(n) < rng.uniform(0.05, 0.6), 1.0, -1.0)
        s = rng.normal(size=n) * rng.choice([0.01, 1.0, 30.0])
        if trial % 3 == 0:
            s = np.round(s, 1)  # ties
        if np.all(y > 0) or np.all(y < 0):
            continue
        P, N = int(np.sum(y > 0)), int(np.sum(y < 0))
        for scales in ((1.0, 1.0 / (P * N)), (100.0, 1.0)):
            d1, l1 = map_oracles.average_precision_most_violated(y, s, *scales)
            d2, l2 = map_oracles.average_precision_most_violated_fast(y, s, *scales)
            assert l2 - d2 @ s == pytest.approx(l1 - d1 @ s, abs=1e-9 * max(1.0, abs(l1 - d1 @ s)))


def test_fast_map_oracle_equals_exhaustive_search():
    for y, s in queries(7, 3, labels=(-1, 1)):
        if np.all(y > 0) or np.all(y < 0):
            continue
        P, N = int(np.sum(y > 0)), int(np.sum(y < 0))
        dcoef, delta = map_oracles.average_precision_most_violated_fast(y, s * 5, 1.0, 1.0 / (P * N))
        assert delta - float(dcoef @ (s * 5)) == pytest.approx(map_brute_force(y, s * 5), abs=1e-9)
