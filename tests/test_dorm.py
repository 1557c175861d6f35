"""DORM training: measure vectors, position weights, skipped queries, and that training helps."""
from pathlib import Path

import numpy as np
import pytest

from svmstruct import api, model, registry, training
from svmstruct.dataset import arrays, ranking
from svmstruct.errors import InputError
from svmstruct.evaluation import listwise as listwise_measures
from svmstruct.evaluation import measures
from svmstruct.io import data
from svmstruct.losses import dorm
from svmstruct.train import loop
from svmstruct.train.problem import TrainingSummary

SMALL = Path(__file__).resolve().parents[1] / "data" / "mq2008-small"


def test_ndcg_vectors_reproduce_the_measure():
    rng = np.random.default_rng(0)
    for _ in range(50):
        labels = rng.integers(0, 3, size=int(rng.integers(2, 30))).astype(float)
        if labels.max() == 0:
            continue
        scores = rng.normal(size=len(labels))
        a, b = dorm.measure_vectors("ndcg@k", labels, {"k": 10})
        pos = np.argsort(np.argsort(-scores, kind="mergesort"), kind="mergesort")
        expected = measures.per_query(measures.lookup("ndcg@10"), labels, scores, np.array([0, len(labels)]),
                                      [f"d{i}" for i in range(len(labels))])[0]
        assert float(a[pos] @ b) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("measure", [m for m in listwise_measures.MEASURES if m.loss is not None],
                         ids=lambda m: m.name)
def test_every_listwise_loss_is_its_eval_measure(measure):
    """One definition: for every listwise measure that names a DORM loss, <a(pi), b> of the loss's vectors is eval's
    value of the measure the loss selects C by (at the options' default and example values, ties included)."""
    rng = np.random.default_rng(1)
    loss, _ = api.resolve_loss(measure.loss.name)
    variants = [{}] + [{o.name: v} for o in loss.options if o.name in ("k", "rel_threshold", "eru_alpha",
                                                                        "eru_neutral") for v in o.examples]
    for trial in range(60):
        labels = rng.integers(0, 4, size=int(rng.integers(1, 25))).astype(float)
        scores = rng.integers(0, 5, size=len(labels)).astype(float)
        _, opts = api.resolve_loss(measure.loss.name, variants[trial % len(variants)])
        a, b = dorm.measure_vectors(measure.loss.name, labels, opts)
        docids = [f"d{i}" for i in range(len(labels))]
        order = ranking.trec_order(scores, docids)
        pos = np.empty(len(labels), dtype=np.int64)
        pos[order] = np.arange(len(labels))
        named = measure.printed_name(dorm.settings(measure, opts))
        expected = measures.per_query(measures.lookup(named), labels, scores, np.array([0, len(labels)]), docids,
                                      opts.get("rel_threshold") or 0.0)[0]
        assert float(a[pos] @ b) == pytest.approx(expected, abs=1e-12), (named, labels, scores)


def test_position_weights_decrease_and_bad_specs_are_errors():
    for spec in ("pow:0.25", "pow:2", "log", "loglog"):
        c = dorm.position_weights(spec, 50)
        assert np.all(c > 0) and np.all(np.diff(c) < 0)
    for spec in ("pow:-1", "pow:x", "cubic"):
        with pytest.raises(InputError):
            dorm.position_weights(spec, 5)


def test_mwta_cutoff_follows_the_paper():
    assert listwise_measures.mwta_cutoff(np.array([2.0, 1.0, 0.0, 0.0])) == 3
    assert listwise_measures.mwta_cutoff(np.array([0.0, 1.0, 1.0, 1.0, 1.0, 0.0])) == 5  # four 1s, then one 0


