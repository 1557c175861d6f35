"""What is trained: the contract a loss declares so that the trainer, the command line, the Python API and the
tests use it without knowing it by name (docs/ARCHITECTURE.md walks through adding one), and the typed options
losses and problems declare.

A loss is a `Loss` value listed in its family module's LOSSES; svmstruct/losses/__init__.py lists the
family modules. It declares
- its names (canonical, aliases such as svm_perf's numeric codes), default epsilon and default C;
- its options (`Option`: typed, checked, with defaults and the example values the contract battery tries), the
  only ones it accepts;
- `build(dataset, opts) -> TrainingProblem`: the design matrix, n and the oracle (svmstruct.train.problem);
- `output`: what the oracle maximises over, for the generic exhaustive tests: "labeling" (one binary
  variable per document or per pair), "ranking" (a permutation) or "subset" (K documents);
- `measure(opts)`: the `eval` measure the loss stands for (C selection, the estimators' score);
- how `classify` writes a model's output: scores by default, or `predict(model, dataset, fmt, tag)`
  with its own `formats` (SVM-div's selected subsets).

An option is checked when it is parsed, before any data is read: `-c inf`, `--beta nan` or `-k 0` are usage
errors, not NaN models.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Callable, ClassVar

from svmstruct.errors import InputError, UsageError
from svmstruct.options import LARGEST_INTEGER, SCORE_FORMATS, parse_integer, parse_number, positive_int


@dataclass(frozen=True)
class Option:
    name: str  # keyword in opts dicts and the Python API, e.g. "beta"
    flags: tuple  # command-line spellings, e.g. ("--beta",)
    kind: str  # "float", "int", "str" or "flag"
    help: str
    default: Any = None  # None: not set (the loss decides, or the option is off)
    check: Callable[[Any], str | None] | None = None  # an error message for a bad (parsed) value, or None
    metavar: str | None = None
    required: bool = False  # the loss cannot train without it (e.g. div's --subtopics)
    examples: tuple = ()  # values besides the default that the contract battery trains with (tests/test_*_contract)

    @property
    def flag(self) -> str:
        return self.flags[-1] if self.flags[-1].startswith("--") else self.flags[0]

    def but(self, **changes) -> "Option":
        """The same option with another default or help (a loss that takes it differently)."""
        return replace(self, **changes)

    def parse(self, value: Any) -> Any:
        """The value converted to the option's type and checked; UsageError names the flag."""
        problem, parsed = self.checked(value)
        if problem:
            raise UsageError(f"{self.flag} {problem}")
        return parsed

    def checked(self, value: Any) -> tuple:
        """(what is wrong with the value or None, the value converted to the option's type)."""
        if value is None:
            return None, None
        try:
            if self.kind == "float":
                parsed: Any = parse_number(value)
            elif self.kind == "int":
                parsed = parse_integer(value)
            elif self.kind == "flag":
                parsed = bool(value)
            else:
                parsed = str(value)
        except OverflowError:
            return f"must be at most {LARGEST_INTEGER} in magnitude, got '{value}'", None
        except (TypeError, ValueError):
            return f"takes {'an integer' if self.kind == 'int' else 'a finite number'}, got '{value}'", None
        problem = self.check(parsed) if self.check else None
        return (f"{problem}, got '{value}'" if problem else None), parsed


class Declares:
    """What both kinds of spec share: a name, the options it takes, and their resolution."""

    name: str
    aliases: tuple
    options: tuple

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    def resolve(self, given: dict, implied: dict | None = None, spelling: Callable[[str], str] | None = None) -> dict:
        """The loss's options: parsed and checked values for the ones given, defaults for the rest.

        `given` holds the user's values (None or False = not given); an option the loss does not take is
        a UsageError, as is one that contradicts `implied` (set by the loss's name: k of ndcg@10) or a
        required option left out. `spelling(name)` names an option in messages (the CLI: its flag).
        """
        implied = implied or {}
        spell = spelling or (lambda name: f"option '{name}'")
        opts = {o.name: o.default for o in self.options}
        for name, value in given.items():
            if value is None or value is False:
                continue
            option = self.option(name)
            if option is None:
                raise UsageError(f"{spell(name)} does not apply to loss {self.name}" + self._takes(spell))
            parsed = option.parse(value)
            if name in implied and parsed != implied[name]:
                raise UsageError(f"{spell(name)} {value} contradicts loss {self.name} with {name} {implied[name]}")
            opts[name] = parsed
        opts.update(implied)
        for option in self.options:
            if option.required and opts.get(option.name) is None:
                raise UsageError(f"loss {self.name} needs {spell(option.name)}: {option.help}")
        return opts

    def _takes(self, spell: Callable[[str], str]) -> str:
        names = ", ".join(spell(o.name) for o in self.options)
        return f" (it takes {names})" if names else " (it takes no loss options)"


