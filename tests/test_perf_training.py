"""Training with svm_perf's losses: per-query convention, degenerate data, AvgPrec convergence."""
from pathlib import Path

import numpy as np
import pytest

from svmstruct import api, training
from svmstruct.errors import InputError
from svmstruct.io import data

from conftest import DATA, need_shared

SMALL = Path(__file__).resolve().parents[1] / "data" / "mq2008-small" / "train.txt"


def build(name, dataset, **opts):
    return api.problem(dataset, name, **opts)


def test_per_query_error_rate_objective_is_the_average_of_per_query_hinge_sums():
    dataset = data.read_svmlight(str(SMALL))
    problem = build("errorrate", dataset, per_query=True)
    C = 3.0
    result = training.train(problem, C, 0.01)
    y = np.where(dataset.y > 0, 1.0, -1.0)
    scores = problem.X @ result.w
    per_query = [100.0 / (hi - lo) * np.maximum(0, 1 - y[lo:hi] * scores[lo:hi]).sum()
                 for lo, hi in zip(dataset.qptr[:-1], dataset.qptr[1:])]
    expected = 0.5 * result.w @ result.w + C * np.mean(per_query)
    assert problem.n == dataset.n_examples and problem.skipped == 0
    assert result.primal == pytest.approx(expected, rel=1e-9)


def test_per_query_losses_skip_queries_without_positives_and_stay_finite():
    dataset = data.read_svmlight(str(SMALL))
    no_positive = sum(1 for lo, hi in zip(dataset.qptr[:-1], dataset.qptr[1:]) if not np.any(dataset.y[lo:hi] > 0))
    assert no_positive > 0
    for name in ("f1", "prbep", "prec@10", "rec@k", "rocarea", "avgprec", "zeroone"):
        problem = build(name, dataset, per_query=True)
        expected_skip = 0 if name == "zeroone" else no_positive
        assert problem.skipped >= expected_skip and problem.n + problem.skipped == dataset.n_examples
        result = training.train(problem, 1.0, 0.5, max_iterations=30)
        assert np.isfinite(result.w).all() and np.isfinite(result.primal)


def test_one_query_per_query_equals_the_whole_file():
    dataset = data.read_svmlight(str(SMALL))
    dataset.qid[:] = 1
    dataset.qptr = np.array([0, dataset.n_docs])
    for name in ("f1", "rocarea", "prec@5"):
        a = training.train(build(name, dataset, per_query=True), 1.0, 0.01)
        b = training.train(build(name, dataset), 1.0, 0.01)
        assert a.primal == pytest.approx(b.primal, rel=1e-9)


def test_degenerate_training_sets_are_clear_errors(tmp_path):
    path = tmp_path / "neg.dat"
    path.write_text("-1 1:1\n-1 2:1\n")
    dataset = data.read_svmlight(str(path))
    for name in ("f1", "rocarea", "prbep", "avgprec"):
        with pytest.raises(InputError, match="positive"):
            build(name, dataset)
    with pytest.raises(InputError, match="every document is negative"):  # a one-class model, "learned": refused
        build("errorrate", dataset)
    with pytest.raises(InputError, match="--p"):
        build("prec@k", dataset, p=1.5)
    with pytest.raises(InputError, match="per-query"):
        build("f1", dataset, per_query=True)


@pytest.mark.slow
def test_avgprec_converges_on_mq2008_where_svm_perf_did_not():
    need_shared()
    problem = build("avgprec", data.read_svmlight(str(DATA / "mq2008" / "S1.txt")))
    result = training.train(problem, 1.0, 0.1)
    assert result.converged
    assert result.primal - result.dual <= 1.0 * 0.1 * 1.0001  # gap at most C * epsilon


def test_dense_float32_storage_trains_the_same_model():
    sparse = data.read_svmlight(str(SMALL))
    dense = data.read_svmlight(str(SMALL), dtype=np.float32, layout="dense")
    for name in ("rocarea", "pairs", "map"):
        a = training.train(build(name, sparse), 1.0, 0.001)
        b = training.train(build(name, dense), 1.0, 0.001)
        assert b.primal == pytest.approx(a.primal, rel=1e-4)
