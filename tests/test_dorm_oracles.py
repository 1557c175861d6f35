"""DORM's oracles: the truncated dynamic program against the assignment on larger queries, and the helpers
of the latent target (the oracles against every permutation: tests/test_loss_contract.py)."""

import subprocess
import sys

import numpy as np
import pytest

from svmstruct.losses import dorm, dorm_oracles, mrr_oracles


def random_query(rng, l, grades=3, ties=False):
    labels = rng.integers(0, grades, size=l).astype(float)
    g = rng.normal(size=l) * rng.choice([0.1, 1.0, 10.0])
    if ties:
        g = np.round(g)
    return labels, g


@pytest.mark.slow
def test_truncated_oracle_equals_the_assignment_on_1000_random_queries():
    """On 1000 random queries where training runs the truncated program (dorm.oracle_plan: its table is cheaper than
    the assignment; a query of mwta whose top grade holds 100 documents is not one, and its table took 43 s here)."""
    rng = np.random.default_rng(2)
    trial = compared = 0
    while compared < 1000:
        trial += 1
        l = int(rng.integers(20, 301)) if trial <= 100 else int(rng.integers(20, 60))
        labels, g = random_query(rng, l, grades=int(rng.integers(2, 6)), ties=trial % 3 == 0)
        loss_name = ["ndcg@k", "precision@k", "wta", "mwta", "dcg@k"][trial % 5]
        k = int(rng.choice([1, 3, 5, 10]))
        a, b = dorm.measure_vectors(loss_name, labels, {"k": k, "eru_alpha": 3.0})
        c = dorm.position_weights(["pow:0.5", "log", "pow:2"][trial % 3], l)
        if dorm.oracle_plan(a, b) != dorm.cutoff(a):
            continue
        compared += 1
        fast = dorm_oracles.truncated_oracle(g, a, b, b, c, dorm.cutoff(a))
        exact = dorm_oracles.assignment_oracle(g, a, b, c)
        assert dorm_oracles.ranking_value(fast, g, a, b, c) == pytest.approx(
            dorm_oracles.ranking_value(exact, g, a, b, c), rel=1e-9, abs=1e-9)


def test_ideal_coefficients_sort_by_grade_then_score_and_share_ties():
    c = dorm.position_weights("pow:0.5", 5)
    labels = np.array([0.0, 2.0, 0.0, 2.0, 1.0])
    scores = np.array([1.0, 0.0, 3.0, 5.0, 9.0])
    # ideal order: doc 3 (2, score 5), doc 1 (2, score 0), doc 4 (1), doc 2 (0, score 3), doc 0
    assert dorm_oracles.ideal_coefficients(labels, scores, c) == pytest.approx(c[[4, 1, 3, 0, 2]])
    # at w = 0 every grade gets the mean c of its block of positions
    t0 = dorm_oracles.ideal_coefficients(labels, np.zeros(5), c)
    assert t0 == pytest.approx([c[3:].mean(), c[:2].mean(), c[3:].mean(), c[:2].mean(), c[2]])


def test_tie_average_is_the_mean_over_documents_equal_in_both_keys():
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    key1 = np.array([0.0, 1.0, 0.0, 1.0, 0.0])
    key2 = np.array([7.0, 7.0, 7.0, 7.0, 8.0])
    assert dorm_oracles.tie_average(values, key1, key2) == pytest.approx([2.0, 3.0, 2.0, 3.0, 5.0])


