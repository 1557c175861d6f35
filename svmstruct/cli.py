"""Command line: parse options, call the library, write output. No math here, and no loss by name: the
loss options of `learn` and their help are generated from the registry (svmstruct.losses), and a model's
output format comes from its loss's declaration. Every user error is one line on stderr and an exit
code (docs/commands.md, "Errors and exit codes"); nothing else may escape as a traceback."""
from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import warnings

import click
import numpy as np

from svmstruct import __version__
from svmstruct.errors import InputError, SvmStructError, UsageError
from svmstruct.options import SCORE_FORMATS

DEFAULT_C = 1.0
ALGORITHMS_1SLACK = ("3", "4")  # svm_perf/svm_struct -w values that mean the 1-slack algorithm
LARGE_FEATURE = 1e4  # |x| above this: warn that the data is badly scaled
CHECKPOINT_SECONDS = 30.0  # --checkpoint: at most one write per this many seconds (and one at the iteration limit)


class _Bounded(click.ParamType):
    """A number option in svm_light's syntax (options.parse_number / parse_integer: `1_0`, `nan`, full-width
    digits are not numbers), optionally within [low, high]."""

    name = "number"

    def __init__(self, low=None, high=None):
        self.low, self.high = low, high

    def parse(self, value):
        from svmstruct.options import parse_number

        return parse_number(value)

    def convert(self, value, param, ctx):
        from svmstruct.options import LARGEST_INTEGER

        try:
            number = self.parse(value)
        except OverflowError:
            self.fail(f"{value!r} is larger than {LARGEST_INTEGER}", param, ctx)
        except ValueError:
            self.fail(f"{value!r} is not {'an integer' if self.name == 'integer' else 'a finite number'}", param, ctx)
        if (self.low is not None and number < self.low) or (self.high is not None and number > self.high):
            self.fail(f"{value!r} is not between {self.low:g} and {self.high:g}" if self.high is not None
                      else f"{value!r} is below {self.low:g}", param, ctx)
        return number


class Number(_Bounded):
    """A finite number (-e, --rel-threshold, --alpha)."""


class Integer(_Bounded):
    """A decimal integer of at most options.LARGEST_INTEGER in magnitude (-#, -v, --threads, -k, ...)."""

    name = "integer"

    def parse(self, value):
        from svmstruct.options import parse_integer

        return parse_integer(value)


class Tag(click.ParamType):
    """A TREC run tag: one word of printable characters (trec_eval splits a run line at whitespace)."""

    name = "tag"

    def convert(self, value, param, ctx):
        if not (value and value.isprintable() and len(value.split()) == 1 and value.split()[0] == value):
            self.fail(f"{value!r} is not one word of printable characters (trec_eval reads six fields a line)",
                      param, ctx)
        return value


class Terminated(Exception):
    """SIGTERM or SIGHUP, turned into an exception so that temporary files are removed on the way out."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


# the signals that end a run cleanly (exit 128 + the signal's number) besides SIGINT (KeyboardInterrupt, 130)
ENDING_SIGNALS: dict[int, str] = {signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}


def say(line: str) -> None:
    """A line on stderr. A failed write (a full or closed stderr) is not fatal: progress is not worth the
    model."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def warn(message: str) -> None:
    """A warning: always on stderr, whatever the verbosity."""
    say(f"svmstruct: warning: {printable(message)}")


def printable(text: str) -> str:
    """TEXT with what a terminal would act on or cannot show — control characters (escape sequences, bells,
    carriage returns), undecodable bytes — spelled as escapes (\\x1b), so that a file's bytes quoted in a
    message are seen, not executed."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("utf-8", "surrogateescape").decode("latin-1")
                   .encode("unicode_escape").decode("ascii") for c in text)


def _progress_printer(verbosity: int):
    """-v 1 and 2: a line per iteration (the duality gap, both objectives, the working set); -v 3 adds the line
    search's step along [w_b, w_t], the slack xi and |w| at w_b."""
    def show(row: dict) -> None:
        detail = f"  step {row['step']:.4f}  xi {row['xi']:.6f}  |w| {row['norm']:.6f}" if verbosity >= 3 else ""
        say(f"iter {row['iteration']:4d}  gap/C {row['gap']:.6g}  primal {row['primal']:.6f}  "
            f"dual {row['dual']:.6f}  constraints {row['constraints']}  {row['seconds']:.2f}s{detail}")

    return show if verbosity >= 1 else None


def _set_threads(ctx, param, threads):
    """--threads N: the numba kernels (oracles, readers, products) use up to N threads; their results do not
    depend on N. Default: svmstruct.threads.default_count() (the cores this process may use; 1 inside
    make -jN)."""
    if threads is None:
        return
    import numba

    from svmstruct.runtime import threads as policy

    available = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    if threads > available:
        warn(f"--threads {threads}: only {available} threads are available here; using {available}")
    policy.set_count(min(threads, available))


THREADS_OPTION = click.option("--threads", type=Integer(1), default=None, expose_value=False,
                              callback=_set_threads, metavar="N",
                              help="Threads of the parallel kernels (default: the cores this process may use, "
                                   "1 inside make -jN); results do not depend on it.")


