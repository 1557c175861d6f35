"""svm_rank's pair counts and SVM-map's fast oracle against slower references on larger queries (both
oracles are checked against exhaustive enumeration in tests/test_loss_contract.py)."""
import numpy as np
import pytest

from svmstruct.losses import map_oracles, rank_oracles


def queries(max_n, seeds, labels=(0, 1, 2)):
    rng = np.random.default_rng(5)
    for n in range(1, max_n + 1):
        for _ in range(seeds):
            y = rng.choice(labels, size=n).astype(float)
            for s in (rng.normal(size=n) * 2, np.round(rng.normal(size=n)), np.zeros(n), np.arange(n) * 1.0):
                yield y, s



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



def test_query_label_ranks_equal_their_definitions():
    """Dense label ranks 1..L within each query, L, and the pairs of different labels (a quadratic loop); queries
    of one document, of one label and of ties included."""
    rng = np.random.default_rng(3)
    sizes = [1, 2, 5, 1, 40, 7, 3, 120]
    qptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, 4, size=int(qptr[-1])).astype(float)
    y[qptr[5]:qptr[6]] = 2.0  # one label only
    ranks, levels, pairs = rank_oracles.query_label_ranks(y, qptr)
    for q, (lo, hi) in enumerate(zip(qptr[:-1], qptr[1:])):
        labels = y[lo:hi]
        distinct = np.unique(labels)
        assert levels[q] == len(distinct)
        assert ranks[lo:hi].tolist() == (np.searchsorted(distinct, labels) + 1).tolist()
        assert pairs[q] == sum(1 for i in range(hi - lo) for j in range(i) if labels[i] != labels[j])


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

