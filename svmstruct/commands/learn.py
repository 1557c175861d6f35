"""`svmstruct learn`: the run's settings (config.Run, its options generated from the record and the loss
registry) checked before any data is read, the training source (the files here, or shards on a Dask cluster),
training (one C, or a grid chosen on validation data), the warnings a user needs, and the model written."""
from __future__ import annotations

import contextlib
import dataclasses
import os

import click
import numpy as np

from svmstruct.commands.params import (
    THREADS_OPTION,
    Integer,
    Number,
    as_typed,
    build_command,
    default_loss,
    loss_options,
    problem_help,
    progress_printer,
    say,
    spelling,
    warn,
)
from svmstruct.errors import UsageError

LARGE_FEATURE = 1e4  # |x| above this: warn that the data is badly scaled
HEARTBEAT_SECONDS = 10.0  # -v 1 with --validate: a line at most this often inside a C's training


def learn_command(**params):
    """Train on TRAIN_FILE (SVMlight, '-' for stdin; several files are read as one, one after the other)
    and write MODEL_FILE ('-' for stdout). With --workers or --scheduler, every TRAIN_FILE is a shard of
    whole queries that a Dask worker reads."""
    from svmstruct import config, training

    if not params["train_files"]:  # click gave the one path to MODEL_FILE
        raise UsageError(f"learn takes the training file(s) and then the model to write: svmstruct learn [OPTIONS] "
                         f"TRAIN_FILE... MODEL_FILE (only '{params['model_file']}' was given)")
    os.environ["SVMSTRUCT_SAY_COMPILING"] = "1" if params.get("verbosity", 1) >= 1 else "0"  # (compute.jit)
    _point_originals_users_to_their_problem(params)
    fields = {spec.name for spec in dataclasses.fields(config.Run)}
    run = config.Run(**{k: v for k, v in params.items() if k in fields},
                     loss_options={k: v for k, v in params.items() if k not in fields})
    checked = run.check(spelling)  # everything that can be checked is checked before the data is read
    saving = training.Checkpointing(checked)
    trained = _train(checked, saving.callbacks)
    _warn_about(checked, trained)
    if not run.single_precision:  # classify reads the test data as training read its data
        trained.trained_in_double_precision()
    trained.save(run.model_file, run.model_format)
    saving.done(trained)  # once the model is written


def _point_originals_users_to_their_problem(params: dict) -> None:
    """svm_hmm's and svm_multiclass's command lines without --problem (their options: svm_hmm's --t and --e, which
    mean a kernel basis's and nothing here, --tags, --classes...): a UsageError naming --problem and the command
    with it."""
    from svmstruct import registry

    if params.get("problem") is not None or params.get("loss") is not None:
        return
    theirs = {name for flag, offered in registry.problem_options().items() for name in
              {option.name for _, option in offered} if params.get(name) is not None}
    hmm_flags = params.get("basis_method") is not None and not params.get("kernel_type")  # svm_hmm's --t
    if not theirs and not hmm_flags:
        return
    owners = {short for offered in registry.problem_options().values() for short, option in offered
              if option.name in theirs}
    problem = "hmm" if hmm_flags or "hmm" in owners else "multiclass"
    raise UsageError(f"{', '.join(sorted(_flags_of(theirs) | ({'--t'} if hmm_flags else set())))} "
                     f"{'is' if len(theirs) + hmm_flags == 1 else 'are'} svm_{problem}'s: add --problem {problem} "
                     f"({as_typed('--problem', problem)})")


def _flags_of(names: set) -> set:
    from svmstruct import registry

    return {option.flag for offered in registry.problem_options().values() for _, option in offered
            if option.name in names}


def looks_like_an_originals_file(dataset) -> str | None:
    """'hmm' or 'multiclass' when the lines are svm_hmm's (TAG qid:SEQUENCE ...) or svm_multiclass's (CLASS ...): every
    label an integer of 1 or more, three or more of them (a binary loss would call every line positive)."""
    labels = np.unique(dataset.y)
    if len(labels) < 3 or labels[0] < 1 or not np.all(labels == np.round(labels)):
        return None
    return "hmm" if dataset.has_qid else "multiclass"