def _option_help(name: str) -> str:
    """The help of a loss option: what it means for each loss that takes it, with its default."""
    from svmstruct import losses

    groups: dict = {}
    for loss in losses.REGISTRY.values():
        option = loss.option(name)
        if option is not None:
            default = "" if option.default is None or option.default is False else f" (default {option.default})"
            groups.setdefault(option.help + default, []).append(loss.name)
    return "; ".join(f"{', '.join(names)}: {text}" for text, names in groups.items())


def _loss_options(f):
    """One click option per registered loss option (None when not given, so a loss's own default applies)."""
    from svmstruct import losses

    for option in reversed(sorted(losses.all_options().values(), key=lambda o: o.flag.lstrip("-"))):
        if option.kind == "flag":
            f = click.option(*option.flags, option.name, is_flag=True, default=None, help=_option_help(option.name))(f)
        else:
            f = click.option(*option.flags, option.name, default=None, metavar=option.metavar,
                             help=_option_help(option.name))(f)
    return f


def _spelling(name: str) -> str:
    from svmstruct import losses

    option = losses.all_options().get(name)
    return option.flag if option else name


def _default_loss() -> str:
    from svmstruct import losses

    return losses.DEFAULT


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


def learn_command(C, epsilon, loss_name, max_iterations, verbosity, algorithm, model_format, single_precision, layout,
                  dense, validation_file, select_measure, normalize, workers, scheduler, checkpoint_file, resume,
                  kernel_type, degree, gamma, coef_lin, coef_const, basis_size, basis_method, basis_file,
                  train_files, model_file, **loss_opts):
    """Train on TRAIN_FILE (SVMlight, '-' for stdin; several files are read as one, one after the other)
    and write MODEL_FILE ('-' for stdout). With --workers or --scheduler, every TRAIN_FILE is a shard of
    whole queries that a Dask worker reads."""
    from svmstruct import api
    from svmstruct.io import files
    from svmstruct.train import loop

    # everything that can be checked is checked before the data is read
    if algorithm not in ALGORITHMS_1SLACK:
        raise UsageError(f"-w {algorithm}: only the 1-slack algorithm (-w 3 or 4) is implemented")
    loss_given = loss_name is not None
    loss_name = loss_name if loss_given else _default_loss()
    loss, opts = api.resolve_loss(loss_name, loss_opts, _spelling)
    settings = api.Settings(_grid(C, validation_file), epsilon, max_iterations, normalize).check(loss)
    if normalize == "query" and model_format == "svmlight":
        raise UsageError("--normalize query needs the svmstruct model format: the originals' classify programs "
                         "would score raw features")
    select_measure = _selection_measure(loss, opts, validation_file, select_measure)
    kernel = _kernel_spec(loss, normalize, kernel_type, dict(d=degree, g=gamma, s=coef_lin,
                          r=coef_const, k=basis_size, t=basis_method, f=basis_file))
    if validation_file == files.STDIO and files.STDIO in train_files:
        raise UsageError("TRAIN_FILE and --validate cannot both be read from stdin")
    _check_sources(loss, opts, train_files, workers, scheduler)
    files.check_distinct([("MODEL_FILE", model_file), ("--checkpoint", checkpoint_file)],
                      [*(("TRAIN_FILE", path) for path in train_files), ("--validate", validation_file),
                       ("--subtopics", opts.get("subtopics")), ("--f", basis_file)])
    files.check_writable(model_file)
    saving = _checkpointing(checkpoint_file, resume, settings, dict(
        loss=loss.name, options=opts, C=settings.grid[0], epsilon=settings.epsilon_for(loss), normalize=normalize,
        train_files=list(train_files), precision="float32" if single_precision else "float64",
        **({"kernel": dataclasses.asdict(kernel)} if kernel else {})))

    log = say if verbosity >= 1 else None
    validation = None
    if validation_file is not None:
        import numpy as np

        from svmstruct.io import data

        validation = data.read_svmlight(validation_file, dtype=np.float32 if single_precision else np.float64)
    # progress lines: every iteration at -v 1 (at -v 2 also inside each C of a --validate grid)
    callbacks = [loop.Progress(_progress_printer(verbosity))] if log and (validation is None or verbosity >= 2) \
        else []
    with _training_source(loss, loss_name, train_files, workers, scheduler, single_precision,
                          "dense" if dense else layout, kernel, log) as (source, describe):
        def prepared(ready):
            if not loss_given and any(_has_queries(path) for path in train_files):
                warn(f"the training data has queries (qid) and no -l was given: training {loss.name}, svm_perf's "
                     "default, which classifies documents and ignores the queries; -l pairs, map or ndcg@10 rank "
                     "within them")
            _warn_if_badly_scaled(ready.largest, normalize, kernel is not None)
            advice = ready.kernel_map.advice() if ready.kernel_map is not None else None
            if advice:
                warn(advice)
            if log and kernel is not None and not kernel.size_given and ready.kernel_map.size + \
                    ready.kernel_map.dropped < kernel.size:
                log(f"--k: the basis is taken from all the training documents (the default, {kernel.size}, is more "
                    "than there are)")
            if log:
                grid = ",".join(f"{C:g}" for C in settings.grid)
                log(f"{describe(ready)}{_describe_map(ready.kernel_map)}; loss {loss.name}, C {grid}, epsilon "
                    f"{settings.epsilon_for(loss):g}")

        models = api.train_grid(source, loss, opts, settings, [*callbacks, *([saving] if saving else [])], prepared)
        trained = _select(models, validation, select_measure, opts, log, verbosity) if validation is not None \
            else next(models)
    result = trained.result
    if log and not (validation is not None and verbosity >= 2):  # (-v 2 printed every C's summary)
        log(loop.summary(result))
    if not result.converged:
        warn(f"training stopped before convergence ({result.status}) after {result.iterations} iterations; "
             f"duality gap {result.primal - result.dual:.6g}"
             + (f"; continue with --checkpoint {checkpoint_file} --resume" if checkpoint_file else ""))
    if not result.learned:
        warn(loop.not_learned(result))
    skipped, total = trained.summary.skipped, trained.summary.examples
    if skipped:
        warn(f"{skipped} of {total} {'queries' if loss.needs_qid else 'examples'} left out of training: the loss is "
             f"not defined on them (for a ranking loss: no two documents of different labels, or no relevant one)")
    if not single_precision:  # classify reads the test data as training read its data
        trained.trained_in_double_precision()
    trained.save(model_file, model_format)
    if saving is not None and result.converged and (saving.written or settings.resume is not None):
        files.remove_regular(checkpoint_file)  # this run's or the resumed one's (none if it converged at once)


