"""svm_perf's multivariate losses (Joachims 2005): the whole file is one example (n = 1).

Conventions as svm_perf (DESIGN.md section 4): label +1 iff target > 0; Delta in percent; a constant
feature of value --b (default 1) appended to every document, its weight regularised; epsilon 0.1.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from svmstruct.errors import InputError
from svmstruct.losses import Loss, TrainingProblem
from svmstruct.losses import perf_oracles


def binary_labels(y: np.ndarray) -> np.ndarray:
    """svm_perf's labels: +1 for a target > 0, -1 otherwise."""
    return np.where(y > 0, 1.0, -1.0)


def with_bias(X: sp.csr_matrix, bias: float) -> sp.csr_matrix:
    """X with a constant column of value `bias` appended (svm_perf --b); X itself when bias is 0."""
    if bias == 0:
        return X
    column = sp.csr_matrix(np.full((X.shape[0], 1), float(bias)))
    return sp.hstack([X, column], format="csr")


def _builder(kernel, needs_both_classes: bool):
    def build(data, opts: dict) -> TrainingProblem:
        bias = float(opts.get("bias", 1.0))
        y = binary_labels(data.y)
        pos = int(np.count_nonzero(y > 0))
        neg = len(y) - pos
        if needs_both_classes and (pos == 0 or neg == 0):
            raise InputError(f"this loss needs positive and negative examples; found {pos} positive, {neg} negative", data.path)
        X = with_bias(data.X, bias)

        def most_violated(scores):
            return kernel(y, scores)

        return TrainingProblem(X, 1, most_violated, bias=bias, info={"positives": pos, "negatives": neg})

    return build


LOSSES = [
    Loss("errorrate", ("2", "error"), "perf", "error rate in percent (svm_perf -l 2)",
         _builder(perf_oracles.errorrate_most_violated, False), 0.1),
    Loss("rocarea", ("10", "roc"), "perf", "100 - ROC area in percent: swapped pos/neg pairs (svm_perf -l 10)",
         _builder(perf_oracles.rocarea_most_violated, True), 0.1),
]