def _train(checked, saving: list):
    """The trained model: the one C, or the best of the grid on the validation data."""
    from svmstruct import training
    from svmstruct.io import data
    from svmstruct.train import loop

    run, loss = checked.run, checked.loss
    log = say if run.verbosity >= 1 else None
    validation = None
    if run.validation_file is not None:
        validation = data.read_svmlight(run.validation_file,
                                        dtype=np.float32 if run.single_precision else np.float64)
        if checked.select_measure is not None:
            from svmstruct.dataset import documents

            validation, repeated = documents.in_line_order_if_repeated(validation)
            if repeated:
                warn(repeated)
    # progress lines: every iteration at -v 1 (at -v 2 also inside each C of a --validate grid, where -v 1 shows a
    # line every HEARTBEAT_SECONDS: a long C is not silence)
    callbacks: list = [loop.Progress(progress_printer(run.verbosity))] if log and (validation is None or
                                                                                   run.verbosity >= 2) else []
    if log and validation is not None and run.verbosity == 1:
        callbacks = [_Heartbeat(HEARTBEAT_SECONDS)]
    with _training_source(checked, log) as (source, describe):
        def prepared(ready):
            if run.loss is None and run.problem is None and any(_has_queries(path) for path in run.train_files):
                warn(f"the training data has queries (qid) and no -l was given: training {loss.name}, svm_perf's "
                     "default, which classifies documents and ignores the queries; -l pairs, map or ndcg@10 rank "
                     "within them")
            _warn_if_badly_scaled(ready.largest, run.normalize, checked.kernel is not None,
                                  any(_has_queries(path) for path in run.train_files))
            _describe(checked, ready, describe, log)

        models = training.train_grid(source, loss, checked.opts, checked.settings,
                                     [*callbacks, *saving], prepared)
        trained = _select(models, validation, checked, log) if validation is not None else next(models)
    if log and not (validation is not None and run.verbosity >= 2):  # (-v 2 printed every C's summary)
        log(loop.summary(trained.result))
    return trained


class _Heartbeat:
    """A loop callback (loop.Callback's hooks) that says, at most every `every` seconds, where a C's training is."""

    def __init__(self, every: float):
        import time

        self.every, self.clock = every, time.monotonic
        self.last = self.clock()

    def iteration(self, row: dict, state) -> None:
        if self.clock() - self.last >= self.every:
            self.last = self.clock()
            say(f"C {state.C:g}: iteration {row['iteration']}, gap/C {row['gap']:.4g}, primal {row['primal']:.6g}, "
                f"{row['seconds']:.0f} s")

    def resumable(self, state, seconds: float) -> None:
        pass


def _describe(checked, ready, describe, log) -> None:
    """The kernel map's advice, and with a log the training set, the kernel, the loss, C and epsilon."""
    kernel, settings = checked.kernel, checked.settings
    advice = ready.kernel_map.advice() if ready.kernel_map is not None else None
    if advice:
        warn(advice)
    if not log:
        return
    if kernel is not None and not kernel.size_given and ready.kernel_map.size + ready.kernel_map.dropped < kernel.size:
        log(f"--k: the basis is taken from all the training documents (the default, {kernel.size}, is more "
            "than there are)")
    grid = ",".join(f"{C:g}" for C in settings.grid) + (" (the loss's default; -c sets it)" if checked.run.C is None
                                                         else "")
    log(f"{describe(ready)}{_describe_map(ready.kernel_map)}; loss {checked.loss.name}, C {grid}, epsilon "
        f"{settings.epsilon_for(checked.loss):g}")


def _warn_about(checked, trained) -> None:
    """Not converged, did not learn, examples left out: on stderr whatever the verbosity."""
    from svmstruct.train import loop

    result = trained.result
    if not result.converged:
        warn(f"training stopped before convergence ({result.status}) after {result.iterations} iterations; "
             f"duality gap {result.primal - result.dual:.6g}"
             + (f"; continue with --checkpoint {checked.run.checkpoint_file} --resume"
                if checked.run.checkpoint_file else ""))
    if not result.learned:
        warn(loop.not_learned(result))
    skipped, total = trained.summary.skipped, trained.summary.examples
    if skipped:
        warn(f"{skipped} of {total} {'queries' if checked.loss.needs_qid else 'examples'} left out of training: the "
             f"loss is not defined on them (for a ranking loss: no two documents of different labels, or no relevant "
             f"one)")


def _has_queries(path: str) -> bool:
    """The first data line of a training file (not stdin) has a qid: the file is queries (a cheap look)."""
    from svmstruct.io import files

    if path == files.STDIO:
        return False
    try:
        with files.open_binary(path) as f:
            head = f.read(1 << 16)
    except Exception:  # noqa: BLE001 - unreadable here: the reader reports it
        return False
    for line in head.split(b"\n"):
        tokens = line.split(b"#", 1)[0].split()
        if tokens:
            return len(tokens) > 1 and tokens[1].startswith(b"qid:")
    return False