@pytest.mark.parametrize("name", ["ndcg@10", "wta", "mrr", "precision@5", "mwta", "eru", "dcg@10"])
def test_training_converges_and_skips_flat_queries(name):
    train_set = data.read_svmlight(str(SMALL / "train.txt"))
    loss, opts = api.resolve_loss(name)
    problem = loss.build(train_set, opts)
    flat = sum(1 for lo, hi in zip(train_set.qptr[:-1], train_set.qptr[1:])
               if np.all(train_set.y[lo:hi] == train_set.y[lo]))
    assert problem.skipped >= flat
    # mixed with svm_rank's pairs (--pairwise), the bound is a combo's: 1/n over all n queries (those both leave out
    # add 0); the listwise loss alone divides by the queries it keeps
    kept = train_set.n_examples if "pairwise" in problem.info else train_set.n_examples - problem.skipped
    assert problem.n == kept
    result = training.train(problem, 100.0, 0.01)
    assert result.converged and np.isfinite(result.w).all()
    assert result.primal - result.dual <= 100.0 * 0.01 * (1 + 1e-9)
    zero_primal = 100.0 * problem.most_violated(np.zeros(train_set.n_docs))[1] / problem.n  # w = 0
    assert result.dual <= zero_primal + 1e-9


def test_ndcg_training_beats_random_scores_on_the_test_part():
    train_set = data.read_svmlight(str(SMALL / "train.txt"))
    test_set = data.read_svmlight(str(SMALL / "test.txt"), n_features=train_set.n_features)
    loss, opts = api.resolve_loss("ndcg@10")
    problem = loss.build(train_set, opts)
    result = training.train(problem, 100.0, 0.001)
    trained = training.model_of(loss, opts, TrainingSummary.of(train_set, problem), result, 100.0, 0.001)
    m = measures.lookup("ndcg@10")
    ours = measures.per_query(m, test_set.y, model.score(trained, test_set), test_set.qptr, test_set.docids).mean()
    rng = np.random.default_rng(0)
    chance = np.mean([measures.per_query(m, test_set.y, rng.normal(size=test_set.n_docs), test_set.qptr,
                                         test_set.docids).mean() for _ in range(20)])
    assert ours > chance + 0.05


def shuffled_within_queries(ds, seed):
    rng = np.random.default_rng(seed)
    perm = np.concatenate([lo + rng.permutation(hi - lo) for lo, hi in zip(ds.qptr[:-1], ds.qptr[1:])])
    docids = data.Docids()
    for r in perm:
        docids.append(ds.docids[r])
    return data.Dataset(ds.X[perm], ds.y[perm], ds.qid[perm], ds.qptr, docids.freeze(), ds.line[perm], ds.path, True)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ndcg@10", "dcg@10", "precision@5", "mrr", "wta", "mwta", "eru"])
def test_training_does_not_depend_on_the_order_of_documents_in_a_query(name):
    """Documents of equal grade are interchangeable: shuffling the lines inside every query gives the
    same model (to round-off), not merely one within the solver's tolerance."""
    train_set = data.read_svmlight(str(SMALL / "train.txt"))
    loss, opts = api.resolve_loss(name)
    results = [training.train(loss.build(ds, opts), 10.0, 0.001)
               for ds in (train_set, shuffled_within_queries(train_set, 1), shuffled_within_queries(train_set, 2))]
    for other in results[1:]:
        assert other.iterations == results[0].iterations
        assert np.linalg.norm(other.w - results[0].w) <= 1e-9 * np.linalg.norm(results[0].w)
        assert other.primal == pytest.approx(results[0].primal, rel=1e-12)


def test_ndcg_model_is_not_degenerate():
    """The slack at the optimum is well below its value at w = 0: the model ranks (not xi ~ 1, |w| ~ 0)."""
    train_set = data.read_svmlight(str(SMALL / "train.txt"))
    loss, opts = api.resolve_loss("ndcg@10")
    problem = loss.build(train_set, opts)
    result = training.train(problem, 10.0, 0.001)
    xi_at_zero = problem.most_violated(np.zeros(train_set.n_docs))[1] / problem.n
    assert result.converged and result.outer_steps >= 1
    assert result.xi < xi_at_zero - 0.1
    assert np.linalg.norm(result.w) > 0.5


