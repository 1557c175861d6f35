"""Parity with the original C programs on the shared reference runs (DESIGN.md section 4)."""
import numpy as np
import pytest
from scipy.stats import spearmanr

from conftest import need_shared
from reference_cases import all_cases, case
from svmstruct import data, losses, model, train

FOUNDATION_CASES = [
    "corn-perf-err-c100",
    "acq-perf-err-c100",
    "corn-perf-roc-c100",
    "acq-perf-roc-c100",
    "mq2008-S1-perf-roc-c1",
]


def train_case(c, **opts):
    dataset = data.read_svmlight(str(c.train[0]))
    loss, name_opts = losses.lookup(c.loss)
    problem = loss.build(dataset, {"bias": 1.0, **opts, **name_opts})
    result = train.train(problem, c.C, c.epsilon)
    return model.from_training(loss, opts, dataset, problem, result, c.C, c.epsilon), result


@pytest.mark.slow
@pytest.mark.parametrize("name", FOUNDATION_CASES)
def test_objective_and_predictions_match_svm_perf(name):
    need_shared()
    c = case(name)
    trained, result = train_case(c)
    assert result.converged
    assert abs(result.primal - c.pval) <= 1e-3 * c.pval, (result.primal, c.pval)
    assert result.dual <= c.pval * (1 + 1e-6)  # our lower bound never exceeds their feasible objective
    scores = model.score(trained, data.read_svmlight(str(c.test)))
    assert spearmanr(scores, c.pred).statistic >= 0.999


def test_classify_reproduces_every_reference_prediction():
    need_shared()
    for name in all_cases():
        c = case(name)
        reference = model.load_model(str(c.model))
        scores = model.score(reference, data.read_svmlight(str(c.test)))
        np.testing.assert_allclose(scores, c.pred, rtol=0, atol=1e-6, err_msg=name)