@contextlib.contextmanager
def _training_source(checked, log):
    """(the training source of training.train_grid, a describer of the prepared training set for the log): the
    TRAIN_FILEs read here, or shards read by the workers of a Dask cluster (closed on the way out)."""
    run, loss = checked.run, checked.loss
    layout = "dense" if run.dense else run.layout
    if run.problem is not None and run.workers is None and run.scheduler is None:
        yield _problem_source(checked)
        return
    if run.workers is None and run.scheduler is None:
        from svmstruct import registry, training
        from svmstruct.dataset import arrays
        from svmstruct.io import data

        read = [data.read_svmlight(path, dtype=np.float32 if run.single_precision else np.float64, layout=layout)
                for path in run.train_files]
        dataset = read[0] if len(read) == 1 else arrays.concatenate(read)
        original = looks_like_an_originals_file(dataset) if run.loss is None else None
        if original is not None:
            raise UsageError(f"{dataset.path}'s lines are {'tags of qid sequences' if original == 'hmm' else 'classes'}"
                             f" {int(dataset.y.min())}..{int(dataset.y.max())}, svm_{original}'s files; without -l "
                             f"they would train {loss.name}, a binary loss: add --problem {original} "
                             f"({as_typed('--problem', original)})")
        code = (default_loss() if run.loss is None else run.loss).strip()
        others = registry.same_code_elsewhere(code, loss) if code.isdigit() and dataset.has_qid else []
        if others:
            warn(f"-l {code} is loss {loss.name} ({loss.summary}); the same code means -l {others[0].name} "
                 f"({others[0].summary}). Name the loss to silence this warning.")
        yield training.LocalSource(dataset, checked.kernel), lambda ready: (
            f"Training set {dataset.path}: {dataset.n_docs} documents, {dataset.n_features} features")
        return
    from svmstruct.io import files
    from svmstruct.train import distributed

    if run.workers is not None:  # a local cluster's workers read the files here: each must open, before it starts
        for path in run.train_files:
            files.open_binary(path).close()
    client, close, threads = distributed.client_for(run.workers, run.scheduler)
    try:
        where = f"{run.workers} local workers" if run.workers else f"the cluster at {run.scheduler}"
        if run.problem is not None:
            structured = loss.instance(checked.opts)
            cluster = distributed.problem_cluster(client, list(run.train_files), structured, threads, on_reload=warn)
            yield distributed.ProblemClusterSource(cluster, structured), lambda ready: (
                f"Training set: {len(run.train_files)} shards, {ready.outline.n} examples on {where}, dimension "
                f"{ready.outline.dim}")
        else:
            cluster = distributed.Cluster(client, list(run.train_files), run.single_precision, layout, threads,
                                          on_reload=warn)
            yield distributed.ClusterSource(cluster, checked.kernel), lambda ready: (
                f"Training set: {len(run.train_files)} shards, {ready.summary.n_docs} documents on {where}")
        if log:
            t = cluster.traffic
            log(f"Cluster: {t.calls} calls to shards, {t.sent} bytes of payload sent and {t.received} received, "
                f"{t.recoveries} shards reloaded after a lost worker")
    finally:
        close()


def _problem_source(checked) -> tuple:
    """(the examples of --problem's TRAIN_FILEs, read by the problem, as a training source; its describer)."""
    from svmstruct import training
    from svmstruct.io import svmlight_parser  # noqa: F401 - a problem trains on numba's kernels: they read its files
    problem = checked.loss.instance(checked.opts)
    examples = problem.read_all(list(checked.run.train_files))
    source = training.ExamplesSource(problem, examples, "+".join(checked.run.train_files), checked.kernel)
    return source, lambda ready: (f"Training set {source.path}: {len(examples)} examples, dimension "
                                  f"{ready.outline.dim}{_describe_map(ready.kernel_map)}")


def _describe_map(mapping) -> str:
    """'; rbf kernel over 500 basis vectors' for the log of learn -t ('' without a kernel)."""
    if mapping is None:
        return ""
    from svmstruct.kernels.table import TYPES

    dropped = f" ({mapping.dropped} dependent ones dropped)" if mapping.dropped else ""
    return (f"; {TYPES[mapping.kernel.kind].name} kernel over {mapping.size} basis vectors{dropped}, "
            f"mapped in {mapping.seconds:.2f} s")