@contextlib.contextmanager
def _training_source(loss, loss_name: str, train_files: tuple, workers, scheduler, single_precision: bool,
                     layout: str, kernel, log):
    """(the training source of api.train_grid, a describer of the prepared training set for the log): the
    TRAIN_FILEs read here, or shards read by the workers of a Dask cluster (closed on the way out)."""
    if workers is None and scheduler is None:
        from svmstruct import api, losses
        from svmstruct.io import data

        read = [data.read_svmlight(path, dtype=np.float32 if single_precision else np.float64, layout=layout)
                for path in train_files]
        dataset = read[0] if len(read) == 1 else data.concatenate(read)
        code = loss_name.strip()
        others = losses.same_code_elsewhere(code, loss) if code.isdigit() and dataset.has_qid else []
        if others:
            warn(f"-l {code} is loss {loss.name} ({loss.summary}); the same code means -l {others[0].name} "
                 f"({others[0].summary}). Name the loss to silence this warning.")
        yield api.LocalSource(dataset, kernel), lambda ready: (f"Training set {dataset.path}: {dataset.n_docs} "
                                                               f"documents, {dataset.n_features} features")
        return
    from svmstruct.train import distributed

    client, close, threads = distributed.client_for(workers, scheduler)
    try:
        cluster = distributed.Cluster(client, list(train_files), single_precision, layout, threads, on_reload=warn)
        where = f"{workers} local workers" if workers else f"the cluster at {scheduler}"
        yield distributed.ClusterSource(cluster, kernel), lambda ready: (f"Training set: {len(train_files)} shards, "
                                                                 f"{ready.summary.n_docs} documents on {where}")
        if log:
            t = cluster.traffic
            log(f"Cluster: {t.calls} calls to shards, {t.sent} bytes of payload sent and {t.received} received, "
                f"{t.recoveries} shards reloaded after a lost worker")
    finally:
        close()


KERNEL_OPTIONS = "dgsrktf"  # -d -g -s -r --k --t --f: only with a kernel (-t 1|2|3)


def _kernel_spec(loss, normalize: str, kind, given: dict):
    """The kernel_map.Spec of -t/-d/-g/-s/-r/--k/--t/--f (None for the linear kernel), checked."""
    if not kind:
        stray = [("-" if name in "dgsr" else "--") + name for name in KERNEL_OPTIONS if given[name] is not None]
        if stray:
            raise UsageError(f"{stray[0]} applies to a kernel: give -t 1 (polynomial), 2 (RBF) or 3 (sigmoid)")
        return None
    from svmstruct.kernels import kernel_functions, nystroem

    if normalize != "none":
        raise UsageError("--normalize applies to linear models only: with -t, scale the features before training")
    if not loss.plain_features:
        raise UsageError(f"-t: loss {loss.name} builds its own features from the documents; kernels apply to the "
                         "other losses")
    defaults = kernel_functions.Kernel()
    kernel = kernel_functions.Kernel(kind, *(defaults.__dict__[field] if given[name] is None else given[name]
                                    for name, field in zip("dgsr", ("degree", "gamma", "coef_lin", "coef_const"))))
    return nystroem.Spec(kernel, nystroem.DEFAULT_SIZE if given["k"] is None else given["k"],
                           nystroem.SPREAD if given["t"] is None else given["t"], given["f"],
                           size_given=given["k"] is not None).check()


