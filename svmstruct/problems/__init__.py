"""Your own structured problem (svm_struct's API; docs/problems.md): subclass problems.base.StructuredProblem,
then train it with svmstruct.fit_problem(problem, examples, C=...) or `svmstruct learn --problem MODULE:CLASS`.
A problem becomes a Loss (as_loss) so that model files, checkpoints and the C grid treat it as any other."""
from __future__ import annotations

from collections.abc import Sequence

from svmstruct.errors import InputError
from svmstruct.problems.base import MARGIN, RESCALINGS, StructuredProblem, load, spec_of
from svmstruct.spec import Loss, Option

RESCALING = Option("rescaling", ("-o",), "int", "svm_struct's rescaling: 1 slack, 2 margin", default=MARGIN,
                   check=lambda v: None if v in RESCALINGS else "must be 1 (slack) or 2 (margin)")


def as_loss(cls: type) -> Loss:
    """The Loss of a problem class: its MODULE:CLASS name, -o and the options it declares (cls.declared)."""
    spec = f"{cls.__module__}:{cls.__qualname__}"
    summary = (cls.__doc__ or spec).strip().splitlines()[0]
    # predict: classify's writer of a problem's model (it reads the test file itself: classify hands it the path)
    return Loss(spec, (), "problem", summary, build=_not_built, default_epsilon=0.1,
                options=(RESCALING, *getattr(cls, "declared", ())), output="structured", predict=classify,
                formats=("labels",), plain_features=False, default_C=None)


def built_in_options() -> dict:
    """{flag: [(short name, Option), ...]}: the options that svmstruct's own problems declare, by the flags their
    originals spell them with (`learn` offers these flags; svm_hmm's --t and --b share theirs with the kernel's basis
    and svm_perf's bias, which do not apply to a problem: config.Run moves such values to the problem)."""
    from svmstruct.problems.base import BUILT_IN

    flags: dict = {}
    for short in BUILT_IN:
        for option in getattr(load(short), "declared", ()):
            for flag in option.flags:
                flags.setdefault(flag, []).append((short, option))
    return flags


def _not_built(data, opts):
    raise TypeError("a problem is trained over its examples (problems.base.ExamplesSource), not a Dataset")


def instance(loss: Loss, opts: dict) -> StructuredProblem:
    """The problem of a problem's Loss with its options (rescaling aside)."""
    cls = load(loss.name)
    return cls(**{k: v for k, v in opts.items() if k != "rescaling"})


def predict(trained, examples: Sequence, problem: str | None = None, source: str | None = None) -> list:
    """The predictions of a problem's model (trained, or read from its file) for examples [(x, y), ...]. PROBLEM:
    the MODULE:CLASS a user names for a model read from SOURCE (problem_of)."""
    structured = problem_of(trained, problem, source)
    return _predictions(structured, trained, examples, source)


def _predictions(structured: StructuredProblem, trained, examples: Sequence, source: str | None) -> list:
    dim = int(structured.dimension(examples))
    if dim != trained.n_features:  # options edited, or a damaged file: the weights would be read wrongly
        options = ", ".join(f"{k} {v}" for k, v in structured.options.items() if v is not None)
        raise InputError(f"the model has {trained.n_features} weights, its problem ({options}) has {dim}: the "
                         "options do not fit the weights (an edited or damaged model?)", source)
    return [structured.predict(x, trained.w) for x, _ in examples]


def problem_of(trained, named: str | None = None, source: str | None = None,
               overrides: dict | None = None) -> StructuredProblem:
    """The problem a model was trained on, with the options its file records (and OVERRIDES: classify's, e.g. the
    beam); a model read from the file SOURCE loads a module that is not svmstruct's only when NAMED (the command
    line's --problem) names it (base.load)."""
    from svmstruct.errors import UsageError

    loss = as_loss(load(trained.loss, named, source))
    for key in overrides or {}:
        if loss.option(key) is None:
            raise UsageError(f"the model's problem {loss.name} takes no option {key}")
    options = {k: v for k, v in trained.options.items() if loss.option(k) is not None}
    return instance(loss, loss.resolve({**options, **(overrides or {})}))


def classify(trained, path: str, named: str | None = None, source: str | None = None,
             overrides: dict | None = None) -> str:
    """`svmstruct classify` of a problem's model read from SOURCE: one format(y) line per example of the file at
    `path`."""
    structured = problem_of(trained, named, source, overrides)
    predictions = _predictions(structured, trained, structured.read(path), source)
    return "".join(structured.format(y) + "\n" for y in predictions)


__all__ = ["StructuredProblem", "as_loss", "classify", "instance", "load", "predict", "problem_of", "spec_of",
           "RESCALING"]