def test_latent_outer_steps_never_increase_the_objective():
    """CCCP: the objective at the end of each outer step (target fixed, loop converged) does not increase."""
    train_set = data.read_svmlight(str(SMALL / "train.txt"))
    loss, opts = api.resolve_loss("ndcg@10")
    result = training.train(loss.build(train_set, opts), 10.0, 0.001)
    ends = [row["primal"] for row in result.history if row["gap"] <= 0.001]
    assert len(ends) == result.outer_steps + 1
    assert all(later <= earlier + 10.0 * 0.001 for earlier, later in zip(ends, ends[1:]))


def test_mrr_loss_is_one_minus_the_reciprocal_rank_eval_reports():
    train_set = data.read_svmlight(str(SMALL / "train.txt"))
    loss, opts = api.resolve_loss("mrr", {"pairwise": 0.0})  # the listwise loss alone
    problem = loss.build(train_set, opts)
    rng = np.random.default_rng(5)
    scores = rng.normal(size=train_set.n_docs)
    _, delta = problem.most_violated(np.zeros(train_set.n_docs))
    used = [(lo, hi) for lo, hi in zip(train_set.qptr[:-1], train_set.qptr[1:])
            if 0 < np.sum(train_set.y[lo:hi] > 0) < hi - lo]
    # at w = 0 the most violated ranking puts every non-relevant document first
    expected = sum(1.0 - 1.0 / (1 + int(np.sum(train_set.y[lo:hi] <= 0))) for lo, hi in used)
    assert delta == pytest.approx(expected)
    assert problem.n == len(used)
    dcoef, delta = problem.most_violated(scores)
    assert np.isfinite(dcoef).all() and 0 <= delta <= len(used)


def long_list_file(path, queries=20, docs=100, features=10, seed=3):
    """LETOR-shaped queries of `docs` candidates (the shape of ../shared/tools/make_synthetic_ltr.py): labels
    0-4 in proportions 50/25/15/7/3 % from a hidden linear model plus as much noise."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=features)
    lines = []
    for q in range(1, queries + 1):
        X = rng.random((docs, features))
        s = X @ w + rng.normal(scale=np.linalg.norm(w) / np.sqrt(12), size=docs)
        labels = np.searchsorted(np.quantile(s, [0.5, 0.75, 0.9, 0.97]), s, side="right")
        lines += [f"{labels[i]} qid:{q} " + " ".join(f"{j + 1}:{X[i, j]:.4f}" for j in range(features)) + f" # q{q}d{i}"
                  for i in range(docs)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_loss_that_cannot_learn_says_so_and_a_normal_run_does_not(tmp_path):
    """precision@10 with Le & Smola's positional map over 100 candidates: Delta ignores every position after
    10, Psi does not, and the optimum is w = 0 (the collapse). learn warns in one line and the model
    header says did_not_learn; the same loss with its own map (the default) learns and has neither."""
    from conftest import invoke

    train_file = long_list_file(tmp_path / "long.txt")
    collapsed = invoke("learn", "-l", "precision@10", "--position-weights", "pow:0.5", "--pairwise", "0", "-c", "1",
                       "-v", "0", train_file, tmp_path / "old.model")
    assert collapsed.returncode == 0
    warnings = [line for line in collapsed.stderr.splitlines() if "as well as w = 0" in line]
    assert len(warnings) == 1 and warnings[0].startswith("svmstruct: warning: on the training data the model's "
                                                         "measure is")
    old = model.load_model(str(tmp_path / "old.model"))
    assert old.header["did_not_learn"] == "1"
    assert float(old.header["primal"]) <= float(old.header["objective_at_zero"])  # never above its start
    learned = invoke("learn", "-l", "precision@10", "-c", "1", "-v", "0", train_file, tmp_path / "new.model")
    assert learned.returncode == 0 and "as well as w = 0" not in learned.stderr
    new = model.load_model(str(tmp_path / "new.model"))
    assert "did_not_learn" not in new.header
    assert float(new.header["primal"]) < 0.95 * float(new.header["objective_at_zero"])


def noisy_lists(queries=60, docs=80, seed=5):
    """Noisy lists with many relevant documents (70/16/14 % of labels 0/1/2, noise twice the signal), as
    ../shared/tools/make_synthetic_ltr.py --cuts 0.70,0.86 --noise 6 makes them."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=10)
    X = rng.random((queries * docs, 10))
    s = (X @ w + rng.normal(scale=4.0, size=len(X))).reshape(queries, docs)
    y = np.concatenate([np.searchsorted(np.quantile(row, [0.7, 0.86]), row, side="right") for row in s])
    return arrays.from_arrays(X, y.astype(float), np.repeat(np.arange(1, queries + 1), docs))


