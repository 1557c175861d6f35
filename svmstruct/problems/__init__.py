"""Your own structured problem (svm_struct's API; docs/problems.md): subclass problems.base.StructuredProblem,
then train it with svmstruct.fit_problem(problem, examples, C=...), StructuredSVM(problem, C=...).fit(X, Y) or
`svmstruct learn --problem MODULE:CLASS`. Its spec (svmstruct.spec.Problem: names, options, build, predict) is what
the registry lists for svmstruct's own problems and what model files, checkpoints and the C grid use."""
from __future__ import annotations

from collections.abc import Sequence

from svmstruct.problems.base import BUILT_IN, StructuredProblem, load, spec_of
from svmstruct.spec import RESCALING, Problem


def spec(cls: type) -> Problem:
    """The spec of a problem class (svmstruct's own ones with their short names, as the registry lists them)."""
    name = f"{cls.__module__}:{cls.__qualname__}"
    return Problem.of(cls, tuple(short for short, full in BUILT_IN.items() if full == name))


def named(name: str, problem: str | None = None, source: str | None = None) -> Problem:
    """The spec of the problem called NAME (MODULE:CLASS or a short name of svmstruct's); for a name read from the
    file SOURCE, PROBLEM is the command line's --problem (base.load: what may be imported)."""
    return spec(load(name, problem, source))


def predict(trained, examples: Sequence, problem: str | None = None, source: str | None = None) -> list:
    """The predictions of a problem's model (trained, or read from its file) for examples [(x, y), ...]. PROBLEM:
    the MODULE:CLASS a user names for a model read from SOURCE."""
    found = named(trained.loss, problem, source)
    return found.predictions(found.trained_instance(trained, source=source), trained, examples, source)


__all__ = ["StructuredProblem", "load", "named", "predict", "spec", "spec_of", "RESCALING"]
