"""The contract of every registered structured problem (svmstruct.spec.Problem), checked generically over the
registry by the public battery (svmstruct.testing: names and options, the oracles against enumeration on the
problem's own tiny examples, the all-at-once cut against the one-at-a-time cut, training to a certified gap and the
model file's round trip). A problem registered later (tests/multilabel_problem.py) is checked the moment it is
registered, and a problem of yours in one call (check_problem); a broken oracle is caught and named."""
import multilabel_problem
import numpy as np
import pytest

from svmstruct import registry, testing

PROBLEMS = sorted(registry.PROBLEMS)


@pytest.mark.parametrize("name", PROBLEMS)
def test_names_and_options(name):
    testing.check_names_and_options(registry.PROBLEMS[name])


@pytest.mark.parametrize("name", PROBLEMS)
def test_the_oracles_attain_the_best_enumerated_output(name):
    testing.check_oracles(registry.PROBLEMS[name])


@pytest.mark.parametrize("name", PROBLEMS)
def test_training_converges_with_a_certified_gap_and_the_model_round_trips(name):
    testing.check_training(registry.PROBLEMS[name])


@pytest.fixture
def toy_registered():
    registry.register(multilabel_problem)
    yield registry.PROBLEMS["multilabel_problem:MultiLabel"]
    registry.unregister(multilabel_problem)


def test_the_battery_runs_on_a_problem_registered_from_outside(toy_registered):
    """A problem of yours (tests/multilabel_problem.py: one module, its option --labels declaring an example value)
    is listed by `svmstruct losses` once registered and passes the same battery, its option tried at that value."""
    assert {"labels": 2} in list(testing.option_sets(toy_registered))
    assert testing.problem_spec("multilabel_problem:MultiLabel") is toy_registered
    testing.check_problem(toy_registered.name)


def test_check_problem_takes_a_class_or_an_instance_unregistered():
    testing.check_problem(multilabel_problem.MultiLabel, seeds=2)
    testing.check_problem(multilabel_problem.MultiLabel(labels=2), seeds=1)
    with pytest.raises(TypeError, match="takes a StructuredProblem subclass"):
        testing.check_problem(42)


class WrongOracle(multilabel_problem.MultiLabel):
    """most_violated returns the truth: not the argmax whenever a label is worth flipping."""

    def most_violated(self, x, y, w):
        return y


class WrongCut(multilabel_problem.MultiLabel):
    def cut(self, examples, w, rescaling):
        found, total = super().cut(examples, w, rescaling)
        return np.asarray(found) * 2.0, total


@pytest.mark.parametrize("broken, message", [
    (WrongOracle, r"most_violated: .*WrongOracle with its defaults, seed 0, random w, example \d: its output scores"),
    (WrongCut, r"cut \(rescaling 2\): .*WrongCut with its defaults, seed 0, random w: not the one-example-at-a-time"),
])
def test_a_broken_problem_is_caught_and_named(broken, message):
    with pytest.raises(AssertionError, match=message):
        testing.check_problem(broken)