def test_did_not_learn_is_judged_by_what_the_model_does_on_its_training_data():
    """On noisy lists ndcg@10 and precision@10 with their measure's own map or every pair rank at chance
    (w = 0: the top order statistics of ~55 non-relevant documents beat those of the relevant ones for every
    w) and are flagged; with their default map (top-pairs) they learn. map at a small C and pairs gain under
    1 % of the objective at w = 0 yet rank well above chance, and are not flagged (the objective's gain alone
    flagged them)."""
    noisy = noisy_lists()
    for name, C, weights in (("ndcg@10", 1.0, "measure"), ("precision@10", 1.0, "measure"),
                             ("ndcg@10", 1.0, "pairs")):
        fitted = api.fit(noisy, name, C=C, position_weights=weights, pairwise=0.0)
        value, zero, ideal = fitted.result.measured
        assert not fitted.result.learned and value == zero < ideal and fitted.header["did_not_learn"] == 1
    for name, C in (("map", 0.01), ("map", 0.1), ("pairs", 0.001), ("mrr", 1.0), ("ndcg@10", 1.0),
                    ("precision@10", 1.0)):
        fitted = api.fit(noisy, name, C=C)
        value, zero, ideal = fitted.result.measured
        assert fitted.result.learned and value > zero + 0.05 and "did_not_learn" not in fitted.header, (name, C)
        if name in ("map", "pairs"):
            assert fitted.result.gain < loop.MIN_GAIN  # the objective alone said "did not learn"


def test_validate_marks_the_grid_points_that_did_not_learn(tmp_path):
    from conftest import invoke

    train_file = long_list_file(tmp_path / "long.txt")
    vali_file = long_list_file(tmp_path / "vali.txt", queries=5, seed=4)
    run = invoke("learn", "-l", "precision@10", "--position-weights", "pow:0.5", "--pairwise", "0", "-c", "0.1,1",
                 "--validate", vali_file, train_file, tmp_path / "m")
    grid_lines = [line for line in run.stderr.splitlines() if line.startswith("C ")]
    assert len(grid_lines) == 2 and all(line.endswith("(did not learn: w ~ 0)") for line in grid_lines)


@pytest.mark.parametrize("name", ["ndcg@10", "precision@10", "mrr", "eru", "mwta"])
def test_the_measure_maps_learn_on_long_lists(name, tmp_path):
    """On 100-candidate queries every listwise loss with its own map ends well below the objective at w = 0."""
    train_set = data.read_svmlight(str(long_list_file(tmp_path / "long.txt")))
    loss, opts = api.resolve_loss(name, {"position_weights": "measure", "pairwise": 0.0})
    result = training.train(loss.build(train_set, opts), 1.0, 0.001)
    assert result.converged and result.learned and result.gain > 0.05


def test_precision_pairs_are_the_labels_pairs():
    """precision@k's pairwise maps count the pairs of different label (its loss's label_pairs, evaluation/listwise.py):
    a feature that tells grade 2 from grade 1 (and is 0 on the non-relevant documents) gets weight and ranks grade 2
    first; the relevant-or-not pairs alone would give it none (its sum over those pairs is 0)."""
    rng = np.random.default_rng(3)
    labels = np.tile([2.0, 2, 1, 1, 0, 0, 0, 0], 12)
    grade_feature = np.select([labels == 2, labels == 1], [1.0, -1.0], 0.0)
    X = np.column_stack([(labels > 0) + rng.normal(scale=0.3, size=len(labels)), grade_feature])
    ds = arrays.from_arrays(X, labels, np.repeat(np.arange(1, 13), 8))
    for weights in ("top-pairs", "pairs"):
        fitted = api.fit(ds, "precision@k", C=10.0, k=4, position_weights=weights)
        w = fitted.w
        assert w[1] > 0.15 * w[0] > 0, (weights, w)  # measured: 0.22 of w[0]; the relevant-or-not pairs: < 0.04
        scores = model.score(fitted, ds)
        assert scores[labels == 2].mean() - scores[labels == 1].mean() > 0.3  # 0.47-0.53; those pairs: < 0.09


