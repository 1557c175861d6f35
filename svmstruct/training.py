"""The pipeline behind the doors (api.fit, api.fit_problem, api.fit_shards, the estimators, `learn`): a checked run's
loss, options and settings -> prepare -> train every C -> a model, over either training source: data in this process
(LocalSource), a structured problem's examples (ExamplesSource) or shards on Dask workers
(svmstruct.train.distributed.ClusterSource)."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

import numpy as np

from svmstruct import model, registry
from svmstruct.compute import threads
from svmstruct.dataset import normalize as normalization
from svmstruct.dataset.arrays import largest_magnitude
from svmstruct.errors import InputError, NumericalError, UsageError
from svmstruct.io.data import Dataset, read_basis
from svmstruct.options import MAX_ITERATIONS
from svmstruct.spec import Loss, Trainable
from svmstruct.train import loop
from svmstruct.train.evaluator import LocalEvaluator
from svmstruct.train.loop_state import LoopState
from svmstruct.train.problem import Outline, Prepared, TrainingProblem, TrainingSummary

if TYPE_CHECKING:
    from svmstruct.config import CheckedRun, Settings
    from svmstruct.kernels import nystroem


def train(problem: TrainingProblem, C: float, epsilon: float, max_iterations: int = MAX_ITERATIONS,
          line_search: bool | None = None, start: LoopState | None = None, callbacks=()) -> loop.TrainResult:
    """Train w for `problem` in this process with regularisation C and epsilon in the loss's units (times
    problem.epsilon_scale): the cutting-plane loop (svmstruct.train.loop.optimise) over a LocalEvaluator."""
    return loop.optimise(LocalEvaluator(problem), Outline.of(problem), C, epsilon, max_iterations, line_search, start,
                         callbacks)


def loss_options(trained: model.Model) -> dict:
    """A model's loss options typed (as Option.parse gives them), also for a model read from a file."""
    loss, implied = registry.lookup(trained.loss)
    return loss.resolve({k: v for k, v in trained.options.items() if loss.option(k) is not None}, implied)


class LocalSource:
    """Training data in this process (a Dataset): one TrainingProblem, a LocalEvaluator per run. With a
    kernel (kernel_map.Spec) the features are mapped first (the Nystroem stage between data and trainer).
    The other source is svmstruct.distributed.ClusterSource (shards on Dask workers); train_grid takes either."""

    def __init__(self, dataset: Dataset, kernel: nystroem.Spec | None = None):
        self.dataset = dataset
        self.kernel = kernel
        self.problem = None

    def prepare(self, loss: Loss, opts: dict, normalize: str) -> Prepared:
        data = self.dataset
        if loss.needs_qid and not data.has_qid:
            raise InputError(f"loss {loss.name} needs qid:<id> on every line", data.path)
        largest = largest_magnitude(data)
        scale = mapping = None
        if normalize == "query":
            data = normalization.query_level(data)
        elif normalize == "global":
            scale = normalization.global_scale(data)
            data = normalization.scaled(data, scale)
        if self.kernel is not None:
            from svmstruct.kernels import nystroem
            from svmstruct.kernels.kernel_functions import Rows

            self.kernel.check_for(loss, normalize)
            rows = Rows.of(data)
            mapping = nystroem.KernelMap.over(self.kernel.kernel, nystroem.select(
                self.kernel, rows.size, rows.select, read_basis))
            data = dataclasses.replace(data, X=mapping.map(rows), columns=None)
        self.problem = built = loss.build(data, opts)
        return Prepared(Outline.of(built), TrainingSummary.of(data, built), largest, scale, mapping)

    def evaluator(self, prepared: Prepared) -> LocalEvaluator:
        assert self.problem is not None
        return LocalEvaluator(self.problem)

    def judge(self, trained: model.Model, loss: Trainable, opts: dict) -> None:
        """Whether the model learned, by its measure on its training data (judge_learning)."""
        judge_learning(trained, loss, opts, self.dataset)