@dataclass(frozen=True)
class Loss(Declares):
    """A document loss: scores are w.x of the documents' features; build gives its TrainingProblem over X."""

    kind: ClassVar[str] = "document"
    name: str  # canonical name written to the model file
    aliases: tuple  # other accepted spellings, e.g. svm_perf's numeric -l code
    family: str  # perf | rank | map | dorm | div | ... (grouping in `svmstruct losses` and docs/losses.md)
    summary: str  # one line for `svmstruct losses` and --help
    build: Callable[..., Any]  # build(dataset, opts: dict) -> TrainingProblem
    default_epsilon: float
    options: tuple = ()  # Option declarations of the options this loss takes
    output: str = "ranking"  # labeling | ranking | subset (see the module docstring)
    measure: Callable[[dict], str] | None = None  # the eval measure of a trained model (opts -> name)
    predict: Callable[..., str] | None = None  # predict(model, dataset, fmt, tag) -> text; None: scores
    formats: tuple = SCORE_FORMATS  # classify --format values; the first is the default
    needs_qid: bool = False  # every line must have qid:<id> (the examples are queries / candidate sets)
    other_codes: tuple = ()  # numeric -l codes another original gives this loss (svm_rank's -l 1 is pairs)
    plain_features: bool = True  # scores are w.x of the documents' features (a kernel map applies, learn -t)
    default_C: float | None = 1.0  # learn's C without -c (docs/learn.md's table); None: -c must be given

    def decomposes(self, opts: dict) -> bool:
        """The oracle treats every query (candidate set) on its own: a file split into shards of whole
        queries trains the same model (svmstruct.train.distributed). svm_perf's losses do with --per-query."""
        return self.needs_qid or bool(opts.get("per_query"))

    def check_decomposes(self, opts: dict) -> None:
        """UsageError unless the loss treats each query on its own: only then do shards of whole queries train
        the model of the whole file."""
        if not self.decomposes(opts):
            raise UsageError(f"loss {self.name} is a measure of the whole training set: training on a cluster "
                             "needs a loss that treats each query on its own (pairs, map, ndcg@k, div, ..., or an "
                             "svm_perf loss with --per-query)")


# ---- options shared by several loss families

REL_THRESHOLD = Option("rel_threshold", ("--rel-threshold",), "float",
                       "a label above this is positive / relevant", default=0.0, metavar="T")
K = Option("k", ("-k",), "int", "the cut-off k", check=positive_int, metavar="K",  # at most LARGEST_INTEGER
           examples=(1, 3))
RESCALING = Option("rescaling", ("-o",), "int", "svm_struct's rescaling: 1 slack, 2 margin", default=2,
                   check=lambda v: None if v in (1, 2) else "must be 1 (slack) or 2 (margin)", examples=(1,))