def _describe_map(mapping) -> str:
    """'; rbf kernel over 500 basis vectors' for the log of learn -t ('' without a kernel)."""
    if mapping is None:
        return ""
    from svmstruct.kernels import kernel_functions

    dropped = f" ({mapping.dropped} dependent ones dropped)" if mapping.dropped else ""
    return (f"; {kernel_functions.NAMES[mapping.kernel.kind]} kernel over {mapping.size} basis vectors{dropped}, "
            f"mapped in {mapping.seconds:.2f} s")


def _checkpointing(path, resume: bool, settings, signature: dict):
    """The checkpoint writer (a train.Callback) of --checkpoint, or None; with --resume the checkpoint's
    state goes into settings.resume."""
    from svmstruct.io import files
    from svmstruct.train import checkpoint

    if path is None:
        if resume:
            raise UsageError("--resume needs --checkpoint FILE (the file a previous run wrote)")
        return None
    if len(settings.grid) > 1:
        raise UsageError("--checkpoint holds one training run: give one -c value, not a --validate grid")
    if path == files.STDIO:
        raise UsageError("--checkpoint needs a file, not '-'")
    files.check_regular_or_absent(path, "--checkpoint")
    if resume:
        settings.resume = checkpoint.load(path, signature)
    else:
        checkpoint.check_replaceable(path)
        files.check_writable(path)
    settings.checkpointed = True
    return checkpoint.Writer(path, signature, settings.max_iterations, CHECKPOINT_SECONDS)


def _grid(C: str, validation_file) -> list:
    from svmstruct import selection

    grid = selection.parse_grid(C)
    if len(grid) > 1 and validation_file is None:
        raise UsageError("a grid of C values needs --validate VALIDATION_FILE to choose from")
    return grid


def _selection_measure(loss, opts: dict, validation_file, select_measure):
    """The measure that picks C on the validation data (checked), or None without --validate."""
    from svmstruct import selection

    if validation_file is None:
        if select_measure is not None:
            raise UsageError("--select applies only with --validate")
        return None
    select_measure = select_measure or (loss.measure(opts) if loss.measure else None)
    if select_measure is not None:
        from svmstruct.evaluation.measures import canonical

        select_measure = canonical(select_measure)
    if select_measure is None:
        raise UsageError(f"--validate needs --select MEASURE: loss {loss.name} names no eval measure")
    selection.check_measure(select_measure)
    return select_measure


def _check_sources(loss, opts: dict, train_files: tuple, workers, scheduler) -> None:
    from svmstruct.io import files

    if workers is not None and scheduler is not None:
        raise UsageError("--workers starts a local cluster and --scheduler joins an existing one: give one of them")
    if workers is None and scheduler is None:
        if train_files.count(files.STDIO) > 1:
            raise UsageError("only one TRAIN_FILE can be read from stdin")
        return
    if files.STDIO in train_files:
        raise UsageError("with --workers or --scheduler the workers read the training files: '-' (stdin) cannot be "
                         "one")
    from svmstruct.train import distributed

    if scheduler is not None:
        distributed.scheduler_address(scheduler)
    distributed.check_decomposes(loss, opts)


def _warn_if_badly_scaled(largest: float, normalize: str, kernel: bool = False) -> None:
    if largest > LARGE_FEATURE and normalize == "none":
        how = "before learn -t (--normalize applies to linear models)" if kernel else \
            "e.g. with --normalize query or --normalize global"
        warn(f"feature values reach {largest:.3g}: badly scaled data trains slowly and imprecisely; "
             f"scale the features, {how}")


def _select(models, validation, measure: str, opts: dict, log, verbosity: int):
    """The best model of a C grid on the validation data (selection.select_model), logged."""
    from svmstruct import selection
    from svmstruct.train import loop

    summaries = verbosity >= 2
    best, points = selection.select_model(models, validation, measure, float(opts.get("rel_threshold") or 0.0),
                                          log, (lambda result: log(loop.summary(result))) if summaries else None)
    if log:
        log(f"Selected C {best.C:g} (validation {measure} {best.value:.4f})")
    grid = sorted(point.C for point in points)
    if len(grid) > 1 and best.C in (grid[0], grid[-1]):
        warn(f"the best C on the validation data, {best.C:g}, is the {'smallest' if best.C == grid[0] else 'largest'} "
             f"of the grid: a {'smaller' if best.C == grid[0] else 'larger'} C may be better still; extend -c")
    return best.model