def test_the_measure_map_sort_equals_the_assignment_with_c_equal_to_a():
    """With Psi's c equal to the measure's a (the default map) the most violated ranking is a sort by
    score - b: its value equals the linear assignment's on random queries, ties included."""
    rng = np.random.default_rng(7)
    for trial in range(300):
        l = int(rng.integers(2, 80))
        labels, g = random_query(rng, l, grades=int(rng.integers(2, 6)), ties=trial % 3 == 0)
        loss_name = ["ndcg@k", "precision@k", "wta", "mwta", "dcg@k", "eru"][trial % 6]
        a, b = dorm.measure_vectors(loss_name, labels, {"k": int(rng.choice([1, 3, 10])), "eru_alpha": 3.0})
        c, plan = dorm.query_map(loss_name, dorm.MEASURE_MAP, a, b)
        assert plan == dorm_oracles.SORT_PLAN and np.array_equal(c, a)
        pos = dorm_oracles.sort_positions(g, b)
        exact = dorm_oracles.assignment_oracle(g, a, b, c)
        assert sorted(pos) == list(range(l))
        assert dorm_oracles.ranking_value(pos, g, a, b, c) == pytest.approx(
            dorm_oracles.ranking_value(exact, g, a, b, c), rel=1e-9, abs=1e-9)


def first_relevant_value(pos, g, relevant):
    """1 - 1/p + Psi(pi).g of a ranking under mrr's first-relevant map, written from the definition."""
    p = 1 + int(pos[relevant].min())
    return 1.0 - 1.0 / p + float(dorm.first_relevant_map(pos, relevant) @ g)


@pytest.mark.slow
def test_the_first_relevant_oracle_attains_the_best_of_every_ranking():
    """mrr's own map: the oracle's output is as good as the best of all l! rankings (l <= 7), with graded
    scores, tied scores and one or several relevant documents."""
    import itertools

    rng = np.random.default_rng(11)
    for trial in range(150):
        l = int(rng.integers(2, 8))
        relevant = rng.random(l) < rng.choice([0.2, 0.5, 0.8])
        if not relevant.any() or relevant.all():
            continue
        g = rng.normal(size=l) * rng.choice([0.3, 1.0, 3.0])
        if trial % 3 == 0:
            g = np.round(g)
        coef, p = mrr_oracles.mrr_first_oracle(g, relevant)
        value = 1.0 - 1.0 / p + float(coef @ g)
        best = max(first_relevant_value(np.array(perm), g, relevant) for perm in itertools.permutations(range(l)))
        assert value == pytest.approx(best, rel=1e-12, abs=1e-12)
        assert coef.sum() == pytest.approx(1.0)  # the weights of the first-relevant map sum to 1


def test_the_first_relevant_target_is_the_best_relevant_document_sharing_ties():
    b = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    g = np.array([9.0, 2.0, 5.0, 7.0, 5.0])
    plan = dorm_oracles.MRR_FIRST_PLAN
    assert dorm_oracles.target_coefficients(b, g, np.zeros(5), plan) == pytest.approx([0, 0, 0.5, 0, 0.5])
    assert dorm_oracles.target_coefficients(b, np.zeros(5), np.zeros(5), plan) == pytest.approx([0, 1 / 3, 1 / 3, 0,
                                                                                                    1 / 3])


@pytest.mark.slow
def test_the_truncated_program_stores_only_the_states_it_reaches():
    """Five grades of 60 documents each and a cut-off of 30: C(35, 5) = 324,632 states are reachable (at most 30
    documents placed), against 31^5 = 28.6M in the full mixed-radix table (458 MB for its values and choices,
    what the program allocated before): its memory grows by far less."""
    code = """if True:
        import resource, numpy as np
        from svmstruct.losses import dorm_oracles
        rng = np.random.default_rng(0)
        b = np.repeat(np.arange(5.0), 60)
        g, a, c = rng.normal(size=300), np.zeros(300), np.linspace(1.0, 0.1, 300)
        a[:30] = 1.0 / np.log2(np.arange(2, 32))
        few = b[::30].copy()
        dorm_oracles.truncated_oracle(g[:10], a[:10], few, few, c[:10], 3)  # loaded, not measured
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        dorm_oracles.truncated_oracle(g, a, b, b, c, 30)
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
    """
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert float(run.stdout) < 80, f"{float(run.stdout):.0f} MB"