@dataclass(frozen=True)
class Problem(Declares):
    """A structured problem (svm_struct's API): Psi, Delta and the oracles of a StructuredProblem subclass
    (svmstruct.problems.base), trained over the identity design; its model file names it MODULE:CLASS."""

    name: str  # MODULE:CLASS, written to the model file
    aliases: tuple  # svmstruct's own problems' short names (--problem multiclass)
    summary: str
    problem: type  # the StructuredProblem subclass
    options: tuple = ()  # RESCALING and the options the class declares
    default_epsilon: float = 0.1
    default_C: float | None = None  # -c must be given, as svm_multiclass and svm_hmm ask
    family: str = "problem"
    formats: tuple = ("labels",)
    kind: ClassVar[str] = "structured"
    output: ClassVar[str] = "structured"
    needs_qid: ClassVar[bool] = False
    plain_features: ClassVar[bool] = False  # Psi is the problem's own: no kernel map, no --normalize
    measure: ClassVar[None] = None

    @classmethod
    def of(cls, problem: type, aliases: tuple = ()) -> Problem:
        """The spec of a StructuredProblem subclass: its MODULE:CLASS, -o and the options it declares."""
        name = f"{problem.__module__}:{problem.__qualname__}"
        summary = (problem.__doc__ or name).strip().splitlines()[0]
        return cls(name, aliases, summary, problem, options=(RESCALING, *getattr(problem, "declared", ())))

    def decomposes(self, opts: dict) -> bool:
        """A problem's cut is a sum over its examples: shards of whole examples train the model of the whole set
        (svmstruct.train.distributed.ProblemShard)."""
        return True

    def check_decomposes(self, opts: dict) -> None:
        """Nothing to refuse: every problem trains on shards (decomposes)."""

    @property
    def maps_features(self) -> bool:
        """The problem's inputs are feature vectors (it gives feature_rows and with_rows): a kernel map applies
        (learn --problem ... -t): the nearest class defining feature_rows is not problems.base's."""
        owner = next((c for c in self.problem.__mro__ if "feature_rows" in vars(c)), None)
        return owner is not None and owner.__module__ != "svmstruct.problems.base"

    def instance(self, opts: dict):
        """The problem with these options (rescaling aside); its training_problem(examples, rescaling) is what the
        trainer sees (the identity design and the cut of the most violated outputs)."""
        return self.problem(**{k: v for k, v in opts.items() if k != "rescaling"})

    def predictions(self, structured, trained, examples: Sequence, source: str | None = None) -> list:
        """STRUCTURED's (an instance of this problem) predictions for examples [(x, y), ...] with a trained model's
        weights, checked against the problem's dimension (InputError naming SOURCE, the model file); through the
        model's kernel map first when it has one (learn -t)."""
        if trained.feature_map is not None:
            examples = mapped(structured, examples, trained.feature_map)
        dim = int(structured.dimension(examples))
        if dim != trained.n_features:  # options edited, or a damaged file: the weights would be read wrongly
            options = ", ".join(f"{k} {v}" for k, v in structured.options.items() if v is not None)
            raise InputError(f"the model has {trained.n_features} weights, its problem ({options}) has {dim}: the "
                             "options do not fit the weights (an edited or damaged model?)", source)
        return structured.predict_all(examples, trained.w)

    def trained_instance(self, trained, overrides: dict | None = None, source: str | None = None):
        """The problem with the options a model's file records (InputError naming the file SOURCE and the option's
        line when one is not the option's) and OVERRIDES (classify's, e.g. the beam)."""
        for key in overrides or {}:
            if self.option(key) is None:
                raise UsageError(f"the model's problem {self.name} takes no option {key}")
        options = {k: v for k, v in trained.options.items() if self.option(k) is not None}
        for key, value in options.items():
            problem, _ = self.option(key).checked(value)  # type: ignore[union-attr]
            if problem:
                raise InputError(f"option {key}: {problem} (an edited or damaged model?)", source,
                                 trained.lines.get(f"option.{key}"))
        return self.instance(self.resolve({**options, **(overrides or {})}))

    def predict(self, trained, path: str, source: str | None = None, overrides: dict | None = None) -> str:
        """`svmstruct classify`'s output: one format(y) line per example of the file at PATH."""
        structured = self.trained_instance(trained, overrides, source)
        predictions = self.predictions(structured, trained, structured.read(path), source)
        return "".join(structured.format(y) + "\n" for y in predictions)


def mapped(structured, examples: Sequence, kernel_map) -> Sequence:
    """The examples of a structured problem with their feature vectors through a kernel map (phi(x): learn -t)."""
    from svmstruct.kernels.kernel_functions import Rows

    return structured.with_rows(examples, kernel_map.map(Rows.of(structured.feature_rows(examples))))


Trainable = Loss | Problem  # what is trained, of either kind (the registry, model files, train_grid)