def classify_command(output_format, tag, verbosity, test_file, model_file, output):
    """Score TEST_FILE with MODEL_FILE (ours or svm_light/svm_perf/svm_rank's); write to OUTPUT (default stdout)."""
    import numpy as np

    from svmstruct import losses, model
    from svmstruct.io import data, files, trec

    if test_file == files.STDIO and model_file == files.STDIO:
        raise UsageError("TEST_FILE and MODEL_FILE cannot both be read from stdin")
    files.check_distinct([("OUTPUT", output)], [("TEST_FILE", test_file), ("MODEL_FILE", model_file)])
    files.check_writable(output)
    trained = model.load_model(model_file)
    loss = losses.REGISTRY.get(trained.loss)
    formats = loss.formats if loss else SCORE_FORMATS
    fmt = output_format or formats[0]
    if fmt not in formats:
        raise UsageError(f"--format {fmt} does not apply to a {trained.loss} model (it writes {', '.join(formats)})")
    dtype = np.dtype(trained.precision)  # as learn stored its data
    if fmt == "scores" and (loss is None or loss.predict is None) and trained.normalize != "query" \
            and trained.kernel is None:  # a score a line: the file a part at a time (memory of one part's matrix)
        parts, n_docs = [], 0
        for part in data.read_parts(test_file, dtype):
            parts.append("".join(f"{s:.8f}\n" for s in model.score(trained, part)))
            n_docs += part.n_docs
        text = "".join(parts)
    else:
        dataset = data.read_svmlight(test_file, dtype=dtype)
        n_docs = dataset.n_docs
        if loss is not None and loss.predict is not None:
            text = loss.predict(trained, dataset, fmt, tag)
        else:
            scores = model.score(trained, dataset)
            text = trec.format_run(dataset, scores, tag) if fmt == "trec" else "".join(f"{s:.8f}\n" for s in scores)
    files.write_output(output, text)
    if verbosity >= 1:
        say(f"Scored {n_docs} documents of {'<stdin>' if test_file == files.STDIO else test_file} with {model_file}")


def evaluate_command(measure_names, per_query, output_format, rel_threshold, write_qrels, subtopics, alpha, test_file,
                     predictions):
    """Measures of PREDICTIONS (one score per line of TEST_FILE) against TEST_FILE's labels.

    With several prediction files: a paired comparison against the first (means, per-query
    wins/losses, Wilcoxon signed-rank and paired t-test p-values).
    """
    from svmstruct.evaluation import measures, tables
    from svmstruct.io import data, files, trec

    if [test_file, *predictions].count(files.STDIO) > 1:
        raise UsageError("only one of TEST_FILE and PREDICTIONS can be read from stdin")
    if len(predictions) > 1 and (per_query or output_format == "trec"):
        raise UsageError(f"{'-q' if per_query else '--format trec'} is for one PREDICTIONS file (trec_eval's lines, "
                         "one run at a time); with several, eval prints their comparison (--format table or json)")
    if alpha is not None and not subtopics:
        raise UsageError("--alpha is alpha-NDCG's, a measure of --subtopics")
    alpha = 0.5 if alpha is None else alpha
    output_format = output_format or ("trec" if len(predictions) == 1 else "table")
    names = [measures.canonical(name) for name in measure_names] or measures.DEFAULT_MEASURES
    if "all" in names:
        names = measures.ALL_MEASURES
    if subtopics:
        if len(predictions) > 1:
            raise UsageError("--subtopics evaluates one selections file at a time")
    else:
        for name in names:
            try:
                measures.lookup(name)
            except KeyError as e:
                raise UsageError(e.args[0]) from None
    if write_qrels:
        files.check_distinct([("--write-qrels", write_qrels)], [("TEST_FILE", test_file), ("--subtopics", subtopics),
                                                             *(("PREDICTIONS", path) for path in predictions)])
        files.check_writable(write_qrels)
    dataset = data.read_svmlight(test_file, features=bool(subtopics))  # the measures read no feature
    if dataset.targets_only:
        raise InputError("no line has a qid or a feature after its label: this is a predictions file, not "
                         "labelled data (svmstruct eval TEST_FILE PREDICTIONS...)", dataset.path)
    if subtopics:
        from svmstruct.diversity import measures as div_measures

        table = div_measures.evaluate_selections(dataset, subtopics, predictions[0], alpha)
        files.write_output(files.STDIO, tables.format_table(table, per_query, output_format))
        return
    if write_qrels:
        files.write_output(write_qrels, trec.format_qrels(dataset))
    runs = [(path, tables.read_predictions(path, dataset.n_docs)) for path in predictions]
    if len(runs) > 1:
        comparison = tables.compare(dataset, runs, names, rel_threshold)
        text = tables.format_comparison(comparison, "json" if output_format == "json" else "table")
    else:
        table = tables.measure_table(dataset, runs[0][1], names, rel_threshold)
        text = tables.format_table(table, per_query, output_format)
    files.write_output(files.STDIO, text)


def qrels_command(test_file, output):
    """Write TEST_FILE's labels as TREC qrels (`qid 0 docid label`) for trec_eval."""
    from svmstruct.io import data, files, trec

    files.check_distinct([("OUTPUT", output)], [("TEST_FILE", test_file)])
    files.check_writable(output)
    files.write_output(output, trec.format_qrels(data.read_svmlight(test_file, features=False)))


def div_baseline_command(method, K, output_format, tag, title_offset, doc_features_from, seed, test_file, output):
    """Diverse subsets of TEST_FILE's candidate sets by a baseline of Yue & Joachims 2008 (section 6)."""
    from svmstruct.diversity import baselines, features, qrels
    from svmstruct.io import data, files

    config = features.FeatureConfig.parse(None, None, title_offset, doc_features_from)
    files.check_distinct([("OUTPUT", output)], [("TEST_FILE", test_file)])
    files.check_writable(output)
    dataset = data.read_svmlight(test_file)
    size = dataset.n_docs if output_format == "trec" else K
    subsets = baselines.baseline(dataset, method, size, config, seed)
    files.write_output(output, qrels.format_subsets(dataset, subsets, output_format, tag))


