"""Parity with the original C programs on every shared reference run (README, "Conventions").

Objective: where the original converged tightly (its duality gap under 0.1%), our primal objective is
within 0.1% of its pval. Where it did not (corn-perf-f1-c1 stopped with a QP KKT error of 49.7; the
C = 10000 runs stop with gaps near C*epsilon), both runs certify an interval [dval, pval] around the
one optimum, and the test checks that the two intervals overlap: a correct solver cannot promise more.
"""

import numpy as np
import pytest
from scipy.stats import spearmanr

from svmstruct import model
from svmstruct.io import data

from conftest import need_shared
from reference import KERNEL_OPTIONS, all_cases, case, certified_weight_distance, train_case

CASES = all_cases()

# Runs whose test ranking is not pinned down by the epsilon-optimal solutions: the certified distance
# between our weights and theirs (sqrt(2 gap) each) is large against the spread of the test scores
# (C = 1: tiny weights), or the original is not at an optimum at all (corn-perf-f1-c1: QP KKT error 49.7).
# For these the weight check below is the parity test; the Spearman correlation is reported by
# scripts/parity_report.py.
LOOSE_RANKING = {"corn-perf-err-c1", "corn-perf-f1-c1", "corn-perf-prbep-c1", "corn-perf-preck-c1",
                 "corn-perf-reck-c1", "corn-perf-err-c10000"}


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_objective_predictions_and_test_measures_match_the_original(name):
    need_shared()
    c = case(name)
    trained, result = train_case(c)
    assert result.converged
    if (c.pval - c.dval) <= 1e-3 * c.pval:
        assert abs(result.primal - c.pval) <= 1e-3 * c.pval, (result.primal, c.pval)
    else:  # the original stopped loose: the certified intervals must overlap
        assert result.dual <= c.pval * (1 + 1e-6) and c.dval <= result.primal * (1 + 1e-6), \
            (result.dual, result.primal, c.dval, c.pval)
    distance, bound = certified_weight_distance(c, trained, result)
    assert distance <= bound * 1.01 + 1e-4, (distance, bound)
    test = data.read_svmlight(str(c.test))
    scores = model.score(trained, test)
    if name not in LOOSE_RANKING:
        assert spearmanr(scores, c.pred).statistic >= 0.999


@pytest.mark.slow
def test_classify_reproduces_every_reference_prediction():
    need_shared()
    for name in CASES:
        c = case(name)
        reference = model.load_model(str(c.model))
        scores = model.score(reference, data.read_svmlight(str(c.test)))
        np.testing.assert_allclose(scores, c.pred, rtol=0, atol=1e-6, err_msg=name)


KERNEL_CASES = sorted(KERNEL_OPTIONS)


@pytest.mark.parametrize("case", KERNEL_CASES)
def test_classify_reproduces_svm_perf_kernel_models(case, tmp_path, shared):
    """svm_perf's kernel models (RBF, polynomial, sigmoid): classify's scores equal svm_perf_classify's to 1e-6
    (the polynomial and sigmoid cases to the printed digit)."""
    from conftest import invoke

    folder = shared / "reference" / "kernel"
    test = shared / "data" / ("reuters/corn.test.svm" if case.startswith("corn") else "mq2008/S5.txt")
    out = tmp_path / "p"
    result = invoke("classify", test, folder / f"{case}.model", out)
    assert result.returncode == 0, result.stderr
    ours, theirs = np.loadtxt(out), np.loadtxt(folder / f"{case}.pred")
    assert ours.shape == theirs.shape and np.abs(ours - theirs).max() <= 1e-6
    if "-poly-" in case or "-sigmoid-" in case:
        assert out.read_bytes() == (folder / f"{case}.pred").read_bytes()


def basis_rows(expansion) -> list:
    """A kernel expansion's basis vectors as tuples of (feature id, float32 value), zeros left out."""
    b = expansion.basis
    return [tuple((int(i), float(np.float32(v))) for i, v in zip(b.indices[b.indptr[j]:b.indptr[j + 1]],
                                                                  b.values[b.indptr[j]:b.indptr[j + 1]]) if v != 0)
            for j in range(b.size)]


@pytest.mark.parametrize("case", KERNEL_CASES)
def test_learn_with_svm_perfs_basis_options_solves_its_problem(case, tmp_path, shared):
    """learn with svm_perf's options (--t 1 every (n/K)-th vector of --f, --t 2 incomplete Cholesky over
    it) chooses svm_perf's very basis vectors, in its order, dropping the same dependent ones (the sigmoid
    case keeps 9 of 100), and solves its sparse kernel problem: the primal objectives agree to 1e-3
    relative. The CPSP case (-w 9, not implemented here) gets the basis CPSP found, as an --f file: the
    same problem over that basis."""
    from conftest import invoke
    from reference import KernelCase

    c = KernelCase(case)
    out = tmp_path / "m"
    result = invoke("learn", "-v", "0", *c.learn_args(tmp_path), c.train, out)
    assert result.returncode == 0, result.stderr
    trained, reference = model.load_model(str(out)), model.load_model(str(c.model))
    assert basis_rows(trained.kernel) == basis_rows(reference.kernel)
    assert abs(float(trained.header["primal"]) - c.pval) <= 1e-3 * c.pval, (trained.header["primal"], c.pval)
