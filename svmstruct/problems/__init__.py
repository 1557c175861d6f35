"""Your own structured problem (svm_struct's API; docs/problems.md): subclass problems.base.StructuredProblem,
then train it with svmstruct.fit_problem(problem, examples, C=...) or `svmstruct learn --problem MODULE:CLASS`.
A problem becomes a Loss (as_loss) so that model files, checkpoints and the C grid treat it as any other."""
from __future__ import annotations

import numpy as np

from svmstruct.losses.base import Loss
from svmstruct.options import Option
from svmstruct.problems.base import MARGIN, RESCALINGS, StructuredProblem, load, spec_of

RESCALING = Option("rescaling", ("-o",), "int", "svm_struct's rescaling: 1 slack, 2 margin", default=MARGIN,
                   check=lambda v: None if v in RESCALINGS else "must be 1 (slack) or 2 (margin)")


def as_loss(cls: type) -> Loss:
    """The Loss of a problem class: its MODULE:CLASS name, -o and the options it declares (cls.declared)."""
    spec = f"{cls.__module__}:{cls.__qualname__}"
    summary = (cls.__doc__ or spec).strip().splitlines()[0]
    # predict: classify's writer of a problem's model (it reads the test file itself: classify hands it the path)
    return Loss(spec, (), "problem", summary, build=_not_built, default_epsilon=0.1,
                options=(RESCALING, *getattr(cls, "declared", ())), output="structured", predict=classify,
                formats=("labels",), plain_features=False)


def _not_built(data, opts):
    raise TypeError("a problem is trained over its examples (problems.base.ExamplesSource), not a Dataset")


def instance(loss: Loss, opts: dict) -> StructuredProblem:
    """The problem of a problem's Loss with its options (rescaling aside)."""
    cls = load(loss.name)
    return cls(**{k: v for k, v in opts.items() if k != "rescaling"})


def predict(trained, examples: list) -> list:
    """The predictions of a problem's model (trained, or read from its file) for examples [(x, y), ...]."""
    problem = problem_of(trained)
    dim = int(problem.dimension(examples))
    w = np.zeros(max(dim, len(trained.w)))
    w[:len(trained.w)] = trained.w
    return [problem.predict(x, w[:dim]) for x, _ in examples]


def problem_of(trained) -> StructuredProblem:
    """The problem a model was trained on, with the options its file records."""
    loss = as_loss(load(trained.loss))
    return instance(loss, loss.resolve({k: v for k, v in trained.options.items() if loss.option(k) is not None}))


def classify(trained, path: str, fmt: str = "labels", tag: str = "") -> str:
    """`svmstruct classify` of a problem's model: one format(y) line per example of the file at `path`."""
    problem = problem_of(trained)
    return "".join(problem.format(y) + "\n" for y in predict(trained, problem.read(path)))


__all__ = ["StructuredProblem", "as_loss", "classify", "instance", "load", "predict", "problem_of", "spec_of",
           "RESCALING"]