def losses_command():
    """List the losses with their names, aliases, default epsilon and options."""
    from svmstruct import losses

    for loss in losses.REGISTRY.values():
        aliases = ",".join(loss.aliases)
        flags = " ".join(o.flag for o in loss.options)
        click.echo(f"{loss.name:<12} {aliases:<10} {loss.family:<5} eps {loss.default_epsilon:<6g} {loss.summary}"
                   + (f"  [{flags}]" if flags else ""))


class _Commands(click.Group):
    """The command group, each command built when it is used: `eval` or `classify` then never imports the
    loss registry (numba, scipy) that `learn`'s generated options need."""

    def __init__(self, factories: dict, **kwargs):
        super().__init__(**kwargs)
        self.factories = factories

    def list_commands(self, ctx) -> list:
        return list(self.factories)

    def get_command(self, ctx, name):
        if name not in self.commands and name in self.factories:
            self.add_command(self.factories[name](), name)
        return self.commands.get(name)


def build_cli() -> click.Group:
    """The command group, with `learn`'s loss options generated from the registry as it is now."""

    @click.group(cls=_Commands, factories={"learn": _learn, "classify": _classify, "eval": _eval, "qrels": _qrels,
                                           "div-baseline": _div_baseline, "losses": _losses},
                 context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(version=__version__, prog_name="svmstruct")
    def cli():
        """Structural SVMs that optimise the measure you are judged by (1-slack cutting plane, OSQP, numba).

        `svmstruct worker [status|stop] [--all]` shows or stops the resident worker that runs these commands
        without their start-up (docs/worker.md).
        """

    return cli


def _learn() -> click.Command:
    from svmstruct.train import normalize
    from svmstruct.train.loop import MAX_ITERATIONS

    learn = learn_command
    for decorator in reversed([
        click.option("-c", "C", default=str(DEFAULT_C), show_default=True,
                     help="Trade-off C of the 1-slack objective 1/2|w|^2 + C xi (svm_perf/svm_rank scaling, see "
                          "docs/learn.md); a comma-separated grid with --validate."),
        click.option("-e", "epsilon", type=Number(), default=None,
                     help="Stop when no constraint is violated by more than this (default: the loss's, e.g. 0.1 for "
                          "svm_perf losses)."),
        click.option("-l", "loss_name", default=None,
                     help=f"Loss: a name or svm_perf's numeric code (see `svmstruct losses`).  [default: "
                          f"{_default_loss()}]"),
        click.option("-#", "max_iterations", type=Integer(), default=MAX_ITERATIONS, show_default=True,
                     help="Maximum number of iterations."),
        click.option("-v", "verbosity", type=Integer(0, 3), default=1, show_default=True,
                     help="0: no progress (warnings still go to stderr); 1: a progress line per iteration and a "
                          "summary."),
        click.option("-w", "algorithm", default="3", show_default=True,
                     help="Accepted for svm_perf compatibility: 3 or 4 (both mean the 1-slack algorithm used here)."),
        click.option("--format", "model_format", type=click.Choice(["svmstruct", "svmlight"]), default="svmstruct",
                     show_default=True,
                     help="Model file format; svmlight is readable by svm_perf_classify/svm_rank_classify."),
        click.option("--float32/--float64", "single_precision", default=True, show_default=True,
                     help="Store feature values in single precision, as svm_light, svm_perf and svm_rank do "
                          "(the same values as theirs, half the memory), or in double precision."),
        click.option("--layout", type=click.Choice(["auto", "sparse", "dense"]), default="auto", show_default=True,
                     help="How the training data is stored: auto takes the smaller of a sparse (CSR) and a dense "
                          "matrix (dense for LETOR-style data with every feature present, sparse for text)."),
        click.option("--dense", is_flag=True, help="Same as --layout dense."),
        click.option("--validate", "validation_file", default=None,
                     help="Validation data: train for every C of the -c grid and keep the best model by --select."),
        click.option("--select", "select_measure", default=None,
                     help="Measure that picks C on the validation data (any `eval` measure; `error` is minimised); "
                          "default: the loss's own measure."),
        click.option("--normalize", type=click.Choice(normalize.METHODS), default="none",
                     show_default=True,
                     help="query: min-max per feature within every query (LETOR's QueryLevelNorm), applied by "
                          "classify too; global: each feature divided by its largest |value|, folded into the "
                          "weights."),
        click.option("--workers", type=Integer(1), default=None, metavar="N",
                     help="Train on a local Dask cluster of N worker processes; every TRAIN_FILE is a shard of "
                          "whole queries (needs svmstruct[distributed])."),
        click.option("--scheduler", default=None, metavar="ADDRESS",
                     help="Train on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786): its workers "
                          "read the TRAIN_FILEs where they are."),
        click.option("--checkpoint", "checkpoint_file", default=None, metavar="FILE",
                     help="Save the training state to FILE as it goes (atomically; removed once the model is "
                          "written after convergence)."),
        click.option("--resume", is_flag=True,
                     help="Continue the run whose --checkpoint FILE is given (same data, loss, options, -c, -e)."),
        click.option("-t", "kernel_type", type=Integer(0, 4), default=0, show_default=True,
                     help="Kernel (svm_light's): 0 linear, 1 polynomial (s a.b + r)^d, 2 RBF exp(-g |a-b|^2), "
                          "3 sigmoid tanh(s a.b + r); a nonlinear kernel trains over a basis of --k vectors."),
        click.option("-d", "degree", type=Integer(), default=None, help="-t 1: the degree d (default 3)."),
        click.option("-g", "gamma", type=Number(), default=None, help="-t 2: gamma (default 1)."),
        click.option("-s", "coef_lin", type=Number(), default=None, help="-t 1, 3: s (default 1)."),
        click.option("-r", "coef_const", type=Number(), default=None, help="-t 1, 3: r (default 1)."),
        click.option("--k", "basis_size", type=Integer(), default=None, metavar="K",
                     help="With -t: the number of basis vectors (default 500; svm_perf's --k)."),
        click.option("--t", "basis_method", type=Integer(), default=None, metavar="M",
                     help="With -t: how the basis is chosen (svm_perf's --t): 1 every (n/K)-th document (default), "
                          "2 by incomplete Cholesky."),
        click.option("--f", "basis_file", default=None, metavar="FILE",
                     help="With -t: choose the basis among this file's vectors (SVMlight) instead of the training "
                          "documents; all of them when it has at most --k."),
        THREADS_OPTION,
        _loss_options,
        click.argument("train_files", nargs=-1, required=True, metavar="TRAIN_FILE..."),
        click.argument("model_file"),
    ]):
        learn = decorator(learn)
    return click.command(name="learn")(learn)


def _classify() -> click.Command:
    classify = classify_command
    for decorator in reversed([
        click.option("--format", "output_format", default=None, metavar="FORMAT",
                     help="scores: one %.8f score per input line (default); trec: `qid Q0 docid rank score tag`; "
                          "selections: a div model's K documents per candidate set (its default)."),
        click.option("--tag", type=Tag(), default="svmstruct", show_default=True, help="Run tag of the TREC format."),
        click.option("-v", "verbosity", type=Integer(0, 3), default=0,
                     help="1: print a line of statistics on stderr."),
        THREADS_OPTION,
        click.argument("test_file"),
        click.argument("model_file"),
        click.argument("output", default="-"),
    ]):
        classify = decorator(classify)
    return click.command(name="classify")(classify)


def _eval() -> click.Command:
    evaluate = evaluate_command
    for decorator in reversed([
        click.option("-m", "measure_names", multiple=True,
                     help="Measure to report (repeatable; `all` for every measure). Default: error, precision, recall, "
                          "f1, rocarea, map, ndcg@10."),
        click.option("-q", "per_query", is_flag=True, help="Also print the per-query values of per-query measures."),
        click.option("--format", "output_format", type=click.Choice(["trec", "table", "json"]), default=None,
                     help="trec (the default with one PREDICTIONS file): `measure<TAB>qid<TAB>value` lines with qid "
                          "`all` for the summary; table (the default with several: the comparison) or json."),
        click.option("--rel-threshold", type=Number(), default=0.0, show_default=True,
                     help="A label above this is relevant / positive for binary measures."),
        click.option("--write-qrels", default=None, help="Also write TEST_FILE's labels as TREC qrels to this file."),
        click.option("--subtopics", default=None,
                     help="Diversity: subtopic qrels; PREDICTIONS are then `classify` selections of a div model and "
                          "the measures subtopic-loss, s-recall and alpha-ndcg at K = the selection size."),
        click.option("--alpha", type=Number(0.0, 1.0), default=None,
                     help="With --subtopics: alpha of alpha-NDCG (the chance that a user misses a subtopic a document "
                          "covers).  [default: 0.5]"),
        THREADS_OPTION,
        click.argument("test_file"),
        click.argument("predictions", nargs=-1, required=True),
    ]):
        evaluate = decorator(evaluate)
    return click.command(name="eval")(evaluate)


def _qrels() -> click.Command:
    qrels = qrels_command
    for decorator in reversed([click.argument("test_file"), click.argument("output", default="-")]):
        qrels = decorator(qrels)
    return click.command(name="qrels")(qrels)


def _div_baseline() -> click.Command:
    baseline = div_baseline_command
    for decorator in reversed([
        click.option("--method", type=click.Choice(["unweighted", "essential-pages", "random"]), default="unweighted",
                     show_default=True, help="unweighted word coverage, Essential Pages (TF log 1/DF) or random."),
        click.option("-k", "K", type=Integer(1), default=5, show_default=True, help="Retrieval size K."),
        click.option("--format", "output_format", type=click.Choice(["selections", "trec"]), default="selections",
                     show_default=True, help="selections: `qid docid ...` as classify writes for a div model; trec: "
                                             "the whole candidate set ranked in selection order."),
        click.option("--tag", type=Tag(), default="baseline", show_default=True, help="Run tag of the TREC format."),
        click.option("--title-offset", type=Integer(0), default=None,
                     help="Feature ids above this are title words (id - offset)."),
        click.option("--doc-features-from", type=Integer(1), default=None,
                     help="Feature ids from this on are not words."),
        click.option("--seed", type=Integer(0), default=0, show_default=True, help="Seed of the random baseline."),
        click.argument("test_file"),
        click.argument("output", default="-"),
    ]):
        baseline = decorator(baseline)
    return click.command(name="div-baseline")(baseline)


def _losses() -> click.Command:
    return click.command(name="losses")(losses_command)


def main(argv=None) -> None:
    """Entry point: user errors become one line on stderr and a non-zero exit, never a traceback."""
    code = 0
    previous = {number: signal.signal(number, _raise_terminated) for number in ENDING_SIGNALS
                if signal.getsignal(number) != signal.SIG_IGN}  # inherited as ignored (nohup): stays ignored
    streams = _StandardStreams()
    args = sys.argv[1:] if argv is None else [str(a) for a in argv]
    try:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):  # the commands check what they compute and
                warnings.simplefilter("ignore", RuntimeWarning)  # say it in one line: no numpy warnings besides
                code = _run(build_cli(), args)
            sys.stdout.flush()  # a full device fails here, not at the interpreter's exit
        except SystemError as e:  # a signal handler raised inside a numba kernel: its dispatcher wraps it
            raise (_interruption(e) or e) from None
    except UsageError as e:
        code = _error(str(e), e.exit_code)
    except SvmStructError as e:
        code = _error(str(e), e.exit_code)
    except click.exceptions.Abort:
        code = _error("interrupted", 130)
    except click.UsageError as e:
        hint = f" (see 'svmstruct {e.ctx.info_name} --help')" if e.ctx is not None and e.ctx.parent is not None \
            else " (see 'svmstruct --help')"
        code = _error(f"{e.format_message()}{hint}", 2)
    except click.ClickException as e:
        code = _error(e.format_message(), e.exit_code)
    except KeyboardInterrupt:
        code = _error("interrupted", 130)
    except Terminated as e:
        code = _error(ENDING_SIGNALS.get(e.signum, "terminated"), 128 + e.signum)
    except BrokenPipeError:
        _silence_stdout()
        code = 141
    except MemoryError:
        code = _error("out of memory", 1)
    except OSError as e:  # a write to stdout that no OutputError covers (--help to a full device)
        _silence_stdout()
        code = _error(f"cannot write to the standard output: {e.strerror or e}", 4)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        streams.restore()
    if code:
        sys.exit(code)


