"""What the trainer needs from a loss: the design matrix, the number of examples and the oracle.

A loss family turns a Dataset into a TrainingProblem:

    most_violated(scores) -> (dcoef, delta_sum)

with scores = X @ w (one per row of X), Psi(x, y) - Psi(x, ybar) summed over the examples equal to
X.T @ dcoef for the most violated joint output ybar, and delta_sum the sum of the examples' losses
Delta(y, ybar). The trainer forms the 1-slack constraint w . (X.T @ dcoef) / n >= delta_sum / n - xi.

Losses whose correct output is a set (every ranking sorted by grade is a correct ranking, whatever the
order inside a grade) also give `latent_target(scores) -> shift`: per-row coefficients with
X.T @ shift = sum_i Psi(x_i, y_i(w)) - Psi(x_i, y_i), y_i(w) the correct output most compatible with w
(the latent structural SVM of Yu & Joachims 2009, trained by CCCP: see train.py).

`reference` is the brute-force side of the loss, used by the generic tests (tests/test_loss_contract.py)
and written from the papers independently of the oracle: for example e, the constraint of any output
(its dcoef over every row of X and its Delta), or None for an output the loss does not let compete.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from svmstruct.train.line_search import CALLS

if TYPE_CHECKING:
    import scipy.sparse as sp

    from svmstruct.compute.identity import Identity


@dataclass
class Reference:
    kind: str  # "labeling" (binary variables), "ranking" (a permutation), "subset" (k of the items) or "sum"
    examples: int  # number of examples the oracle treats
    size: Callable[[int], int]  # example -> number of binary variables / items to rank / items to choose from
    constraint: Callable[[int, tuple], tuple[np.ndarray, float] | None]  # (example, output) -> (dcoef, Delta)
    subset_size: Callable[[int], int] | None = None  # subsets: how many items are chosen
    exact: bool = True  # the oracle attains the maximum (SVM-div's greedy does not)
    parts: list | None = None  # kind "sum" (combo): [(weight, Reference)], the oracle's value their weighted sum


@dataclass
class TrainingProblem:
    X: sp.csr_matrix | np.ndarray | Identity  # rows weighted by the oracle's coefficients; w has X.shape[1] entries
    n: int  # number of examples: the 1/n of the 1-slack constraint (svm_struct convention)
    most_violated: Callable[[np.ndarray], tuple[np.ndarray, float]]
    bias: float = 0.0  # value of the constant feature appended as the last column of X (svm_perf --b); 0 = none
    epsilon_scale: float = 1.0  # the original's rescaling of -e for this loss (svm_rank -l 1)
    skipped: int = 0  # examples without a defined loss, left out of training
    examples: int | None = None  # examples in the data, left-out ones included (None: n + skipped; svm_rank's
    # n counts its left-out queries, the C/n the original divides by)
    info: dict = field(default_factory=dict)  # training-set statistics for the log and the model header
    latent_target: Callable[[np.ndarray], np.ndarray] | None = None  # see the module docstring
    reference: Reference | None = None  # see the module docstring
    exact: bool = True  # the oracle finds the most violated output (SVM-div's greedy one does not)
    search_calls: int = CALLS  # a line search's oracle calls at most: fewer where the oracle is the whole cost
    # cached(scores) -> (dcoef, delta_sum) | None: the joint output made of each example's most violated output at
    # the scores among those the oracle gave before (a problem's kept outputs, svm_struct's constraint cache)
    cached: Callable[[np.ndarray], tuple[np.ndarray, float] | None] | None = None
    # the kept outputs as one array for a checkpoint, and given back from one (checked: InputError), where cached is
    kept_state: Callable[[], np.ndarray | None] | None = None
    restore_kept: Callable[[np.ndarray], None] | None = None

    @property
    def examples_in_data(self) -> int:
        return self.n + self.skipped if self.examples is None else self.examples


@dataclass
class TrainingSummary:
    """What a model records of its training set and problem (training.model_of): the same from a dataset
    in this process and from shards on a cluster (svmstruct.train.distributed)."""
    path: str  # the training file(s)
    n_docs: int
    columns: np.ndarray | None  # the feature ids of compacted (hashed) columns, as Dataset.columns
    n: int  # examples trained on
    skipped: int  # examples left out (no defined loss)
    examples: int  # examples in the data, the left-out ones included
    bias: float  # svm_perf's --b (0: none)
    info: dict  # statistics for the log

    @classmethod
    def of(cls, dataset, problem: TrainingProblem) -> TrainingSummary:
        return cls(dataset.path, dataset.n_docs, getattr(dataset, "columns", None), problem.n, problem.skipped,
                   problem.examples_in_data, problem.bias, problem.info)


@dataclass
class Outline:
    """What the loop needs to know of a problem; the data, the scores and the oracle stay with its
    evaluator (svmstruct.train.evaluator)."""
    n: int  # number of examples: the 1/n of the 1-slack constraint
    dim: int  # length of w
    epsilon_scale: float = 1.0  # see TrainingProblem
    exact: bool = True  # the oracle finds the most violated output
    latent: bool = False  # the problem has a latent target (CCCP)
    search_calls: int = CALLS  # a line search's oracle calls at most (TrainingProblem.search_calls)
    cached: bool = False  # the problem keeps the oracle's outputs (TrainingProblem.cached)

    @classmethod
    def of(cls, problem: TrainingProblem) -> Outline:
        return cls(problem.n, problem.X.shape[1], problem.epsilon_scale, problem.exact,
                   problem.latent_target is not None, problem.search_calls, problem.cached is not None)


@dataclass
class Prepared:
    """A training source made ready for a loss: what the loop needs (outline), what the model records of the
    training set (summary), the largest |x| (the badly-scaled warning), --normalize global's scale and the options
    a structured problem settled on its examples (SVM-multiclass's classes: the model's)."""
    outline: Outline
    summary: TrainingSummary
    largest: float
    scale: np.ndarray | None = None
    kernel_map: Any = None  # kernel_map.KernelMap when the features were mapped (learn -t)
    settled: dict = field(default_factory=dict)
