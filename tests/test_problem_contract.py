"""The contract of every registered structured problem (svmstruct.spec.Problem), checked generically over the
registry as test_loss_contract.py checks the losses: names and options (each option at its default and at every
example value it declares), the oracles against exhaustive enumeration of the outputs on the problem's own tiny
examples (random, zero and integer weights: ties), the all-at-once cut against the one-at-a-time cut, and training
to a certified gap with a model that round-trips through its file. A problem registered later (the toy below,
tests/multilabel_problem.py) is checked the moment it is registered."""
import multilabel_problem
import numpy as np
import pytest

from svmstruct import api, model, problems, registry
from svmstruct.errors import UsageError
from svmstruct.problems import StructuredProblem
from svmstruct.spec import Problem

PROBLEMS = sorted(registry.PROBLEMS)


def option_sets(spec: Problem):
    """The defaults, then each example value each option declares (rescaling is the cut's, tried there)."""
    yield {}
    for option in spec.options:
        if option.name != "rescaling":
            for value in option.examples:
                yield {option.name: value}


def margin_value(problem, x, y, ybar, w):
    return problem.loss(y, ybar) + w @ problem.vector(x, ybar, len(w))


def slack_value(problem, x, y, ybar, w):
    return problem.loss(y, ybar) * (1 + w @ (problem.vector(x, ybar, len(w)) - problem.vector(x, y, len(w))))


def score(problem, x, y, ybar, w):
    return w @ problem.vector(x, ybar, len(w))


def attains_the_maximum(problem, found, value, x, y, w):
    best = max(value(problem, x, y, out, w) for out in problem.outputs(x))
    assert value(problem, x, y, found, w) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("name", PROBLEMS)
def test_names_and_options(name):
    spec = registry.PROBLEMS[name]
    assert spec.kind == "structured" and spec.name == problems.spec_of(spec.problem())
    assert registry.problem(spec.name) is spec and all(registry.problem(alias) is spec for alias in spec.aliases)
    assert spec.option("rescaling") is not None and spec.default_epsilon > 0 and spec.formats
    for option in spec.options:
        for value in option.examples:
            assert spec.resolve({option.name: value})[option.name] == option.parse(value)
    with pytest.raises(UsageError, match="does not apply"):
        spec.resolve({"no_such_option": 1})


@pytest.mark.parametrize("name", PROBLEMS)
def test_the_oracles_attain_the_best_enumerated_output(name):
    spec = registry.PROBLEMS[name]
    for opts in option_sets(spec):
        for seed in range(4):
            rng = np.random.default_rng(seed)
            problem = spec.instance(spec.resolve(opts))
            examples = problem.tiny_examples(rng)
            dim = int(problem.dimension(examples))
            for w in (rng.normal(size=dim), np.zeros(dim), np.round(rng.normal(size=dim))):
                for x, y in list(examples)[:4]:
                    attains_the_maximum(problem, problem.most_violated(x, y, w), margin_value, x, y, w)
                    if problem.has_slack_oracle():
                        attains_the_maximum(problem, problem.most_violated_slack(x, y, w), slack_value, x, y, w)
                    attains_the_maximum(problem, problem.predict(x, w), score, x, y, w)
                for rescaling in (2, 1) if problem.has_slack_oracle() else (2,):
                    fast, total = problem.cut(examples, w, rescaling)
                    slow, slow_total = StructuredProblem.cut(problem, list(examples), w, rescaling)
                    np.testing.assert_allclose(fast, slow, atol=1e-9)
                    assert total == pytest.approx(slow_total, abs=1e-9)


@pytest.mark.parametrize("name", PROBLEMS)
def test_training_converges_with_a_certified_gap_and_the_model_round_trips(name, tmp_path):
    spec = registry.PROBLEMS[name]
    for rescaling in (2, 1):
        problem = spec.instance(spec.resolve({}))
        if rescaling == 1 and not problem.has_slack_oracle():
            continue
        examples = problem.tiny_examples(np.random.default_rng(1))
        trained = api.fit_problem(problem, examples, C=10.0, rescaling=rescaling, max_iterations=2000)
        result = trained.result
        assert result.converged and np.all(np.isfinite(trained.w))
        assert result.primal - result.dual <= trained.C * trained.epsilon * (1 + 1e-6)  # 1-slack: xi within epsilon
        path = tmp_path / f"m{rescaling}.model"
        trained.save(str(path))
        loaded = model.load_model(str(path))
        assert loaded.loss == spec.name
        np.testing.assert_array_equal(loaded.w, trained.w)
        expected = [spec.problem().format(y) for y in problems.predict(trained, examples)]
        assert [spec.problem().format(y) for y in problems.predict(loaded, examples)] == expected


@pytest.fixture
def toy_registered():
    registry.register(multilabel_problem)
    yield registry.PROBLEMS["multilabel_problem:MultiLabel"]
    registry.unregister(multilabel_problem)


def test_the_battery_runs_on_a_problem_registered_from_outside(toy_registered, tmp_path):
    """A problem of yours (tests/multilabel_problem.py: one module, its option --labels declaring an example value)
    is listed by `svmstruct losses` once registered and passes the same battery, its option tried at that value."""
    name = toy_registered.name
    assert {"labels": 2} in list(option_sets(toy_registered))
    test_names_and_options(name)
    test_the_oracles_attain_the_best_enumerated_output(name)
    test_training_converges_with_a_certified_gap_and_the_model_round_trips(name, tmp_path)