def _interruption(error: BaseException) -> BaseException | None:
    """The KeyboardInterrupt or Terminated that a SystemError (numba's 'returned a result with an exception
    set') wraps, if any."""
    seen = 0
    cause = error.__cause__ or error.__context__
    while cause is not None and seen < 10:
        if isinstance(cause, (KeyboardInterrupt, Terminated)):
            return cause
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return None


class _Closed:
    """sys.stdin / sys.stdout when the process started with that descriptor closed (`<&-`, `>&-`): using it
    is one clear error (InputError / OutputError) instead of an AttributeError on None."""

    def __init__(self, error: Exception):
        self.error = error

    def _fail(self, *args, **kwargs):
        raise self.error

    write = read = readline = readlines = flush = fileno = __iter__ = __next__ = __enter__ = _fail

    def __exit__(self, *exc) -> None:
        return None

    @property
    def buffer(self):
        raise self.error

    def isatty(self) -> bool:
        return False


class _StandardStreams:
    """The process's standard streams made safe for the run: a closed descriptor 0-2 is opened on /dev/null
    (so that no file the run opens takes its number) and its Python stream fails clearly when used;
    restore() puts back what was there."""

    def __init__(self):
        from svmstruct.errors import InputError, OutputError

        self.saved = (sys.stdin, sys.stdout, sys.stderr)
        for fd in (0, 1, 2):
            try:
                os.fstat(fd)
            except OSError:
                try:
                    null = os.open(os.devnull, os.O_RDWR)
                    if null != fd:
                        os.dup2(null, fd)
                        os.close(null)
                except OSError:
                    pass
        if sys.stdin is None:
            sys.stdin = _Closed(InputError("the standard input is closed", "<stdin>"))
        if sys.stdout is None:
            sys.stdout = _Closed(OutputError("the standard output is closed", "<stdout>"))
        if sys.stderr is None:
            sys.stderr = open(os.devnull, "w")

    def restore(self) -> None:
        sys.stdin, sys.stdout, sys.stderr = self.saved


def _run(group: click.Group, args: list) -> int:
    """Parse and run a command. click's own `main` is not used: it turns a broken pipe into exit 1 and
    prints a blank line on Ctrl-C; here both reach main's handlers."""
    try:
        with group.make_context("svmstruct", args) as ctx:
            group.invoke(ctx)
    except click.exceptions.Exit as e:  # --help, --version
        return e.exit_code
    except click.exceptions.NoArgsIsHelpError as e:  # `svmstruct` alone: the help, and a usage error's code
        click.echo(e.ctx.get_help())
        return 2
    return 0


def _error(message: str, code: int) -> int:
    say(f"svmstruct: error: {printable(message)}")
    return code


def _raise_terminated(signum, frame):
    raise Terminated(signum)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so that the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass

