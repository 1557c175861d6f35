"""svm_perf's multivariate losses (Joachims 2005): the whole file is one example (n = 1), or with
per_query every qid is an example and the loss is averaged over them (the svm_struct 1/n convention).

Conventions as svm_perf (DESIGN.md section 4): label +1 iff target > rel_threshold (default 0); Delta
in percent (zero/one: 0 or 1); Psi = sum_i y'_i x_i with y' = +-50/N for the contingency-table losses,
the pairwise form for ROCArea (scaled 50/(P N)) and AvgPrec (unscaled); a constant feature of value
--b (default 1) appended to every document, its weight regularised; epsilon 0.1.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from svmstruct.errors import InputError
from svmstruct.losses import Loss, TrainingProblem
from svmstruct.losses import perf_oracles as po


def binary_labels(y: np.ndarray, threshold: float = 0.0) -> np.ndarray:
    """svm_perf's labels: +1 for a target > threshold, -1 otherwise."""
    return np.where(y > threshold, 1.0, -1.0)


def with_bias(X: sp.csr_matrix, bias: float) -> sp.csr_matrix:
    """X with a constant column of value `bias` appended (svm_perf --b); X itself when bias is 0."""
    if bias == 0:
        return X
    if isinstance(X, np.ndarray):
        return np.hstack([X, np.full((X.shape[0], 1), bias, dtype=X.dtype)])
    column = sp.csr_matrix(np.full((X.shape[0], 1), float(bias)))
    return sp.hstack([X, column], format="csr")


def _k_fraction(code: int, p: float) -> float:
    """svm_perf's --p: k = p * #pos; 0 means 0.5 for Prec@k and 2 for Rec@k."""
    if code == po.PREC_K:
        if p > 1:
            raise InputError(f"--p for Prec@k must not be larger than 1, got {p}")
        return p or 0.5
    if code == po.REC_K:
        if 0 < p < 1:
            raise InputError(f"--p for Rec@k must not be smaller than 1, got {p}")
        return p or 2.0
    return 0.0


def _builder(code: int):
    def build(data, opts: dict) -> TrainingProblem:
        bias = float(opts.get("bias", 1.0))
        beta = float(opts.get("beta") or 1.0)
        if beta <= 0:
            raise InputError(f"--beta must be positive, got {beta}")
        k_abs = int(opts.get("k") or 0)
        frac = _k_fraction(code, float(opts.get("p") or 0.0))
        y = binary_labels(data.y, float(opts.get("rel_threshold") or 0.0))
        if opts.get("per_query"):
            if not data.has_qid:
                raise InputError("--per-query needs qid:<id> on every line", data.path)
            qptr = data.qptr
        else:
            qptr = np.array([0, len(y)], dtype=np.int64)
        pos = np.add.reduceat(y > 0, qptr[:-1]) if len(y) else np.zeros(0)
        sizes = np.diff(qptr)
        used = np.ones(len(sizes), dtype=bool)
        if po.needs_positives(code):
            used &= pos > 0
        if po.needs_negatives(code):
            used &= pos < sizes
        n = int(used.sum())
        if n == 0:
            P = int(np.sum(y > 0))
            raise InputError(
                f"loss needs positive{' and negative' if po.needs_negatives(code) else ''} examples"
                f"{' in some query' if opts.get('per_query') else ''}; found {P} positive, {len(y) - P} negative",
                data.path,
            )
        X = with_bias(data.X, bias)

        def most_violated(scores):
            dcoef, deltas, _ = po.examples_most_violated(y, scores, qptr, code, k_abs, frac, beta)
            return dcoef, float(deltas.sum())

        info = {"positives": int(np.sum(y > 0)), "negatives": int(np.sum(y <= 0))}
        if code in (po.PREC_K, po.REC_K) and not opts.get("per_query"):
            info["k"] = k_abs or max(1, int(info["positives"] * frac))
        return TrainingProblem(X, n, most_violated, bias=bias, skipped=len(sizes) - n, info=info)

    return build


LOSSES = [
    Loss("zeroone", ("0",), "perf", "zero/one loss of the whole labeling (svm_perf -l 0)", _builder(po.ZEROONE), 0.1),
    Loss("f1", ("1", "fbeta"), "perf", "100 - F-beta in percent (beta from --beta, default 1; svm_perf -l 1)",
         _builder(po.FBETA), 0.1),
    Loss("errorrate", ("2", "error"), "perf", "error rate in percent (svm_perf -l 2)", _builder(po.ERRORRATE), 0.1),
    Loss("prbep", ("3",), "perf", "100 - precision/recall break-even point in percent (svm_perf -l 3)",
         _builder(po.PRBEP), 0.1),
    Loss("prec@k", ("4", "prec"), "perf", "100 - precision at k in percent, k = --p * #pos or prec@K (svm_perf -l 4)",
         _builder(po.PREC_K), 0.1),
    Loss("rec@k", ("5", "rec"), "perf", "100 - recall at k in percent, k = --p * #pos or rec@K (svm_perf -l 5)",
         _builder(po.REC_K), 0.1),
    Loss("rocarea", ("10", "roc"), "perf", "100 - ROC area in percent: swapped pos/neg pairs (svm_perf -l 10)",
         _builder(po.ROCAREA), 0.1),
    Loss("avgprec", ("11",), "perf", "100 - average precision in percent (svm_perf -l 11, exact oracle)",
         _builder(po.AVGPREC), 0.1),
]
