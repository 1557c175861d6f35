"""Training as a library call, the doors: fit (a Dataset and a loss by name), fit_problem (a structured problem of
yours), fit_shards (shards on Dask workers); each checks its run (config.Run) and hands it to the one pipeline
(svmstruct.training.train_grid) that `learn`, C selection and the scikit-learn estimators use too."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, Iterable

from svmstruct import model
from svmstruct.config import Run, Settings, resolve_loss
from svmstruct.errors import InputError
from svmstruct.io.data import Dataset
from svmstruct.options import MAX_ITERATIONS
from svmstruct.spec import Loss
from svmstruct.train import loop
from svmstruct.training import ExamplesSource, LocalSource, train_grid, train_run

if TYPE_CHECKING:
    from svmstruct.kernels import nystroem


def train_loss(loss: Loss, opts: dict, data: Dataset, C: float = 1.0, progress: Callable[[dict], None] | None = None,
               kernel: nystroem.Spec | None = None, **settings: Any) -> model.Model:
    """Train `loss` with resolved options on `data` for one C (train_grid on a LocalSource; with a kernel,
    over its map); settings: epsilon, max_iterations, normalize (config.Settings')."""
    callbacks = (loop.Progress(progress),) if progress else ()
    return next(train_grid(LocalSource(data, kernel), loss, opts, Settings([C], **settings), callbacks))


def select_C(loss: Loss, opts: dict, data: Dataset, validation: Dataset, measure: str, settings: Settings,
             kernel: nystroem.Spec | None = None, log: Callable[[str], None] | None = None) -> tuple:
    """Train for every C of settings.grid (with a kernel: over its map); the model with the best mean `measure`
    on `validation` (selection.select_model: ties go to the smaller C). Returns (best GridPoint, all GridPoints)."""
    from svmstruct import selection

    models = train_grid(LocalSource(data, kernel), loss, opts, settings)
    return selection.select_model(models, validation, measure, float(opts.get("rel_threshold") or 0.0), log)


def problem(data: Dataset, loss: str = "errorrate", **options: Any):
    """The training problem of a loss on `data` (design matrix, n, oracle) without training it."""
    spec, opts = resolve_loss(loss, options)
    if spec.needs_qid and not data.has_qid:
        raise InputError(f"loss {spec.name} needs qid:<id> on every line", data.path)
    return spec.build(data, opts)


def fit(data: Dataset, loss: str = "errorrate", C: float | None = None,
        progress: Callable[[dict], None] | None = None, **options: Any) -> model.Model:
    """Train a model on a Dataset (svmstruct.read_svmlight) with the loss called `loss` (a name of
    `svmstruct losses`, e.g. "map", "ndcg@10", "f1"), its options as keywords (beta=2, k=5, ...) and the
    run's: epsilon, max_iterations, normalize ("none", "query", "global") and kernel (a nystroem.Spec, learn -t:
    a kernel expansion over a basis instead of a linear model), checkpoint (a file the training state is saved to as
    it goes, removed once it converged: learn's --checkpoint) and resume (True: continue from that file, as
    --resume); C None: the loss's default C.

    >>> m = svmstruct.fit(svmstruct.read_svmlight("train.txt"), loss="map", C=10)
    >>> m.predict(svmstruct.read_svmlight("test.txt"))      # scores w.x - b, one per line
    """
    run = Run.of(loss, C, **options).check()
    return train_run(run, LocalSource(data, run.kernel), progress, data)


def fit_problem(problem, examples: Sequence, C: float, epsilon: float | None = None,
                max_iterations: int = MAX_ITERATIONS, rescaling: int = 2,
                progress: Callable[[dict], None] | None = None, callbacks: Iterable = ()) -> model.Model:
    """Train a structured problem of yours (svmstruct.problems.StructuredProblem: Psi, Delta, the oracle) on
    its examples [(x, y), ...]; rescaling 2 (margin) or 1 (slack), svm_struct's -o (docs/problems.md).

    >>> m = svmstruct.fit_problem(MultiLabel(), examples, C=10)
    >>> svmstruct.problems.predict(m, test_examples)
    """
    from svmstruct import problems

    loss = problems.spec(type(problem))
    opts = loss.resolve({"rescaling": rescaling, **problem.options})
    settings = Settings([C], epsilon, max_iterations).check(loss)
    callbacks = [*((loop.Progress(progress),) if progress else ()), *callbacks]
    return next(train_grid(ExamplesSource(problem, examples), loss, opts, settings, callbacks))


def fit_shards(paths: list, loss: str = "pairs", C: float | None = None, *, client=None, workers: int | None = None,
               scheduler: str | None = None, progress: Callable[[dict], None] | None = None,
               **keywords: Any) -> model.Model:
    """fit on shard files read by Dask workers (svmstruct.train.distributed): on `client` (a distributed.Client
    of yours), on the cluster at `scheduler`, or on a local cluster of `workers` processes started for the call.
    keywords: epsilon, max_iterations and normalize as fit's, and the loss's options.

    >>> m = svmstruct.fit_shards(["train-0.txt", "train-1.txt"], loss="map", C=10, workers=2)
    """
    from svmstruct.train import distributed

    run = Run.of(loss, C, **keywords).check()
    close = None
    threads = None
    if client is None:
        client, close, threads = distributed.client_for(workers if scheduler is None else None, scheduler)
    try:
        source = distributed.ClusterSource(distributed.Cluster(client, list(paths), threads=threads))
        return train_run(run, source, progress)
    finally:
        if close:
            close()