def test_pairwise_mixes_svm_ranks_pairs_into_the_listwise_bound():
    """--pairwise lambda: C/n sum_q [(1 - lambda) xi_listwise + lambda xi_pairs / m] over the n queries, m the mean
    pairs a query (losses.combo.with_pairs, combo's sum). lambda = 0 is the listwise problem itself; in between, the
    most violated constraint is the weighted sum of the two oracles' at any scores (ties included); lambda = 1 is
    svm_rank's pairs at the C that puts its objective on the same scale: the same run."""

    train_set = data.read_svmlight(str(SMALL / "train.txt"))
    listwise = dorm.LOSSES[[loss.name for loss in dorm.LOSSES].index("ndcg@k")]
    loss, opts = api.resolve_loss("ndcg@10")
    assert opts["pairwise"] == listwise_measures.NDCG.loss.pairwise and loss is registry.REGISTRY["ndcg@k"]
    pairs_loss, pairs_opts = api.resolve_loss("pairs")
    pairs = pairs_loss.build(train_set, pairs_opts)
    m = pairs.info["pairs"] / pairs.info["queries"]
    rng = np.random.default_rng(4)
    n = train_set.n_docs
    scores = [rng.normal(size=n), np.round(rng.normal(size=n)), np.zeros(n)]
    for weight in (0.0, 0.3, 1.0):
        mixed = loss.build(train_set, {**opts, "pairwise": weight})
        alone = listwise.build(train_set, {**opts, "pairwise": weight})
        assert ("pairwise" in mixed.info) == (weight > 0)
        assert mixed.n == (alone.n if weight == 0 else train_set.n_examples)
        for s in scores:
            (d_mixed, v_mixed), (d_alone, v_alone), (d_pairs, v_pairs) = (
                problem.most_violated(s)[:2] for problem in (mixed, alone, pairs))
            np.testing.assert_allclose(d_mixed, (1 - weight) * d_alone + weight / m * d_pairs, atol=1e-9)
            assert v_mixed == pytest.approx((1 - weight) * v_alone + weight / m * v_pairs, abs=1e-9)
    C, eps = 1.0, 0.0001
    as_pairs = api.fit(train_set, "ndcg@10", C=C, epsilon=eps, pairwise=1.0)
    rank = api.fit(train_set, "pairs", C=C * pairs.n / (train_set.n_examples * m), epsilon=eps)
    assert as_pairs.result.primal == pytest.approx(rank.result.primal, rel=1e-9)  # the same steps, to round-off
    np.testing.assert_allclose(as_pairs.w, rank.w, atol=1e-9)


def test_combos_default_weights_give_the_first_loss_half():
    """combo's lambda sum to 1; the first loss (its measure selects C) weighs 1/2, the others share the rest (decided
    on make exp-real: equal shares let map and mrr pull NDCG@10 below ndcg@10's own on MSLR and Yahoo)."""
    from svmstruct.losses import combo

    np.testing.assert_allclose(combo.weights(None, 2), [0.5, 0.5])
    np.testing.assert_allclose(combo.weights(None, 3), [0.5, 0.25, 0.25])
    train_set = data.read_svmlight(str(SMALL / "train.txt"))
    loss, opts = api.resolve_loss("combo:ndcg@10,mrr,map")
    default = loss.build(train_set, opts)
    explicit = loss.build(train_set, {**opts, "combo_weights": "0.5,0.25,0.25"})
    equal = loss.build(train_set, {**opts, "combo_weights": "1,1,1"})
    scores = np.random.default_rng(5).normal(size=train_set.n_docs)
    np.testing.assert_array_equal(default.most_violated(scores)[0], explicit.most_violated(scores)[0])
    assert not np.allclose(default.most_violated(scores)[0], equal.most_violated(scores)[0] / 3)
