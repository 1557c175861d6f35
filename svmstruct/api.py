"""Training as a library call: the one build -> train -> model sequence that the CLI, C selection, the
experiment scripts and the scikit-learn estimators all use."""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Iterator

from svmstruct import losses, model, train
from svmstruct import normalize as normalization
from svmstruct.data import Dataset
from svmstruct.errors import InputError
from svmstruct.losses.base import Loss
from svmstruct.options import UsageError


def resolve_loss(name: str, options: dict | None = None,
                 spelling: Callable[[str], str] | None = None) -> tuple[Loss, dict]:
    """The loss called `name` and its complete, checked options (defaults filled in); UsageError for an
    unknown loss, an option it does not take or a bad value. Nothing is read: call it first."""
    try:
        loss, implied = losses.lookup(name)
    except InputError as e:
        raise UsageError(e.message) from None
    return loss, loss.resolve(options or {}, implied, spelling)


def check_training_parameters(C: float, epsilon: float | None, max_iterations: int) -> None:
    """C and epsilon finite and positive, at least one iteration (UsageError otherwise)."""
    if not (isinstance(C, (int, float)) and math.isfinite(C) and C > 0):
        raise UsageError(f"C must be a finite positive number, got {C!r}")
    if epsilon is not None and not (math.isfinite(epsilon) and epsilon > 0):
        raise UsageError(f"epsilon must be a finite positive number, got {epsilon!r}")
    if not (isinstance(max_iterations, int) and max_iterations >= 1):
        raise UsageError(f"the iteration limit must be at least 1, got {max_iterations!r}")


def check_grid(grid: list, epsilon: float | None, max_iterations: int, checkpointed: bool = False) -> None:
    """Every C of the grid valid (check_training_parameters); a checkpointed run has one C."""
    for C in grid:
        check_training_parameters(C, epsilon, max_iterations)
    if checkpointed and len(grid) != 1:
        raise UsageError("a checkpoint holds one training run: train one C at a time")


def check_normalize(loss: Loss, normalize: str) -> None:
    """`normalize` is one of svmstruct.normalize.METHODS and applies to the loss (UsageError otherwise)."""
    if normalize not in normalization.METHODS:
        raise UsageError(f"normalize must be one of {', '.join(normalization.METHODS)}, got {normalize!r}")
    if normalize != "none" and loss.output == "subset":
        raise UsageError(f"normalize does not apply to loss {loss.name}: its features are built from the documents")


def train_grid(loss: Loss, opts: dict, data: Dataset, grid: Iterable[float], epsilon: float | None = None,
               max_iterations: int = 100000, progress: Callable[[dict], None] | None = None,
               normalize: str = "none", checkpoint: Callable[[dict], None] | None = None,
               resume: dict | None = None) -> Iterator[model.Model]:
    """Train `loss` with resolved options on `data` for every C of the grid in turn (the training problem
    is built once, and each C starts from the previous one's working set and best point); each model
    carries its TrainResult in `.result`. `normalize` (none, query, global:
    see svmstruct.normalize) transforms the features first and is recorded in the model. `checkpoint`
    and `resume` (one C only): see train.optimise."""
    grid = list(grid)
    check_grid(grid, epsilon, max_iterations, checkpoint is not None or resume is not None)
    check_normalize(loss, normalize)
    if loss.needs_qid and not data.has_qid:
        raise InputError(f"loss {loss.name} needs qid:<id> on every line", data.path)
    scale = None
    if normalize == "query":
        data = normalization.query_level(data)
    elif normalize == "global":
        scale = normalization.global_scale(data)
        data = normalization.scaled(data, scale)
    problem = loss.build(data, opts)
    eps = loss.default_epsilon if epsilon is None else float(epsilon)
    last: dict = {}  # the previous C's final state: the next C starts from it (train.optimise's warm_start)
    for C in grid:
        result = train.train(problem, float(C), eps, max_iterations, progress=progress, checkpoint=checkpoint,
                             resume=resume, warm_start=last.get("state"),
                             finished=lambda state: last.update(state=state))
        trained = model.from_training(loss, opts, data, problem, result, C, eps)
        if normalize != "none":
            trained.header["normalize"] = normalize
        if scale is not None:  # folded in: the model scores raw feature values
            trained.w = trained.w / scale
        yield trained


def train_loss(loss: Loss, opts: dict, data: Dataset, C: float = 1.0, epsilon: float | None = None,
               max_iterations: int = 100000, progress: Callable[[dict], None] | None = None,
               normalize: str = "none", checkpoint: Callable[[dict], None] | None = None,
               resume: dict | None = None) -> model.Model:
    """Train `loss` with resolved options on `data` for one C (see train_grid)."""
    return next(train_grid(loss, opts, data, [C], epsilon, max_iterations, progress, normalize, checkpoint, resume))


def problem(data: Dataset, loss: str = "errorrate", **options: Any):
    """The training problem of a loss on `data` (design matrix, n, oracle) without training it."""
    spec, opts = resolve_loss(loss, options)
    if spec.needs_qid and not data.has_qid:
        raise InputError(f"loss {spec.name} needs qid:<id> on every line", data.path)
    return spec.build(data, opts)


def fit(data: Dataset, loss: str = "errorrate", C: float = 1.0, epsilon: float | None = None,
        max_iterations: int = 100000, progress: Callable[[dict], None] | None = None, normalize: str = "none",
        **options: Any) -> model.Model:
    """Train a model on a Dataset (svmstruct.read_svmlight) with the loss called `loss` (a name of
    `svmstruct losses`, e.g. "map", "ndcg@10", "f1") and its options as keywords (beta=2, k=5, ...).

    >>> m = svmstruct.fit(svmstruct.read_svmlight("train.txt"), loss="map", C=10)
    >>> m.predict(svmstruct.read_svmlight("test.txt"))      # scores w.x - b, one per line
    """
    spec, opts = resolve_loss(loss, options)
    return train_loss(spec, opts, data, C, epsilon, max_iterations, progress, normalize)
