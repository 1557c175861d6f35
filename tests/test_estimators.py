"""The Python API: svmstruct.fit and the scikit-learn estimators SVMPerf and SVMRank (scikit-learn's own
estimator checks, clone, pickling, GridSearchCV with GroupKFold, model files shared with the CLI)."""
import pickle
import subprocess
import sys

import numpy as np
import pytest

import svmstruct

from conftest import DATA, ROOT, need_shared

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, GroupKFold  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

SMALL = ROOT / "data" / "mq2008-small"


# Every check scikit-learn yields for a linear binary classifier and for a regressor-like estimator runs;
# scikit-learn itself skips check_array_api_input (array-API mode off) and the pandas checks (pandas absent).
# Its checks pass no query ids: the ranker is told that its rows are one query.
@parametrize_with_checks([svmstruct.SVMPerf(), svmstruct.SVMPerf(loss="f1", C=10),
                          svmstruct.SVMRank(single_query=True)])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.slow
def test_svmrank_equals_the_command_line_on_mq2008(tmp_path):
    """SVMRank(loss="pairs", C=1).fit(X, y, qid=q) on MQ2008 S1: the objective and scores of
    `svmstruct learn -l pairs -c 1 --layout sparse` (X is the CSR matrix read_svmlight gives; same numbers,
    not merely close)."""
    need_shared()
    train = DATA / "mq2008" / "S1.txt"
    model_file = tmp_path / "cli.model"
    run = subprocess.run([sys.executable, "-m", "svmstruct", "learn", "-l", "pairs", "-c", "1", "-v", "0", "--layout",
                          "sparse", str(train), str(model_file)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    from_cli = svmstruct.load_model(str(model_file))
    dataset = svmstruct.read_svmlight(str(train))
    ranker = svmstruct.SVMRank(loss="pairs", C=1).fit(dataset.X, dataset.y, qid=dataset.qid)
    assert ranker.model_.result.primal == float(from_cli.header["primal"])
    np.testing.assert_array_equal(ranker.predict(dataset.X), from_cli.predict(dataset))
    assert svmstruct.fit(dataset, "pairs", C=1).result.primal == ranker.model_.result.primal


def test_rows_of_a_query_need_not_be_adjacent():
    dataset = svmstruct.read_svmlight(str(SMALL / "train.txt"))
    rng = np.random.default_rng(0)
    order = rng.permutation(dataset.n_docs)
    X, y, q = dataset.X, dataset.y, dataset.qid
    a = svmstruct.SVMRank(loss="map", C=1).fit(X, y, qid=q)
    b = svmstruct.SVMRank(loss="map", C=1).fit(X[order], y[order], qid=q[order])
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-8)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-8)


@pytest.mark.slow
def test_grid_search_over_C_with_group_k_fold():
    dataset = svmstruct.read_svmlight(str(SMALL / "train.txt"))
    X, y, q = dataset.X, dataset.y, dataset.qid
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(svmstruct.SVMRank(loss="ndcg@10"), {"C": [0.1, 10.0]}, cv=GroupKFold(3))
        search.fit(X, y, qid=q, groups=q)
    assert search.best_params_["C"] in (0.1, 10.0)
    scores = search.cv_results_["mean_test_score"]
    assert np.all((scores > 0.2) & (scores < 1.0))  # mean NDCG@10 of each fold's own queries
    classifier = GridSearchCV(svmstruct.SVMPerf(loss="f1"), {"C": [1.0, 100.0]}, cv=3).fit(X, y > 0)
    assert 0 < classifier.best_score_ < 1


def test_a_ranker_without_its_queries_is_an_error_that_says_how_to_pass_them():
    """fit(X, y) without qid, and a GridSearchCV without metadata routing (which hands fit its qid but scores
    every fold as one query), raise instead of silently training or scoring one query."""
    dataset = svmstruct.read_svmlight(str(SMALL / "train.txt"))
    X, y, q = dataset.X, dataset.y, dataset.qid
    with pytest.raises(ValueError, match="needs the query of every row.*enable_metadata_routing"):
        svmstruct.SVMRank().fit(X, y)
    ranker = svmstruct.SVMRank().fit(X, y, qid=q)
    with pytest.raises(ValueError, match="score needs the query of every row"):
        ranker.score(X, y)
    search = GridSearchCV(svmstruct.SVMRank(), {"C": [0.1, 1.0]}, cv=GroupKFold(3), error_score="raise")
    with pytest.raises(ValueError, match="metadata routing"):
        search.fit(X, y, qid=q, groups=q)
    one = svmstruct.SVMRank(single_query=True).fit(X[:30], y[:30])  # said so: the rows are one query
    assert one.score(X[:30], y[:30]) == one.score(X[:30], y[:30], qid=np.zeros(30))


