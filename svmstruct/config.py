"""A training run's settings: one typed record (Run) whose fields declare their command-line spelling, built by
`svmstruct learn` (its options are generated from these declarations and the loss registry's), by api.fit and by
the estimators, and checked in one place (Run.check) before any data is read. Settings is the part the training
loop reads (the C grid, epsilon, the iteration limit, normalisation, a checkpoint to resume)."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from svmstruct import registry
from svmstruct.dataset.normalize import METHODS as NORMALIZATIONS
from svmstruct.errors import InputError, UsageError
from svmstruct.options import MAX_ITERATIONS, parse_number

if TYPE_CHECKING:
    from svmstruct.kernels.nystroem import Spec
    from svmstruct.spec import Loss, Trainable

ALGORITHMS_1SLACK = ("3", "4")  # svm_perf/svm_struct -w values that mean the 1-slack algorithm
PYTHON_SETTINGS = ("epsilon", "max_iterations", "normalize", "kernel", "resume")  # fit's besides loss options and
# checkpoint (Run.checkpoint_file)
KERNEL_FLAGS = {"degree": "-d", "gamma": "-g", "coef_lin": "-s", "coef_const": "-r", "basis_size": "--k",
                "basis_method": "--t", "basis_file": "--f"}  # only with a kernel (-t 1|2|3)


def cli(*flags: str, help: str, kind: str = "text", low: float | None = None, high: float | None = None,
        choices: tuple = (), show_default: bool = False, metavar: str | None = None) -> dict:
    """A field's command-line declaration (the metadata `learn` generates its option from). kind: text, number,
    integer (within [low, high]), choice, flag, switch (a --name/--other pair of flags), or repeated (given any
    number of times: a tuple of texts)."""
    return {"cli": dict(flags=flags, help=help, kind=kind, low=low, high=high, choices=choices,
                        show_default=show_default, metavar=metavar)}


@dataclass
class Run:
    """Everything `svmstruct learn` is told; api.fit and the estimators fill the fields they take."""
    C: Any = field(default=None, metadata=cli(
        "-c", help="Trade-off C of the 1-slack objective 1/2|w|^2 + C xi (svm_perf/svm_rank scaling, see "
        "docs/learn.md); a comma-separated grid with --validate. Default: the loss's, 100 for svm_perf's losses, 1 "
        "for the others; a --problem needs it, as svm_multiclass and svm_hmm do."))
    epsilon: float | None = field(default=None, metadata=cli(
        "-e", kind="number", help="Stop when no constraint is violated by more than this (default: the loss's, e.g. "
        "0.1 for svm_perf losses)."))
    loss: str | None = field(default=None, metadata=cli(
        "-l", help="Loss: a name or svm_perf's numeric code (see `svmstruct losses`).  [default: {default_loss}]"))
    problem: str | None = field(default=None, metadata=cli(
        "--problem", metavar="MODULE:CLASS", help="Train a structured problem of yours (svm_struct's API, "
        "docs/problems.md) instead of a loss; its read() reads TRAIN_FILE."))
    rescaling: int | None = field(default=None, metadata=cli(
        "-o", kind="integer", help="With --problem: svm_struct's rescaling, 1 slack or 2 margin (default 2)."))
    problem_options: tuple = field(default=(), metadata=cli(
        "--problem-option", kind="repeated", metavar="KEY=VALUE", help="With --problem: one of the problem's "
        "options (its `declared` ones, e.g. --problem-option labels=5); repeat it for several."))
    max_iterations: int = field(default=MAX_ITERATIONS, metadata=cli(
        "-#", kind="integer", show_default=True, help="Maximum number of iterations."))
    verbosity: int = field(default=1, metadata=cli(
        "-v", kind="integer", low=0, high=3, show_default=True,
        help="0: no progress (warnings still go to stderr); 1: a progress line per iteration and a summary (with "
        "--validate: a line per C, and inside a C one every 10 s); 2: also every C's iterations and summary, and why "
        "a command runs in its own process; 3: also the line search's step, xi and |w|."))
    algorithm: str = field(default="3", metadata=cli(
        "-w", show_default=True,
        help="Accepted for svm_perf compatibility: 3 or 4 (both mean the 1-slack algorithm used here)."))
    model_format: str = field(default="svmstruct", metadata=cli(
        "--format", kind="choice", choices=("svmstruct", "svmlight", "svm_multiclass", "svm_hmm"), show_default=True,
        help="Model file format; svmlight is readable by svm_perf_classify/svm_rank_classify, svm_multiclass and "
        "svm_hmm (with --problem multiclass, hmm) by svm_multiclass_classify and svm_hmm_classify."))
    single_precision: bool = field(default=True, metadata=cli(
        "--float32/--float64", kind="switch", show_default=True,
        help="Store feature values in single precision, as svm_light, svm_perf and svm_rank do (the same values as "
        "theirs, half the memory), or in double precision."))
    layout: str = field(default="auto", metadata=cli(
        "--layout", kind="choice", choices=("auto", "sparse", "dense"), show_default=True,
        help="How the training data is stored: auto takes the smaller of a sparse (CSR) and a dense matrix (dense "
        "for LETOR-style data with every feature present, sparse for text)."))
    dense: bool = field(default=False, metadata=cli("--dense", kind="flag", help="Same as --layout dense."))
    validation_file: str | None = field(default=None, metadata=cli(
        "--validate", help="Validation data: train for every C of the -c grid and keep the best model by --select."))
    select_measure: str | None = field(default=None, metadata=cli(
        "--select", help="Measure that picks C on the validation data (any `eval` measure; `error` is minimised); "
        "default: the loss's own measure."))
    normalize: str = field(default="none", metadata=cli(
        "--normalize", kind="choice", choices=NORMALIZATIONS, show_default=True,
        help="query: min-max per feature within every query (LETOR's QueryLevelNorm), applied by classify too; "
        "global: each feature divided by its largest |value|, folded into the weights."))
    workers: int | None = field(default=None, metadata=cli(
        "--workers", kind="integer", low=1, metavar="N", help="Train on a local Dask cluster of N worker processes; "
        "every TRAIN_FILE is a shard of whole queries (of whole examples with --problem; needs "
        "svmstruct[distributed])."))
    scheduler: str | None = field(default=None, metadata=cli(
        "--scheduler", metavar="ADDRESS", help="Train on the Dask cluster whose scheduler is at ADDRESS "
        "(tcp://host:8786): its workers read the TRAIN_FILEs where they are."))
    checkpoint_file: str | None = field(default=None, metadata=cli(
        "--checkpoint", metavar="FILE", help="Save the training state to FILE as it goes (atomically; removed once "
        "the model is written after convergence)."))
    resume: bool = field(default=False, metadata=cli(
        "--resume", kind="flag",
        help="Continue the run whose --checkpoint FILE is given (same data, loss, options, -c, -e)."))
    kernel_type: int = field(default=0, metadata=cli(
        "-t", kind="integer", low=0, show_default=True,
        help="Kernel (svm_light's): 0 linear, {kernels}; a nonlinear kernel trains over a basis of --k vectors."))
    degree: int | None = field(default=None, metadata=cli("-d", kind="integer", help="-t 1: the degree d (default 3)."))
    gamma: float | None = field(default=None, metadata=cli("-g", kind="number", help="-t 2: gamma (default 1)."))
    coef_lin: float | None = field(default=None, metadata=cli("-s", kind="number", help="-t 1, 3: s (default 1)."))
    coef_const: float | None = field(default=None, metadata=cli("-r", kind="number", help="-t 1, 3: r (default 1)."))
    basis_size: int | None = field(default=None, metadata=cli(
        "--k", kind="integer", metavar="K", help="With -t: the number of basis vectors (default 500; svm_perf's --k)."))
    basis_method: int | None = field(default=None, metadata=cli(
        "--t", kind="integer", metavar="M", help="With -t: how the basis is chosen (svm_perf's --t): 1 every "
        "(n/K)-th document (default), 2 by incomplete Cholesky."))
    basis_file: str | None = field(default=None, metadata=cli(
        "--f", metavar="FILE", help="With -t: choose the basis among this file's vectors (SVMlight) instead of the "
        "training documents; all of them when it has at most --k."))
    train_files: tuple = ()  # TRAIN_FILE... ('-': stdin)
    model_file: str | None = None  # MODEL_FILE ('-': stdout)
    loss_options: dict = field(default_factory=dict)  # the loss's options by keyword (the registry's Options)
    kernel: Spec | None = None  # a kernel map given ready (api.fit, the estimators) instead of -t and its options

    @classmethod
    def of(cls, loss: str, C: Any, **keywords: Any) -> Run:
        """The run of the Python API: fit(data, loss, C, epsilon=..., max_iterations=..., normalize=...,
        kernel=..., **the loss's options)."""
        settings = {name: keywords.pop(name) for name in PYTHON_SETTINGS if name in keywords}
        if "checkpoint" in keywords:  # fit(checkpoint=FILE, resume=True): learn's --checkpoint FILE --resume
            settings["checkpoint_file"] = keywords.pop("checkpoint")
        return cls(C=list(C) if isinstance(C, (list, tuple)) else [C], loss=loss, loss_options=keywords, **settings)

    def check(self, spelling: Callable[[str], str] | None = None) -> CheckedRun:
        """Every check that needs no data, in the order `learn` reports them; UsageError (or InputError) for the
        first that fails. spelling(name): how a loss option is spelled to the user (its flag on the command line)."""
        from svmstruct.io import files

        if self.algorithm not in ALGORITHMS_1SLACK:
            raise UsageError(f"-w {self.algorithm}: only the 1-slack algorithm (-w 3 or 4) is implemented")
        if self.problem is not None and not self.kernel_type:
            spelled = self._as_the_originals_spell()
            if spelled is not self:
                return spelled.check(spelling)
        loss, opts = self._problem(spelling) if self.problem is not None else \
            resolve_loss(registry.DEFAULT if self.loss is None else self.loss, self.loss_options, spelling)
        if self.problem is None and (self.rescaling is not None or self.problem_options):
            raise UsageError(f"{'-o' if self.rescaling is not None else '--problem-option'} applies to --problem")
        settings = Settings(self._grid(loss), self.epsilon, self.max_iterations, self.normalize).check(loss)
        self._check_format(loss)
        if self.normalize == "query" and self.model_format == "svmlight":
            raise UsageError("--normalize query needs the svmstruct model format: the originals' classify programs "
                             "would score raw features")
        measure = self._selection_measure(loss, opts)
        kernel = self.kernel if self.kernel is not None else self._kernel_spec(loss)
        if kernel is not None and self.model_format == "svmlight":
            from svmstruct.kernels.table import TYPES

            if not TYPES[kernel.kernel.kind].svm_light:
                raise UsageError(f"--format svmlight: svm_light has no {TYPES[kernel.kernel.kind].name} kernel; write "
                                 "the svmstruct format")
        if self.validation_file == files.STDIO and files.STDIO in self.train_files:
            raise UsageError("TRAIN_FILE and --validate cannot both be read from stdin")
        self._check_sources(loss, opts)
        if self.model_file is not None:
            files.check_distinct([("MODEL_FILE", self.model_file), ("--checkpoint", self.checkpoint_file)],
                                 [*(("TRAIN_FILE", path) for path in self.train_files),
                                  ("--validate", self.validation_file), ("--subtopics", opts.get("subtopics")),
                                  ("--f", self.basis_file)])
            files.check_writable(self.model_file)
        self._check_checkpoint(settings)
        return CheckedRun(self, loss, opts, settings, kernel, measure)

    def _check_checkpoint(self, settings: Settings) -> None:
        """--checkpoint and --resume: one C, a file (regular or absent) that a new run may replace only when it is a
        checkpoint, --resume only with --checkpoint (the file's state is read by learn, svmstruct.train.checkpoint)."""
        from svmstruct.io import files
        from svmstruct.train import checkpoint

        path = self.checkpoint_file
        if path is None:
            if self.resume:
                raise UsageError("--resume needs --checkpoint FILE (the file a previous run wrote)")
            return
        if len(settings.grid) > 1:
            raise UsageError("--checkpoint holds one training run: give one -c value, not a --validate grid")
        if path == files.STDIO:
            raise UsageError("--checkpoint needs a file, not '-'")
        files.check_regular_or_absent(path, "--checkpoint")
        if not self.resume:
            checkpoint.check_replaceable(path)
            files.check_writable(path)

    def _as_the_originals_spell(self) -> Run:
        """This run with a problem's options given by the flags its original spells them with where the command
        line stored them as a kernel basis's or a loss's (svm_hmm's --t and --b: the basis's --t and svm_perf's bias
        --b, which do not apply to a problem) moved to the problem's options."""
        declared = registry.problem(self.problem or "").options
        basis = {flag: name for name, flag in KERNEL_FLAGS.items()}
        by_flag = {option.flag: name for name, option in registry.all_options().items()}
        fields: dict[str, Any] = {}
        options = dict(self.loss_options)
        for option in declared:
            for flag in option.flags:
                if flag in basis and getattr(self, basis[flag]) is not None:
                    fields[basis[flag]] = None
                    options[option.name] = str(getattr(self, basis[flag]))
                elif by_flag.get(flag, option.name) != option.name and options.get(by_flag[flag]) is not None:
                    options[option.name] = options.pop(by_flag[flag])
        return dataclasses.replace(self, **fields, loss_options=options) if options != self.loss_options else self

    def _problem(self, spelling: Callable[[str], str] | None) -> tuple:
        """The Loss of --problem MODULE:CLASS and its options (-o checked against the problem's oracles)."""
        if self.loss is not None:
            raise UsageError("-l and --problem both name what to train: give one of them")
        loss = registry.problem(self.problem or "")
        given = {}
        for text in self.problem_options:
            key, equals, value = text.partition("=")
            if not (key and equals):
                raise UsageError(f"--problem-option takes KEY=VALUE, got '{text}'")
            given[key.strip()] = value.strip()
        flagged = {name for name, value in self.loss_options.items() if value is not None}
        if flagged & set(given):
            name = sorted(flagged & set(given))[0]
            declared = loss.option(name)
            flag = declared.flag if declared is not None else (spelling or str)(name)
            raise UsageError(f"{flag} and --problem-option {name} both give {name}: give one")

        def spell(name: str) -> str:
            if name == "rescaling":
                return "-o"
            declared = loss.option(name)
            if name in flagged and declared is not None and spelling is not None:
                return declared.flag
            if name in given or loss.option(name) is not None:
                return f"--problem-option {name}"
            return spelling(name) if spelling else f"option '{name}'"

        rescaling = 2 if self.rescaling is None else self.rescaling
        opts = loss.resolve({**self.loss_options, **given, "rescaling": rescaling}, None, spell)
        if opts["rescaling"] == 1 and not loss.instance(opts).has_slack_oracle():
            raise UsageError(f"-o 1: {loss.name} has no slack-rescaling oracle (most_violated_slack); train with "
                             "-o 2 (margin rescaling)")
        return loss, opts

    def _check_format(self, loss: Trainable) -> None:
        """--format fits what is trained: svm_light's for a loss, the original's of a problem of svmstruct's."""
        from svmstruct.io import model_files

        if self.problem is None and self.model_format in model_files.FORMATS:
            raise UsageError(f"--format {self.model_format} writes models of --problem "
                             f"{model_files.FORMATS[self.model_format]}")
        if self.problem is not None and self.model_format == "svmlight":
            raise UsageError("--format svmlight writes a linear model of documents; a --problem's model is svmstruct's"
                             " (or, for multiclass and hmm, svm_multiclass's and svm_hmm's: --format svm_multiclass, "
                             "svm_hmm)")
        if self.problem is not None and self.model_format in model_files.FORMATS and \
                loss.name != model_files.PROBLEMS[model_files.FORMATS[self.model_format]]:
            raise UsageError(f"--format {self.model_format} writes models of --problem "
                             f"{model_files.FORMATS[self.model_format]}, not of {self.problem}")

    def _grid(self, loss: Trainable) -> list:
        if self.C is None or (isinstance(self.C, (list, tuple)) and list(self.C) == [None]):
            if loss.default_C is None:
                raise UsageError(f"--problem {self.problem}: give -c, the trade-off C of 1/2|w|^2 + C/n sum xi_i "
                                 "(svm_multiclass and svm_hmm refuse to run without it too): its scale is the "
                                 "problem's loss's, e.g. -c 1000 to start with for SVM-multiclass")
            return [loss.default_C]
        if not isinstance(self.C, str):
            return list(self.C) if isinstance(self.C, (list, tuple)) else [self.C]
        grid = parse_grid(self.C)
        if len(grid) > 1 and self.validation_file is None:
            raise UsageError("a grid of C values needs --validate VALIDATION_FILE to choose from")
        return grid

    def _selection_measure(self, loss: Trainable, opts: dict) -> str | None:
        """The measure that picks C on the validation data (checked), or None without --validate."""
        if self.validation_file is None:
            if self.select_measure is not None:
                raise UsageError("--select applies only with --validate")
            return None
        from svmstruct.evaluation.measures import canonical

        measure = self.select_measure or (loss.measure(opts) if loss.measure else None)
        if measure is None:
            raise UsageError(f"--validate needs --select MEASURE: loss {loss.name} names no eval measure")
        measure = canonical(measure)
        check_measure(measure)
        return measure

    def _kernel_spec(self, loss: Trainable) -> Spec | None:
        """The nystroem.Spec of -t/-d/-g/-s/-r/--k/--t/--f (None for the linear kernel), checked."""
        if not self.kernel_type:
            stray = [flag for name, flag in KERNEL_FLAGS.items() if getattr(self, name) is not None]
            if stray:
                from svmstruct.kernels.table import TYPES

                kinds = ", ".join(f"-t {t.code} ({t.name})" for t in TYPES.values())
                raise UsageError(f"{stray[0]} applies to a kernel: give {kinds}")
            return None
        from svmstruct.kernels import nystroem, table

        if self.normalize != "none":
            raise UsageError("--normalize applies to linear models only: with -t, scale the features before "
                             "training")
        if loss.kind == "structured" and not getattr(loss, "maps_features", False):
            raise UsageError(f"-t: problem {loss.name} gives no feature vectors to map (its feature_rows); kernels "
                             "apply to problems whose inputs are feature vectors (multiclass, hmm)")
        if loss.kind == "structured" and (self.workers is not None or self.scheduler is not None):
            raise UsageError("-t with --problem trains in one process: drop --workers/--scheduler, or train the "
                             "linear problem on the cluster")
        from svmstruct.io import model_files

        if loss.kind == "structured" and self.model_format in model_files.FORMATS:
            raise UsageError(f"--format {self.model_format}: the original's model cannot hold svmstruct's kernel map; "
                             "write the svmstruct format")
        if not loss.plain_features and loss.kind != "structured":
            raise UsageError(f"-t: loss {loss.name} builds its own features from the documents; kernels apply to "
                             "the other losses")
        defaults = table.Kernel()
        kernel = table.Kernel(self.kernel_type, *(
            getattr(defaults, name) if getattr(self, name) is None else getattr(self, name)
            for name in ("degree", "gamma", "coef_lin", "coef_const")))
        return nystroem.Spec(kernel, nystroem.DEFAULT_SIZE if self.basis_size is None else self.basis_size,
                             nystroem.SPREAD if self.basis_method is None else self.basis_method, self.basis_file,
                             size_given=self.basis_size is not None).check()

    def _check_sources(self, loss: Trainable, opts: dict) -> None:
        from svmstruct.io import files

        if self.workers is not None and self.scheduler is not None:
            raise UsageError("--workers starts a local cluster and --scheduler joins an existing one: give one of "
                             "them")
        if self.workers is None and self.scheduler is None:
            if self.train_files.count(files.STDIO) > 1:
                raise UsageError("only one TRAIN_FILE can be read from stdin")
            return
        if files.STDIO in self.train_files:
            raise UsageError("with --workers or --scheduler the workers read the training files: '-' (stdin) cannot "
                             "be one")
        from svmstruct.train.address import scheduler_address

        if self.scheduler is not None:
            scheduler_address(self.scheduler)
        loss.check_decomposes(opts)


@dataclass
class CheckedRun:
    """A Run that passed Run.check: the loss and its complete options, the loop's Settings, the kernel map to
    train over (or None) and the measure that selects C on validation data (or None)."""
    run: Run
    loss: Trainable
    opts: dict
    settings: Settings
    kernel: Spec | None
    select_measure: str | None

    def signature(self) -> dict:
        """What a checkpoint of this run must match to be resumed (svmstruct.train.checkpoint)."""
        run = self.run
        return dict(loss=self.loss.name, options=self.opts, C=self.settings.grid[0],
                    epsilon=self.settings.epsilon_for(self.loss), normalize=run.normalize,
                    train_files=list(run.train_files), precision="float32" if run.single_precision else "float64",
                    **({"kernel": dataclasses.asdict(self.kernel)} if self.kernel else {}))


def resolve_loss(name: str, options: dict | None = None,
                 spelling: Callable[[str], str] | None = None) -> tuple[Loss, dict]:
    """The loss called `name` and its complete, checked options (defaults filled in); UsageError for an
    unknown loss, an option it does not take or a bad value. Nothing is read: call it first."""
    try:
        loss, implied = registry.lookup(name)
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


@dataclass
class Settings:
    """How to train, validated once (check): the C grid, epsilon (None: the loss's default), the iteration
    limit, the feature normalisation (svmstruct.dataset.normalize), and for one C a checkpoint to resume from
    (svmstruct.train.checkpoint.load: its arrays read once the data is) or a checkpoint being written (a Callback
    of the caller)."""
    grid: list
    epsilon: float | None = None
    max_iterations: int = MAX_ITERATIONS
    normalize: str = "none"
    resume: Any = None  # a checkpoint.Saved
    checkpointed: bool = False

    def check(self, loss: Trainable | None = None) -> Settings:
        """UsageError for a bad C, epsilon, iteration limit or normalisation (or one the loss cannot take), and
        for a checkpointed or resumed grid of several C."""
        self.grid = [float(C) if isinstance(C, (int, float)) and not isinstance(C, bool) else C for C in self.grid]
        if not self.grid:
            raise UsageError("no C to train with")
        for C in self.grid:
            check_training_parameters(C, self.epsilon, self.max_iterations)
        if (self.checkpointed or self.resume is not None) and len(self.grid) != 1:
            raise UsageError("a checkpoint holds one training run: train one C at a time")
        if self.normalize not in NORMALIZATIONS:
            raise UsageError(f"normalize must be one of {', '.join(NORMALIZATIONS)}, got {self.normalize!r}")
        if loss is not None and self.normalize != "none" and loss.output == "subset":
            raise UsageError(f"normalize does not apply to loss {loss.name}: its features are built from the "
                             "documents")
        return self

    def epsilon_for(self, loss: Trainable) -> float:
        return loss.default_epsilon if self.epsilon is None else float(self.epsilon)


def parse_grid(text: str) -> list:
    """`1`, `0.01,0.1,1` -> sorted list of positive floats (svm_light's number syntax)."""
    try:
        values = sorted({parse_number(v.strip()) for v in str(text).split(",") if v.strip()})
    except ValueError:
        raise UsageError(f"-c takes a number or a comma-separated list of numbers, got '{text}'") from None
    if not values or min(values) <= 0 or not all(math.isfinite(v) for v in values):
        raise UsageError(f"-c values must be finite and positive, got '{text}'")
    return values


def check_measure(name: str) -> None:
    """UsageError for a measure `eval` does not know (checked before any training)."""
    from svmstruct.evaluation import measures

    try:
        measures.lookup(name)
    except KeyError as e:
        raise UsageError(e.args[0]) from None
