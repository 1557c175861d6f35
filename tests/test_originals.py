"""SVM-multiclass and SVM-hmm beside svm_multiclass V2.20 and svm_hmm V3.10 (../shared/reference/struct: their
models, predictions and logs on scikit-learn's digits and the OCR letters): classify reproduces their predictions
from their model files, their model files are written for their classify programs (run where ANCHOR_BIN holds
them), svm_multiclass's -l 1, and the higher orders of svm_hmm reach its token accuracy."""
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import one_line_error

import svmstruct
from svmstruct.io import model_files
from svmstruct.problems.multiclass import Multiclass

from conftest import REFERENCE, invoke

STRUCT = REFERENCE / "struct"
ANCHOR = Path(os.environ.get("ANCHOR_BIN", "/nonexistent"))


@pytest.fixture
def struct(shared):
    if not STRUCT.is_dir():
        pytest.skip("no ../shared/reference/struct")
    return STRUCT


def _tags(path: Path) -> list:
    return [line.split()[0] for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("case, test, beam", [
    ("digits-mc-c1-e0.01", "digits.test.svm", None), ("digits-mc-c10000-e0.1", "digits.test.svm", None),
    ("letters-hmm-c10", "letters.test.hmm", None), ("letters-hmm-c10-t2", "letters.test.hmm", None),
    ("letters-hmm-c10-e1", "letters.test.hmm", None), ("letters-hmm-c10-t2e1", "letters.test.hmm", None),
    ("letters-hmm-c10", "letters.test.hmm", "3"),
])
def test_classify_reproduces_the_originals_predictions_from_their_model_files(struct, tmp_path, case, test, beam):
    run = invoke("classify", *(["--b", beam] if beam else []), struct / test, struct / f"{case}.model", tmp_path / "p")
    assert run.returncode == 0, run.stderr
    expected = struct / f"{case}{'-b3' if beam else ''}.pred"
    assert _tags(tmp_path / "p") == _tags(expected)


@pytest.mark.parametrize("case", ["digits-mc-c100-e0.01", "letters-hmm-c10-t2e1"])
def test_the_originals_model_files_round_trip(struct, case):
    lines = (struct / f"{case}.model").read_text().split("\n")
    kind, options, w, _ = model_files.read(lines, case)
    again = model_files.read(model_files.format(kind, options, w, 1).split("\n"), "written")
    assert again[:2] == (kind, options) and np.allclose(again[2], w, rtol=1e-7, atol=0)


@pytest.mark.slow
@pytest.mark.parametrize("problem, train, test, options", [
    ("multiclass", "digits.train.svm", "digits.test.svm", []),
    ("hmm", "letters.train.hmm", "letters.test.hmm", ["--problem-option", "transitions=2", "--problem-option",
                                                      "emissions=1"]),
])
def test_models_written_for_the_originals_classify_as_ours(struct, tmp_path, problem, train, test, options):
    """learn --format svm_multiclass | svm_hmm: read back by classify to the same predictions, and (where ANCHOR_BIN
    holds the original's classify) by the original to the same predictions."""
    model = tmp_path / "m"
    run = invoke("learn", "--problem", problem, "-c", "10", "-e", "0.5", *options, "--format", f"svm_{problem}", "-v",
                 "0", struct / train, model)
    assert run.returncode == 0, run.stderr
    assert model.read_text().startswith(model_files.MULTICLASS if problem == "multiclass" else model_files.HMM)
    assert invoke("classify", struct / test, model, tmp_path / "ours").returncode == 0
    theirs = ANCHOR / f"svm_{problem}_classify"
    if not theirs.exists():
        pytest.skip(f"no {theirs.name} in ANCHOR_BIN (the original's classify on our file not checked)")
    subprocess.run([theirs, struct / test, model, tmp_path / "theirs"], check=True, capture_output=True)
    assert _tags(tmp_path / "ours") == _tags(tmp_path / "theirs")


def test_formats_that_do_not_fit_what_is_trained_are_refused(tmp_path):
    data = tmp_path / "classes.svm"
    data.write_text("".join(f"{1 + i % 3} 1:{i % 5} 2:{i % 3}\n" for i in range(30)))
    one_line_error(invoke("learn", "--problem", "multiclass", "-c", "1", "--format", "svmlight", data, tmp_path / "m"),
                   2, "--format svmlight")
    one_line_error(invoke("learn", "--problem", "multiclass", "-c", "1", "--format", "svm_hmm", data, tmp_path / "m"),
                   2, "--problem hmm")
    one_line_error(invoke("learn", "-l", "pairs", "--format", "svm_multiclass", data, tmp_path / "m"), 2,
                   "--problem multiclass")
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("seed", range(6))
def test_svm_multiclass_squared_loss_attains_the_enumerated_maximum(seed):
    """-l 1: Delta = (y - ybar)^2, margin and slack rescaling, one example and all at once."""
    rng = np.random.default_rng(seed)
    K, D = int(rng.integers(2, 6)), 4
    problem = Multiclass(classes=K, features=D, loss_function=1)
    x = sp.csr_matrix(rng.normal(size=(1, D)))
    y = int(rng.integers(1, K + 1))
    w = rng.normal(size=K * D) * 3
    dim = K * D

    def margin(c):
        return problem.loss(y, c) + w @ problem.vector(x, c, dim)

    def slack(c):
        return problem.loss(y, c) * (1 + w @ problem.vector(x, c, dim) - w @ problem.vector(x, y, dim))

    assert margin(problem.most_violated(x, y, w)) == pytest.approx(max(map(margin, range(1, K + 1))))
    assert slack(problem.most_violated_slack(x, y, w)) == pytest.approx(max(0, *map(slack, range(1, K + 1))))
    from svmstruct.problems import StructuredProblem

    examples = [(sp.csr_matrix(rng.normal(size=(1, D))), int(rng.integers(1, K + 1))) for _ in range(9)]
    for rescaling in (1, 2):
        fast, total = problem.cut(examples, w, rescaling)
        slow, slow_total = StructuredProblem.cut(problem, examples, w, rescaling)
        np.testing.assert_allclose(fast, slow, atol=1e-9)
        assert total == pytest.approx(slow_total)


@pytest.mark.slow
def test_svm_hmm_t2_e1_on_the_letters_reaches_the_originals_token_accuracy(struct, tmp_path):
    """svm_hmm -c 10 -e 0.5 --t 2 --e 1: token error 0.1687, objective 40.35655 (its learn log)."""
    run = invoke("learn", "--problem", "hmm", "-c", "10", "-e", "0.5", "--problem-option", "transitions=2",
                 "--problem-option", "emissions=1", "-v", "1", struct / "letters.train.hmm", tmp_path / "m")
    assert run.returncode == 0, run.stderr
    ours = float(re.findall(r"pval=([0-9.]+)", run.stderr)[-1])
    theirs = float(re.findall(r"pval=([0-9.]+)", (struct / "letters-hmm-c10-t2e1.learn.log").read_text())[-1])
    assert ours <= theirs * 1.001
    assert invoke("classify", struct / "letters.test.hmm", tmp_path / "m", tmp_path / "p").returncode == 0
    error = np.mean(np.array(_tags(tmp_path / "p")) != np.array(_tags(struct / "letters.test.hmm")))
    assert abs(error - 0.1687) <= 0.005, error
    assert svmstruct.load_model(str(tmp_path / "m")).options["transitions"] == "2"