def test_the_rankers_score_breaks_ties_as_eval_does(tmp_path):
    """Tied scores are ordered by docid as eval (and trec_eval) orders them: score(X, y, qid, docids) equals
    `svmstruct eval` of the same predictions on the same file."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(400, 3)).astype(float)  # eight distinct rows: the scores tie a lot
    y = np.clip(np.round(X @ [1.0, 0.5, -0.5] + rng.normal(scale=0.8, size=400)), 0, 2)
    qid = np.repeat(np.arange(20), 20)
    docids = [f"d{rng.integers(10**6)}-{i}" for i in range(400)]
    data = tmp_path / "data.txt"
    data.write_text("".join(f"{y[i]:g} qid:{qid[i] + 1} " + " ".join(f"{j + 1}:{X[i, j]:g}" for j in range(3))
                            + f" # docid = {docids[i]}\n" for i in range(400)))
    ranker = svmstruct.SVMRank(loss="pairs").fit(X, y, qid=qid)
    predictions = tmp_path / "p"
    predictions.write_text("".join(f"{float(s)!r}\n" for s in ranker.predict(X)))
    run = subprocess.run([sys.executable, "-m", "svmstruct", "eval", "-m", "pairacc", data, predictions],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert float(run.stdout.split()[-1]) == pytest.approx(ranker.score(X, y, qid=qid, docids=docids), abs=5e-5)
    assert len(np.unique(ranker.predict(X))) <= 8


def test_from_arrays_gives_a_dataset_that_fit_takes():
    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(60, 4)), np.tile([0.0, 1.0, 2.0], 20), np.repeat(np.arange(6), 10)
    dataset = svmstruct.from_arrays(X, y, qid)
    assert isinstance(dataset, svmstruct.Dataset)
    assert svmstruct.fit(dataset, loss="pairs", C=1.0).predict(dataset).shape == (60,)


def test_clone_pickle_and_model_files_shared_with_the_cli(tmp_path):
    dataset = svmstruct.read_svmlight(str(SMALL / "train.txt"))
    test = svmstruct.read_svmlight(str(SMALL / "test.txt"), n_features=dataset.n_features)
    ranker = svmstruct.SVMRank(loss="ndcg@10", C=10, position_weights="log")
    assert clone(ranker).get_params() == ranker.get_params()
    ranker.fit(dataset.X, dataset.y, qid=dataset.qid)
    again = pickle.loads(pickle.dumps(ranker))
    np.testing.assert_array_equal(again.predict(test.X), ranker.predict(test.X))
    # Python -> shell: classify reads the saved model
    path = tmp_path / "r.model"
    ranker.save(str(path))
    run = subprocess.run([sys.executable, "-m", "svmstruct", "classify", str(SMALL / "test.txt"), str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose([float(v) for v in run.stdout.split()], ranker.predict(test.X), atol=5e-9)
    # shell -> Python: a model from `learn` loads as a fitted estimator with its loss and options
    cli_model = tmp_path / "c.model"
    assert subprocess.run([sys.executable, "-m", "svmstruct", "learn", "-l", "ndcg@5", "--position-weights", "log",
                           "-c", "10", "-v", "0", str(SMALL / "train.txt"), str(cli_model)]).returncode == 0
    loaded = svmstruct.SVMRank.load(str(cli_model))
    assert (loaded.loss, loaded.k, loaded.position_weights, loaded.C) == ("ndcg@k", 5, "log", 10.0)
    assert 0.2 < loaded.score(test.X, test.y, qid=test.qid) <= 1.0


def test_estimators_reject_losses_of_the_other_kind_and_options_that_do_not_apply():
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    with pytest.raises(ValueError, match="families"):
        svmstruct.SVMPerf(loss="map").fit(X, y)
    with pytest.raises(ValueError, match="does not apply"):
        svmstruct.SVMRank(loss="pairs", position_weights="log").fit(X, y)
    with pytest.raises(ValueError, match="finite"):
        svmstruct.SVMPerf(loss="f1", beta=float("nan")).fit(X, y)


def test_the_estimators_take_exactly_their_families_loss_options():
    """SVMPerf's and SVMRank's parameters beyond loss, C, epsilon, max_iterations, the kernel's (and the
    ranker's single_query) are the options that the losses of their families declare (svmstruct.losses): a
    new option is a new parameter, or this fails."""
    from svmstruct import registry
    from svmstruct.estimators import NOT_LOSS_OPTIONS

    for estimator in (svmstruct.SVMPerf, svmstruct.SVMRank):
        params = set(estimator._param_names()) - set(NOT_LOSS_OPTIONS)
        declared = {option.name for loss in registry.REGISTRY.values() if loss.family in estimator._families
                    for option in loss.options}
        assert params == declared, (estimator.__name__, params ^ declared)


def test_a_loaded_estimator_has_its_options_typed(tmp_path):
    X, y = np.random.default_rng(0).normal(size=(40, 3)), np.tile([0.0, 1.0, 2.0, 1.0], 10)
    qid = np.repeat(np.arange(10), 4)
    ranker = svmstruct.SVMRank(loss="ndcg@5", C=3.0, eru_alpha=None).fit(X, y, qid=qid)
    ranker.save(str(tmp_path / "m"))
    back = svmstruct.SVMRank.load(str(tmp_path / "m"))
    assert back.C == 3.0 and back.k == 5 and isinstance(back.k, int) and back.position_weights == "top-pairs"
