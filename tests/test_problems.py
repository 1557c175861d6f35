"""svm_struct's API: a problem written in a test file (multilabel_problem.py, not in the package) trains from
Python and from the command line (its oracles against enumeration: tests/test_problem_contract.py), its training
reaches the optimum of its own rescaling (-o 1 slack, -o 2 margin), its model round-trips, and a run stopped at
a checkpoint resumes to the model of an uninterrupted run."""

import numpy as np
import pytest
from helpers import SPEC, examples, write
from multilabel_problem import MarginOnly, MultiLabel

import svmstruct
from svmstruct import problems, training
from svmstruct.errors import UsageError

from conftest import ROOT, invoke, invoke_here


def margin_value(problem, x, y, ybar, w):
    return problem.loss(y, ybar) + w @ problem.vector(x, ybar, len(w))


def slack_value(problem, x, y, ybar, w):
    return problem.loss(y, ybar) * (1 + w @ (problem.vector(x, ybar, len(w)) - problem.vector(x, y, len(w))))


def objective(problem, data, w, C, value):
    """1/2 |w|^2 + C xi, xi the 1-slack constraint's most violated value by enumeration (margin or slack)."""
    xi = np.mean([max(value(problem, x, y, tuple(out), w) - (0.0 if value is slack_value else
                                                               w @ problem.vector(x, y, len(w)))
                      for out in problem.outputs(x)) for x, y in data])
    return 0.5 * w @ w + C * max(xi, 0.0)


@pytest.mark.parametrize("rescaling", [1, 2])
def test_each_rescaling_reaches_its_own_optimum(rescaling):
    """The trained w's objective (by enumeration) is within the certified gap of the optimum, and no better
    for the other rescaling's objective than that rescaling's own model: each reaches its own optimum."""
    data = examples(np.random.default_rng(5))
    problem, C = MultiLabel(), 10.0
    models = {o: svmstruct.fit_problem(problem, data, C=C, epsilon=1e-4, rescaling=o) for o in (1, 2)}
    trained = models[rescaling]
    value = slack_value if rescaling == 1 else margin_value
    w = np.zeros(problem.dimension(data))
    w[:len(trained.w)] = trained.w
    result = trained.result
    assert result.converged and result.primal - result.dual <= 1e-4 * C
    assert objective(problem, data, w, C, value) == pytest.approx(result.primal, rel=1e-9)
    other = models[3 - rescaling]
    w_other = np.zeros(len(w))
    w_other[:len(other.w)] = other.w
    assert objective(problem, data, w, C, value) <= objective(problem, data, w_other, C, value) + 1e-4 * C
    assert not np.allclose(w, w_other, atol=1e-3)  # they are different optima


def test_slack_rescaling_needs_the_problems_slack_oracle():
    with pytest.raises(UsageError, match="no slack-rescaling oracle"):
        svmstruct.fit_problem(MarginOnly(), examples(np.random.default_rng(0)), C=1.0, rescaling=1)
    assert svmstruct.fit_problem(MarginOnly(), examples(np.random.default_rng(0)), C=1.0, rescaling=2).result.converged




def test_learn_and_classify_a_problem_from_the_command_line(tmp_path):
    rng = np.random.default_rng(3)
    train, test = write(tmp_path / "train", examples(rng, 40)), write(tmp_path / "test", examples(rng, 30))
    run = invoke_here("learn", "--problem", SPEC, "-c", "10", "-v", "0", train, tmp_path / "m")
    assert run.returncode == 0, run.stderr
    run = invoke_here("classify", test, tmp_path / "m", tmp_path / "pred")
    assert run.returncode == 0, run.stderr
    problem = MultiLabel()
    data = problem.read(str(test))
    trained = svmstruct.load_model(str(tmp_path / "m"))
    assert trained.loss == SPEC and trained.options["rescaling"] == "2"
    predicted = (tmp_path / "pred").read_text().splitlines()
    assert predicted == [problem.format(y) for y in problems.predict(trained, data)]
    # the same model from Python
    again = svmstruct.fit_problem(problem, problem.read(str(train)), C=10.0)
    np.testing.assert_array_equal(again.w, trained.w)
    hamming = np.mean([problem.loss(y, p) for (_, y), p in zip(data, problems.predict(trained, data))])
    nothing = np.mean([problem.loss(y, (0,) * problem.L) for _, y in data])  # w = 0 predicts no label
    assert hamming < 0.75 * nothing  # it learned, on examples it did not train on


def test_a_problems_options_from_the_command_line(tmp_path):
    rng = np.random.default_rng(8)
    data = [(x, y + (int(x[0] > 0),)) for x, y in examples(rng, 40)]  # a fourth label
    train = write(tmp_path / "train", data)
    run = invoke_here("learn", "--problem", SPEC, "--problem-option", "labels=4", "-c", "10", "-v", "0", train,
                      tmp_path / "m")
    assert run.returncode == 0, run.stderr
    trained = svmstruct.load_model(str(tmp_path / "m"))
    assert trained.options["labels"] == "4" and len(problems.predict(trained, data)[0]) == 4
    assert invoke_here("classify", train, tmp_path / "m", tmp_path / "pred").returncode == 0
    again = svmstruct.fit_problem(MultiLabel(labels=4), MultiLabel(labels=4).read(str(train)), C=10.0)
    np.testing.assert_array_equal(again.w, trained.w)


