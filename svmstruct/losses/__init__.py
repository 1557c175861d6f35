"""Loss families and the registry: the one extension point (DESIGN.md section 2).

A loss family is a module that turns a Dataset into a TrainingProblem: the design matrix whose rows
the oracle weights, the number of examples n, and the most-violated-constraint oracle

    most_violated(scores) -> (dcoef, delta_sum)

with scores = X @ w (one per row of X), Psi(x, y) - Psi(x, ybar) summed over the examples equal to
X.T @ dcoef for the most violated joint output ybar, and delta_sum the sum of the examples' losses
Delta(y, ybar). The trainer forms the 1-slack constraint w . (X.T @ dcoef) / n >= delta_sum / n - xi.

Adding a loss = one module with a build function + one line in REGISTRY below.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp

from svmstruct.errors import InputError


@dataclass
class TrainingProblem:
    X: sp.csr_matrix  # rows weighted by the oracle's coefficients; w has X.shape[1] entries
    n: int  # number of examples: the 1/n of the 1-slack constraint (svm_struct convention)
    most_violated: Callable[[np.ndarray], tuple[np.ndarray, float]]
    bias: float = 0.0  # value of the constant feature appended as the last column of X (svm_perf --b); 0 = none
    epsilon_scale: float = 1.0  # the original's rescaling of -e for this loss (svm_rank -l 1)
    skipped: int = 0  # examples without a defined loss, left out of training
    info: dict = field(default_factory=dict)  # training-set statistics for the log and the model header


@dataclass(frozen=True)
class Loss:
    name: str  # canonical name written to the model file
    aliases: tuple  # other accepted spellings, e.g. svm_perf's numeric -l code
    family: str  # perf | rank | map | dorm | div
    summary: str  # one line for --help and the README
    build: Callable  # build(data: Dataset, opts: dict) -> TrainingProblem
    default_epsilon: float


def _registry() -> dict:
    from svmstruct.losses import div, dorm, perf, rank

    losses = [*perf.LOSSES, *rank.LOSSES, *dorm.LOSSES, *div.LOSSES]
    return {loss.name: loss for loss in losses}


REGISTRY: dict = _registry()


def lookup(name: str) -> tuple[Loss, dict]:
    """The loss called `name` (canonical name or alias, case-insensitive) and the options its name sets.

    A name like ``prec@10`` or ``ndcg@5`` selects the loss registered as ``prec@k`` / ``ndcg@k`` with k set.
    """
    key = name.strip().lower()
    for loss in REGISTRY.values():
        if key == loss.name or key in loss.aliases:
            return loss, {}
    base, at, k = key.partition("@")
    if at and k.isdigit() and int(k) > 0:
        for loss in REGISTRY.values():
            if base + "@k" == loss.name or base + "@k" in loss.aliases:
                return loss, {"k": int(k)}
    known = ", ".join(f"{l.name} ({'/'.join(l.aliases)})" if l.aliases else l.name for l in REGISTRY.values())
    raise InputError(f"unknown loss '{name}'; known losses: {known}")
