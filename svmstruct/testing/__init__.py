"""The contract batteries as public checkers (scikit-learn's check_estimator is the shape): `check_problem(MyProblem)`
checks a structured problem of yours in one call, as the suite checks svmstruct's own (tests/test_problem_contract.py
calls these functions for every registered problem); `check_loss("map")` a registered document loss
(svmstruct.testing.loss_battery, what tests/test_loss_contract.py runs for every loss).

What is checked (docs/problems.md, "The contract"):
- names and options: every option the class declares resolves at its default and at each of its `examples`;
- the oracles against enumeration: on the problem's own tiny_examples (several seeds) and random, zero and integer
  weights (ties), most_violated attains max_ybar Delta(y, ybar) + w.Psi(x, ybar), most_violated_slack (when given)
  max_ybar Delta(y, ybar) (1 + w.Psi(x, ybar) - w.Psi(x, y)), predict max_y w.Psi(x, y), each over outputs(x);
  the problem's cut (all examples at once, when it gives one) equals the one-example-at-a-time cut; a problem that
  keeps its oracle's outputs (cached_cut) gives their cut as violated as the oracle's at the w of the last call, and
  no more violated at another w;
- training: svmstruct.fit_problem converges with a certified duality gap (within C epsilon), every weight finite,
  with each rescaling the problem offers, and the model predicts alike after a round trip through its file.

Each check raises AssertionError saying what failed, on which option set, seed and example.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from svmstruct.testing.loss_battery import check_loss  # noqa: F401 - public: the document losses' battery

TOLERANCE = 1e-9  # an oracle's value against the enumerated maximum; the fast cut against the slow one


def check_problem(problem: Any, seeds: int = 4) -> None:
    """Every check of the battery on PROBLEM: a StructuredProblem subclass, an instance of one (its class is
    checked), or the name of a registered problem (`multiclass`, MODULE:CLASS)."""
    spec = problem_spec(problem)
    check_names_and_options(spec)
    check_oracles(spec, seeds)
    check_training(spec)


def problem_spec(problem: Any):
    """The spec (svmstruct.spec.Problem) of a problem class, instance or registered name."""
    from svmstruct import problems, registry
    from svmstruct.problems.base import StructuredProblem

    if isinstance(problem, str):
        return registry.problem(problem)
    cls = type(problem) if isinstance(problem, StructuredProblem) else problem
    if not (isinstance(cls, type) and issubclass(cls, StructuredProblem)):
        raise TypeError(f"check_problem takes a StructuredProblem subclass, instance or name, got {problem!r}")
    name = problems.spec_of(cls())
    found = registry.PROBLEMS.get(name)
    return found if found is not None and found.problem is cls else problems.spec(cls)


def option_sets(spec) -> Iterator[dict]:
    """The defaults, then each example value each declared option gives (rescaling is the cut's, tried there)."""
    yield {}
    for option in spec.options:
        if option.name != "rescaling":
            for value in option.examples:
                yield {option.name: value}


def check_names_and_options(spec) -> None:
    """The spec's name is the class's MODULE:CLASS (and the registry's, when registered); every declared option
    resolves at each example value; an unknown option is refused."""
    from svmstruct import problems, registry
    from svmstruct.errors import UsageError

    _require(spec.kind == "structured" and spec.name == problems.spec_of(spec.problem()),
             f"{spec.name}: the spec's name is not the class's MODULE:CLASS")
    if spec.name in registry.PROBLEMS:
        _require(registry.problem(spec.name) is spec and all(registry.problem(a) is spec for a in spec.aliases),
                 f"{spec.name}: the registry does not find the problem by its name and aliases")
    _require(spec.option("rescaling") is not None and spec.default_epsilon > 0,
             f"{spec.name}: no rescaling option or no positive default epsilon")
    for option in spec.options:
        for value in option.examples:
            _require(spec.resolve({option.name: value})[option.name] == option.parse(value),
                     f"{spec.name}: option {option.name} does not resolve its example value {value!r}")
    try:
        spec.resolve({"no_such_option": 1})
    except UsageError:
        return
    raise AssertionError(f"{spec.name}: an option it does not declare was taken")


def check_oracles(spec, seeds: int = 4) -> None:
    """The oracles and the prediction against enumeration, and the cut against one example at a time (module
    docstring), for every option set and SEEDS seeds of tiny_examples."""
    from svmstruct.problems.base import StructuredProblem

    for opts in option_sets(spec):
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            problem = spec.instance(spec.resolve(opts))
            examples = problem.tiny_examples(rng)
            dim = int(problem.dimension(examples))
            where = f"{spec.name} with {opts or 'its defaults'}, seed {seed}"
            for kind, w in (("random", rng.normal(size=dim)), ("zero", np.zeros(dim)),
                            ("integer", np.round(rng.normal(size=dim)))):
                for i, (x, y) in enumerate(list(examples)[:4]):
                    at = f"{where}, {kind} w, example {i}"
                    _attains(problem, problem.most_violated(x, y, w), _margin, x, y, w, f"most_violated: {at}")
                    if problem.has_slack_oracle():
                        _attains(problem, problem.most_violated_slack(x, y, w), _slack, x, y, w,
                                 f"most_violated_slack: {at}")
                    _attains(problem, problem.predict(x, w), _score, x, y, w, f"predict: {at}")
                for rescaling in (2, 1) if problem.has_slack_oracle() else (2,):
                    fast, total = problem.cut(examples, w, rescaling)
                    slow, slow_total = StructuredProblem.cut(problem, list(examples), w, rescaling)
                    _require(np.allclose(np.asarray(fast, dtype=float), slow, rtol=1e-7, atol=TOLERANCE)
                             and abs(total - slow_total) <= TOLERANCE,
                             f"cut (rescaling {rescaling}): {where}, {kind} w: not the one-example-at-a-time cut")
                    if type(problem).cached_cut is not StructuredProblem.cached_cut:
                        check_kept_outputs(problem, examples, w, rescaling, (fast, total), rng,
                                           f"{where}, {kind} w, rescaling {rescaling}")


def check_kept_outputs(problem, examples, w: np.ndarray, rescaling: int, found: tuple, rng, where: str) -> None:
    """A problem that keeps its oracle's outputs (cached_cut): at the w of its last cut, whose answers it kept, the kept
    outputs' cut is violated as much as the oracle's (the oracle's is the most violated); at another w, no more than
    the oracle's there."""
    def violation(cut: tuple, at: np.ndarray) -> float:
        return float(cut[1]) - float(at @ np.asarray(cut[0], dtype=float))

    kept = problem.cached_cut(examples, w, rescaling)
    _require(kept is not None and abs(violation(kept, w) - violation(found, w)) <= TOLERANCE * max(1.0, abs(
        violation(found, w))), f"cached_cut: {where}: at the w of the last cut, not the oracle's violation")
    other = rng.normal(size=len(w))
    kept = problem.cached_cut(examples, other, rescaling)
    _require(kept is not None and violation(kept, other) <= violation(problem.cut(examples, other, rescaling), other)
             + TOLERANCE * max(1.0, abs(violation(kept, other))),
             f"cached_cut: {where}: at another w, more violated than the oracle's cut")


def check_training(spec, C: float = 10.0) -> None:
    """fit_problem on the default options' tiny examples converges with a certified gap, and the model predicts
    alike after a round trip through its file (module docstring)."""
    from svmstruct import api, model, problems

    for rescaling in (2, 1):
        problem = spec.instance(spec.resolve({}))
        if rescaling == 1 and not problem.has_slack_oracle():
            continue
        examples = problem.tiny_examples(np.random.default_rng(1))
        trained = api.fit_problem(problem, examples, C=C, rescaling=rescaling, max_iterations=2000)
        result = trained.result
        where = f"{spec.name}, rescaling {rescaling}"
        _require(result.converged and bool(np.all(np.isfinite(trained.w))),
                 f"training did not converge to finite weights: {where} ({result.status})")
        _require(result.primal - result.dual <= C * float(trained.epsilon or spec.default_epsilon) * (1 + 1e-6),
                 f"the duality gap {result.primal - result.dual:g} is above C epsilon: {where}")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "problem.model"
            trained.save(path)
            loaded = model.load_model(path)
        _require(loaded.loss == spec.name and np.array_equal(loaded.w, trained.w),
                 f"the model file does not give back the problem's name and weights: {where}")
        expected = [spec.problem().format(y) for y in problems.predict(trained, examples)]
        again = [spec.problem().format(y) for y in problems.predict(loaded, examples)]
        _require(again == expected, f"the model predicts otherwise after its round trip: {where}")


def _margin(problem, x, y, ybar, w) -> float:
    return problem.loss(y, ybar) + w @ problem.vector(x, ybar, len(w))


def _slack(problem, x, y, ybar, w) -> float:
    return problem.loss(y, ybar) * (1 + w @ (problem.vector(x, ybar, len(w)) - problem.vector(x, y, len(w))))


def _score(problem, x, y, ybar, w) -> float:
    return w @ problem.vector(x, ybar, len(w))


def _attains(problem, found, value, x, y, w, what: str) -> None:
    best = max(value(problem, x, y, out, w) for out in problem.outputs(x))
    got = value(problem, x, y, found, w)
    _require(abs(got - best) <= TOLERANCE * max(1.0, abs(best)),
             f"{what}: its output scores {got!r}, the best enumerated output {best!r}")


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)