class ExamplesSource:
    """Examples [(x, y), ...] of a structured problem (svmstruct.problems) in this process: its TrainingProblem over
    the identity design (problems.base.training_problem), a LocalEvaluator per run. With a kernel (nystroem.Spec,
    learn --problem ... -t) the examples' feature vectors are mapped first (phi(x), over a basis drawn from them)."""

    def __init__(self, problem, examples: Sequence, path: str = "<examples>", kernel: nystroem.Spec | None = None):
        self.structured, self.examples, self.path, self.kernel = problem, examples, path, kernel
        self.problem: TrainingProblem | None = None

    def prepare(self, loss, opts: dict, normalize: str) -> Prepared:
        if normalize != "none":
            raise UsageError("--normalize applies to feature files; a problem's Psi is its own")
        examples, mapping = self.examples, None
        if self.kernel is not None:
            examples, mapping = self._mapped(loss)
        self.problem = built = self.structured.training_problem(examples, int(opts["rescaling"]))
        n = len(examples)
        summary = TrainingSummary(self.path, n, None, n, 0, n, 0.0, built.info)
        # the options the problem settled on its examples (SVM-multiclass's classes) are the model's
        settled = {k: v for k, v in self.structured.options.items() if v is not None}
        return Prepared(Outline.of(built), summary, 0.0, kernel_map=mapping, settled=settled)

    def _mapped(self, loss) -> tuple:
        """(the examples through the kernel map, the map) of learn --problem ... -t: the basis drawn from every
        feature vector of the examples (feature_rows) as learn -t draws it from documents (config.Run.check refused
        a problem without feature vectors)."""
        from svmstruct.kernels import nystroem
        from svmstruct.kernels.kernel_functions import Rows

        if self.structured.options.get("features") is not None:
            raise UsageError("--features with -t: the problem's features are the kernel map's, as many as its basis")
        assert self.kernel is not None
        rows = Rows.of(self.structured.feature_rows(self.examples))
        mapping = nystroem.KernelMap.over(self.kernel.check().kernel, nystroem.select(
            self.kernel, rows.size, rows.select, read_basis))
        return self.structured.with_rows(self.examples, mapping.map(rows)), mapping

    def evaluator(self, prepared: Prepared) -> LocalEvaluator:
        assert self.problem is not None
        return LocalEvaluator(self.problem)

    def judge(self, trained: model.Model, loss: Trainable, opts: dict) -> None:
        """A problem has no measure: whether it learned is the objective's gain (TrainResult.learned)."""


def train_grid(source, loss: Trainable, opts: dict, settings: Settings, callbacks: Iterable = (),
               on_prepared: Callable[[Prepared], None] | None = None) -> Iterator[model.Model]:
    """Train `loss` with resolved options on a training source (LocalSource, distributed.ClusterSource) for
    every C of settings.grid in turn: the problem is built once, and each C trains from w = 0, so that its
    model is the one `learn -c C` writes (a warm start from the previous C stops within that C's tolerance at
    another point: the grid's answer depended on the grid). Each model carries its TrainResult in `.result`;
    `callbacks` (train.Callback) see every run's loop; on_prepared sees the prepared source before the first
    run. A model whose weights are not finite is a NumericalError: no model is ever returned that could not
    be written."""
    settings.check(loss)
    with threads.one_blas_thread():  # a kernel map's products too
        prepared = source.prepare(loss, opts, settings.normalize)
    opts = {**opts, **prepared.settled}
    if on_prepared:
        on_prepared(prepared)
    outline, eps = prepared.outline, settings.epsilon_for(loss)
    start = None
    if settings.resume is not None:
        start = LoopState.from_arrays(settings.resume.arrays(outline.n, outline.dim), outline.n, outline.dim,
                                      settings.grid[0], eps * outline.epsilon_scale)
    for C in settings.grid:
        with threads.one_blas_thread():
            result = loop.optimise(source.evaluator(prepared), outline, C, eps, settings.max_iterations, start=start,
                                   callbacks=callbacks)
        start = None
        trained = model_of(loss, opts, prepared.summary, result, C, eps, settings.normalize, prepared.scale)
        if prepared.kernel_map is not None and loss.kind == "structured":  # w weighs phi(x): the model keeps phi
            trained.set_feature_map(prepared.kernel_map)
        elif prepared.kernel_map is not None:  # the linear model on phi is a kernel expansion
            trained.set_kernel(prepared.kernel_map.expansion(trained.w))
        trained = checked(trained)
        source.judge(trained, loss, opts)
        yield trained