def test_a_problem_run_resumes_from_its_checkpoint(tmp_path):
    train = write(tmp_path / "train", examples(np.random.default_rng(4), 40))
    common = ["--problem", SPEC, "-c", "100", "-e", "0.001", "-v", "0"]
    assert invoke_here("learn", *common, train, tmp_path / "whole").returncode == 0
    stopped = invoke_here("learn", *common, "-#", "3", "--checkpoint", tmp_path / "ck", train, tmp_path / "part")
    assert stopped.returncode == 0 and (tmp_path / "ck").exists(), stopped.stderr
    resumed = invoke_here("learn", *common, "--checkpoint", tmp_path / "ck", "--resume", train, tmp_path / "done")
    assert resumed.returncode == 0, resumed.stderr
    done, whole = (svmstruct.load_model(str(tmp_path / name)) for name in ("done", "whole"))
    assert done.header["iterations"] == whole.header["iterations"] and not (tmp_path / "ck").exists()
    assert np.abs(done.w - whole.w).max() <= 1e-9 * np.abs(whole.w).max()


def test_command_line_errors_are_one_line(tmp_path):
    train = write(tmp_path / "train", examples(np.random.default_rng(0), 10))
    for args, message in [(["--problem", "no_such_module:X"], "No module named"),
                          (["--problem", "multilabel_problem"], "MODULE:CLASS"),
                          (["--problem", "numpy:ndarray"], "is not a svmstruct.problems.StructuredProblem"),
                          (["--problem", "multilabel_problem:MarginOnly", "-o", "1"], "no slack-rescaling oracle"),
                          (["--problem", SPEC, "-l", "map"], "-l and --problem"),
                          (["-o", "1"], "-o applies to --problem"),
                          (["--problem-option", "labels=2"], "--problem-option applies to --problem"),
                          (["--problem", SPEC, "--problem-option", "labels"], "takes KEY=VALUE, got 'labels'"),
                          (["--problem", SPEC, "--problem-option", "colour=3"],
                           "--problem-option colour does not apply"),
                          (["--problem", SPEC, "--problem-option", "labels=0"], "labels must be at least 1")]:
        run = invoke_here("learn", *args, "-v", "0", train, tmp_path / "m")
        assert run.returncode == 2 and message in run.stderr, (args, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1 and not (tmp_path / "m").exists()


@pytest.mark.slow
def test_a_problem_of_yours_through_the_resident_worker(tmp_path):
    """As a user runs it: the module on PYTHONPATH, the command through the resident worker and in its own process,
    the same model bytes."""
    train = write(tmp_path / "train", examples(np.random.default_rng(6), 30))
    env = {"PYTHONPATH": str(ROOT / "tests")}
    args = ["learn", "--problem", SPEC, "-c", "10", "-v", "0", train]
    served = invoke(*args, tmp_path / "served", env=env, worker=True)
    own = invoke(*args, tmp_path / "own", env=env)
    assert served.returncode == 0 and own.returncode == 0, served.stderr + own.stderr
    assert (tmp_path / "served").read_bytes() == (tmp_path / "own").read_bytes()
    classified = invoke("classify", "--problem", SPEC, train, tmp_path / "served", tmp_path / "pred", env=env)
    assert classified.returncode == 0 and len((tmp_path / "pred").read_text().splitlines()) == 30


def test_a_problems_line_search_spends_at_most_its_calls():
    """A structured problem's oracle is its whole cost: its line search stops after SEARCH_CALLS oracle calls (the
    two ends and one point between), so an iteration calls the oracle at most three times (w_t, one point of the
    search, the cutting plane past w_b), where a loss's may take up to 16 (line_search.CALLS)."""
    from svmstruct.problems.base import SEARCH_CALLS, training_problem
    from svmstruct.train import line_search
    from svmstruct.train.problem import Outline

    problem = MultiLabel()
    built = training_problem(problem, examples(np.random.default_rng(2), 40))
    assert Outline.of(built).search_calls == SEARCH_CALLS == 3 < line_search.CALLS
    calls = [0]
    oracle = built.most_violated

    def counted(scores):
        calls[0] += 1
        return oracle(scores)

    built.most_violated = counted
    result = training.train(built, 100.0, 0.001)
    assert result.converged and calls[0] <= 1 + 3 * result.iterations


def test_training_a_problem_leaves_the_callers_options_alone():
    """The options a problem settles on its examples (SVM-multiclass's classes and features) go into the model,
    not into the options dict the caller handed over."""
    from svmstruct import problems, training
    from svmstruct.config import Settings
    from svmstruct.problems.multiclass import Multiclass

    examples_ = Multiclass().tiny_examples(np.random.default_rng(3))
    spec = problems.spec(Multiclass)
    opts = spec.resolve({})
    before = dict(opts)
    trained = next(training.train_grid(training.ExamplesSource(Multiclass(), examples_), spec, opts, Settings([1.0])))
    assert opts == before and opts["classes"] is None
    assert int(trained.options["classes"]) == int(max(examples_.y)) and int(trained.options["features"]) == 4
