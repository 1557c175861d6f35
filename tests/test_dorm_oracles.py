"""DORM's oracles: the assignment and the truncated dynamic program against all permutations, and
against each other on larger queries."""
import itertools

import numpy as np
import pytest

from svmstruct.losses import dorm, dorm_oracles


def brute_force(g, a, b, c):
    return max(sum(c[p] * gi - a[p] * bi for p, gi, bi in zip(perm, g, b))
               for perm in itertools.permutations(range(len(g))))


def random_query(rng, l, grades=3, ties=False):
    labels = rng.integers(0, grades, size=l).astype(float)
    g = rng.normal(size=l) * rng.choice([0.1, 1.0, 10.0])
    if ties:
        g = np.round(g)
    return labels, g


@pytest.mark.parametrize("loss_name", ["ndcg@k", "dcg@k", "precision@k", "mrr", "wta", "mwta", "eru"])
def test_oracles_equal_the_best_permutation(loss_name):
    rng = np.random.default_rng(1)
    for trial in range(60):
        l = int(rng.integers(1, 8))
        labels, g = random_query(rng, l, grades=int(rng.integers(2, 5)), ties=trial % 2 == 0)
        k = int(rng.integers(1, 6))
        a, b = dorm.measure_vectors(loss_name, labels, k, alpha=3.0, neutral=0.0, threshold=0.0)
        c = dorm.position_weights("pow:0.5", l)
        best = brute_force(g, a, b, c)
        pos = dorm_oracles.assignment_oracle(g, a, b, c)
        assert sorted(pos) == list(range(l))
        assert dorm_oracles.ranking_value(pos, g, a, b, c) == pytest.approx(best, abs=1e-9)
        if loss_name != "eru":
            pos = dorm_oracles.truncated_oracle(g, a, b, c, dorm.cutoff(a))
            assert sorted(pos) == list(range(l))
            assert dorm_oracles.ranking_value(pos, g, a, b, c) == pytest.approx(best, abs=1e-9)


def test_truncated_oracle_equals_the_assignment_on_1000_random_queries():
    rng = np.random.default_rng(2)
    for trial in range(1000):
        l = int(rng.integers(20, 301)) if trial < 100 else int(rng.integers(20, 60))
        labels, g = random_query(rng, l, grades=int(rng.integers(2, 6)), ties=trial % 3 == 0)
        loss_name = ["ndcg@k", "precision@k", "wta", "mrr", "dcg@k"][trial % 5]
        k = int(rng.choice([1, 3, 5, 10]))
        a, b = dorm.measure_vectors(loss_name, labels, k, alpha=3.0, neutral=0.0, threshold=0.0)
        c = dorm.position_weights(["pow:0.5", "log", "pow:2"][trial % 3], l)
        fast = dorm_oracles.truncated_oracle(g, a, b, c, dorm.cutoff(a))
        exact = dorm_oracles.assignment_oracle(g, a, b, c)
        assert dorm_oracles.ranking_value(fast, g, a, b, c) == pytest.approx(
            dorm_oracles.ranking_value(exact, g, a, b, c), rel=1e-9, abs=1e-9)