def model_of(loss, opts: dict, summary, result, C: float, epsilon: float, normalize: str = "none",
             scale: np.ndarray | None = None) -> model.Model:
    """The model of a finished training run on a training set described by `summary`
    (problem.TrainingSummary); the bias column's weight becomes the threshold, --normalize global's
    scale is folded into the weights (the model scores raw feature values)."""
    w = np.asarray(result.w, dtype=float)
    threshold = 0.0
    header: dict = {"C": float(C), "epsilon": float(epsilon)}
    if summary.bias:
        header["bias"] = float(summary.bias)
        header["bias_weight"] = float(w[-1])
        features = len(w) - 1 if summary.columns is None else (int(summary.columns[-1]) + 1 if len(summary.columns)
                                                                else 0)
        header["highest_index"] = features + 1  # the highest feature id, and svm_perf counts the bias feature
        threshold = -float(summary.bias) * float(w[-1])
        w = w[:-1]
    header.update(
        train_file=summary.path,
        documents=summary.n_docs,
        examples=summary.n,
        skipped_examples=summary.skipped,
        iterations=result.iterations,
        constraints=result.constraints,
        converged=int(result.converged),
        status=result.status.replace(" ", "-"),
        gap=float(result.primal - result.dual),
        primal=float(result.primal),
        dual=float(result.dual),
        xi=float(result.xi),
        objective_at_zero=float(result.zero_objective),
    )
    if not result.learned:  # within train.MIN_GAIN of the objective at w = 0 (the warning `learn` prints)
        header["did_not_learn"] = 1
    if loss.predict is None:  # classify writes w.x - b
        header["output"] = "scores"
    if normalize != "none":
        header["normalize"] = normalize
    if scale is not None:
        w = w / scale
    options = {k: v for k, v in sorted(opts.items()) if v is not None and v is not False and k != "bias"}
    columns = summary.columns
    return model.Model(w=w, threshold=threshold, loss=loss.name, options=options, header=header, result=result,
                 summary=summary,
                 columns=None if columns is None else np.asarray(columns, dtype=np.int64))


def judge_learning(trained: model.Model, loss: Trainable, opts: dict, dataset: Dataset) -> None:
    """Record in the model's TrainResult (and its did_not_learn header) whether it learned, by what it does on
    its training data: the loss's measure of its scores against that of w = 0 (every score tied, broken as
    `eval` breaks them) and of the ideal scores (the labels). Left to the objective's gain when the loss has no
    measure, the data cannot be measured (e.g. docids repeated in a query) or the measure does not fit in memory:
    a diagnostic never costs the model that training finished."""
    from svmstruct.evaluation import measures

    if loss.measure is None:
        return
    name = loss.measure(opts)
    threshold = float(opts.get("rel_threshold") or 0.0)
    try:
        values = [measures.measure_table(dataset, scores, [name], threshold)[name]["all"]
                  for scores in (model.score(trained, dataset), np.zeros(dataset.n_docs), dataset.y)]
    except (InputError, MemoryError):
        return
    if not all(np.isfinite(values)):
        return
    trained.result.measured = tuple(values)
    trained.set_learned(trained.result.learned)


def checked(trained: model.Model) -> model.Model:
    """The model, if its weights and threshold are finite (NumericalError otherwise)."""
    coef = trained.kernel.coef if trained.kernel is not None else trained.w
    if not (np.all(np.isfinite(coef)) and np.isfinite(trained.threshold)):
        raise NumericalError("the trained weights are not finite (feature values too large?): no model written")
    return trained


CHECKPOINT_SECONDS = 30.0  # a checkpoint is written at most once per this many seconds (and at the iteration limit)


class Checkpointing:
    """A checked run's checkpoint (learn --checkpoint FILE [--resume], fit(checkpoint=FILE, resume=True)): its writer
    (a train.Callback) in `callbacks`, the state to resume put into the run's settings; done(trained) removes the
    file once the run converged (the model is then all there is to continue), keeping it otherwise."""

    def __init__(self, run: CheckedRun, seconds: float = CHECKPOINT_SECONDS, data: Dataset | None = None):
        from svmstruct.train import checkpoint

        self.callbacks: list = []
        self.resumed = run.run.resume
        path, settings = run.run.checkpoint_file, run.settings
        if path is None:  # the options were checked by Run.check (config.Run._check_checkpoint)
            return
        signature = run.signature()
        if data is not None:  # data in memory (the Python API): what the checkpoint's run trained on, in outline
            signature["data"] = dict(path=data.path, examples=data.n_examples, features=data.n_features,
                                     documents=data.n_docs)
        if self.resumed:
            settings.resume = checkpoint.load(path, signature)
        settings.checkpointed = True
        self.callbacks = [checkpoint.Writer(path, signature, settings.max_iterations, seconds)]

    def done(self, trained: model.Model) -> None:
        from svmstruct.io import files

        for writer in self.callbacks:
            if trained.result.converged and (writer.written or self.resumed):
                files.remove_regular(writer.path)  # this run's or the resumed one's (none if it converged at once)


def train_run(run: CheckedRun, source, progress: Callable[[dict], None] | None = None,
              data: Dataset | None = None) -> model.Model:
    """The model of a checked run (config.Run.check) of one C on a training source (LocalSource, ClusterSource),
    with its checkpoint written and resumed as `learn` does (Checkpointing; `data`: the Dataset in memory a
    checkpoint is tied to)."""
    saving = Checkpointing(run, data=data)
    callbacks = [*((loop.Progress(progress),) if progress else ()), *saving.callbacks]
    trained = next(train_grid(source, run.loss, run.opts, run.settings, callbacks))
    saving.done(trained)
    return trained