def _warn_if_badly_scaled(largest: float, normalize: str, kernel: bool = False, queries: bool = True) -> None:
    if largest > LARGE_FEATURE and normalize == "none":
        how = "before learn -t (--normalize applies to linear models)" if kernel else \
            "e.g. with --normalize query (per query, as LETOR) or --normalize global" if queries else \
            "e.g. with --normalize global (each feature divided by its largest value; the data has no queries)"
        warn(f"feature values reach {largest:.3g}: badly scaled data trains slowly and imprecisely; "
             f"scale the features, {how}")



def _select(models, validation, checked, log):
    """The best model of a C grid on the validation data (selection.select_model), logged."""
    from svmstruct import selection
    from svmstruct.train import loop

    measure = checked.select_measure
    summaries = checked.run.verbosity >= 2
    best, points = selection.select_model(models, validation, measure,
                                          float(checked.opts.get("rel_threshold") or 0.0), log,
                                          (lambda result: log(loop.summary(result))) if summaries else None)
    if log:
        log(f"Selected C {best.C:g} (validation {measure} {best.value:.4f})")
    grid = sorted(point.C for point in points)
    values = {"nan" if point.value != point.value else round(point.value, 12) for point in points}
    if len(grid) > 1 and not any(point.result.learned for point in points):
        warn("no C of the grid learned (w = 0 or close to it for every C): try larger C, or another loss or feature "
             "map (docs/learn.md: 'When a model does not learn')")
    elif len(grid) > 1 and len(values) == 1:
        warn(f"the validation {measure} is the same for every C of the grid ({best.value:.4f}): the validation data "
             f"does not tell these C apart; the smallest is kept")
    elif len(grid) > 1 and best.C in (grid[0], grid[-1]):
        warn(f"the best C on the validation data, {best.C:g}, is the {'smallest' if best.C == grid[0] else 'largest'} "
             f"of the grid: a {'smaller' if best.C == grid[0] else 'larger'} C may be better still; extend -c")
    return best.model


def run_options(f):
    """One click option per field of config.Run that declares its command-line spelling, in declaration order."""
    from svmstruct import config
    from svmstruct.kernels import table

    for spec in reversed(dataclasses.fields(config.Run)):
        if "cli" not in spec.metadata:
            continue
        d = spec.metadata["cli"]
        kind = d["kind"]
        text = d["help"].replace("{default_loss}", default_loss()).replace("{kernels}", table.listing())
        text = " ".join(filter(None, [text, *(problem_help(flag) for flag in d["flags"])]))
        extra: dict = dict(default=spec.default, show_default=d["show_default"], metavar=d["metavar"], help=text)
        if kind == "flag":
            extra.update(is_flag=True)
            del extra["metavar"]
        elif kind == "number":
            extra.update(type=Number(d["low"], d["high"]))
        elif kind == "integer":
            extra.update(type=Integer(d["low"], d["high"]))
        elif kind == "repeated":
            extra.update(multiple=True, default=())
        elif kind == "choice":
            extra.update(type=click.Choice(d["choices"]))
        f = click.option(*d["flags"], spec.name, **extra)(f)
    return f


def problem_options(f):
    """One click option per option of svmstruct's own problems that no run setting or loss spells the same way
    (--e, --tags, --classes, ...; svm_hmm's --t and --b share the basis's and svm_perf's flags: config.Run moves
    their values to the problem)."""
    from svmstruct import config, registry

    run_flags = {flag for spec in dataclasses.fields(config.Run) if "cli" in spec.metadata
                 for flag in spec.metadata["cli"]["flags"]}
    taken = {flag for option in registry.all_options().values() for flag in option.flags} | run_flags
    offered = {option.name: option for flag, [(_, option), *_] in registry.problem_options().items()
               if flag not in taken}
    for option in sorted(offered.values(), key=lambda o: o.flag.lstrip("-"), reverse=True):
        f = click.option(*option.flags, option.name, default=None, metavar=option.metavar,
                         help=problem_help(option.flag))(f)
    return f


def command() -> click.Command:
    return build_command("learn", learn_command, [
        run_options,
        THREADS_OPTION,
        loss_options,
        problem_options,
        click.argument("train_files", nargs=-1, required=False, metavar="TRAIN_FILE..."),
        click.argument("model_file"),
    ])
