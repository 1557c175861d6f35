"""svm_perf's multivariate losses (Joachims 2005): the whole file is one example (n = 1), or with
per_query every qid is an example and the loss is averaged over them (the svm_struct 1/n convention).

Conventions as svm_perf (docs/losses.md, "Conventions"): label +1 iff target > rel_threshold (default 0); Delta
in percent (zero/one: 0 or 1); Psi = sum_i y'_i x_i with y' = +-50/N for the contingency-table losses,
the pairwise form for ROCArea (scaled 50/(P N)) and AvgPrec (unscaled); a constant feature of value
--b (default 1) appended to every document, its weight regularised; epsilon 0.1.
"""
from __future__ import annotations

import numpy as np

from svmstruct.errors import InputError
from svmstruct.losses import perf_codes as po
from svmstruct.options import LARGEST_SCALE, above_at_most, between
from svmstruct.spec import REL_THRESHOLD, K, Loss, Option
from svmstruct.train.problem import Reference, TrainingProblem

BIAS = Option("bias", ("--b",), "float", "value of the constant feature appended to every document (svm_perf --b; "
              "0: no bias); its weight is regularised and becomes the threshold", default=1.0,
              check=between(-LARGEST_SCALE, LARGEST_SCALE), metavar="B")
P = Option("p", ("--p",), "float", "k = P * #pos (svm_perf --p; 0: 0.5 for prec@k, 2 for rec@k)", default=0.0,
           check=between(0.0, LARGEST_SCALE), metavar="P")
BETA = Option("beta", ("--beta",), "float", "the beta of F-beta", default=1.0,
              check=above_at_most(0.0, LARGEST_SCALE), metavar="B", examples=(0.5, 2.0))
PER_QUERY = Option("per_query", ("--per-query",), "flag",
                   "every qid is an example and the loss is averaged over queries", default=False, examples=(True,))
ABSOLUTE_K = K.but(help="an absolute k instead of --p (also -l prec@10)")
COMMON = (BIAS, PER_QUERY, REL_THRESHOLD)


def binary_labels(y: np.ndarray, threshold: float = 0.0) -> np.ndarray:
    """svm_perf's labels: +1 for a target > threshold, -1 otherwise."""
    return np.where(y > threshold, 1.0, -1.0)


def with_bias(X, bias: float):
    """X (CSR or dense) with a constant column of value `bias` appended (svm_perf --b); X itself when bias is 0."""
    if bias == 0:
        return X
    if isinstance(X, np.ndarray):
        return np.hstack([X, np.full((X.shape[0], 1), bias, dtype=X.dtype)])
    import scipy.sparse as sp

    column = sp.csr_matrix(np.full((X.shape[0], 1), float(bias)))
    return sp.hstack([X, column], format="csr")


def _k_fraction(code: int, p: float) -> float:
    """svm_perf's --p: k = p * #pos; 0 means 0.5 for Prec@k and 2 for Rec@k."""
    if code == po.PREC_K:
        if p > 1:
            raise InputError(f"--p for prec@k must not be larger than 1, got {p:g}")
        return p or 0.5
    if code == po.REC_K:
        if 0 < p < 1:
            raise InputError(f"--p for rec@k must not be smaller than 1, got {p:g}")
        return p or 2.0
    return 0.0


def _builder(code: int):
    def build(data, opts: dict) -> TrainingProblem:
        bias = float(opts.get("bias", 1.0))
        beta = float(opts.get("beta") or 1.0)
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
        positive = int(np.sum(y > 0))
        if len(y) and positive in (0, len(y)):  # a model that calls everything one class, "learned"
            low, high = float(np.min(data.y)), float(np.max(data.y))
            classes = np.unique(data.y)
            several = len(classes) > 2 and np.all(classes == np.round(classes))
            raise InputError(f"every document is {'positive' if positive else 'negative'} (labels {low:g} to "
                             f"{high:g}; positive: above --rel-threshold {float(opts.get('rel_threshold') or 0.0):g})"
                             ": a binary loss needs both classes; say which labels are positive with "
                             "--rel-threshold T" + (f", or train one model of the {len(classes)} classes with "
                                                    "--problem multiclass (svm_multiclass's -l is --loss-function "
                                                    "there)" if several else ""), data.path)
        n = int(used.sum())
        if n == 0:
            P = int(np.sum(y > 0))
            raise InputError(
                f"loss needs positive{' and negative' if po.needs_negatives(code) else ''} examples"
                f"{' in some query' if opts.get('per_query') else ''}; found {P} positive, {len(y) - P} negative",
                data.path,
            )
        X = with_bias(data.X, bias)

        from svmstruct.losses import perf_oracles

        def most_violated(scores):
            dcoef, deltas, _ = perf_oracles.examples_most_violated(y, scores, qptr, code, k_abs, frac, beta)
            return dcoef, float(deltas.sum())

        info = {"positives": int(np.sum(y > 0)), "negatives": int(np.sum(y <= 0))}
        if code in (po.PREC_K, po.REC_K) and not opts.get("per_query"):
            info["k"] = k_abs or max(1, int(info["positives"] * frac))
        examples = [(int(qptr[e]), int(qptr[e + 1])) for e in np.flatnonzero(used)]
        return TrainingProblem(X, n, most_violated, bias=bias, skipped=len(sizes) - n, info=info,
                               reference=_reference(code, y, examples, k_abs, frac, beta))

    return build


# ---- the brute-force side (tests): Psi and Delta of a given output, from Joachims 2005 and svm_perf

def _reference(code: int, y: np.ndarray, examples: list, k_abs: int, frac: float, beta: float) -> Reference:
    """Outputs: a labeling of the example's documents (+1/-1 each); for ROCArea a labeling of its
    (positive, negative) pairs (-1: swapped); for AvgPrec a ranking (each document's position)."""
    n_rows = len(y)

    def parts(e):
        lo, hi = examples[e]
        labels = y[lo:hi]
        return lo, hi, np.flatnonzero(labels > 0), np.flatnonzero(labels <= 0)

    def size(e):
        lo, hi, pos, neg = parts(e)
        return len(pos) * len(neg) if code == po.ROCAREA else hi - lo

    def constraint(e, out):
        lo, hi, pos, neg = parts(e)
        n, P = hi - lo, len(pos)
        dcoef = np.zeros(n_rows)
        if code == po.ROCAREA:  # Psi = 50/(P N) sum_ij ybar_ij (x_i - x_j), Delta = 100 swapped / (P N)
            unit = 100.0 / (P * len(neg))
            for (i, j), label in zip(((i, j) for i in pos for j in neg), out):
                if label < 0:
                    dcoef[lo + i] += unit
                    dcoef[lo + j] -= unit
            return dcoef, unit * sum(1 for label in out if label < 0)
        if code == po.AVGPREC:  # Psi = sum_ij ybar_ij (x_i - x_j) unscaled, Delta = 100 (1 - AP)
            for i in pos:
                for j in neg:
                    if out[j] < out[i]:
                        dcoef[lo + i] += 2.0
                        dcoef[lo + j] -= 2.0
            order = np.argsort(out)
            hits = np.cumsum(y[lo:hi][order] > 0)
            ap = float(np.mean([hits[r] / (r + 1) for r in range(n) if y[lo + order[r]] > 0]))
            return dcoef, 100.0 * (1.0 - ap)
        ybar = np.asarray(out, dtype=float)  # Psi = sum_i 50/N ybar_i x_i
        truth = np.where(y[lo:hi] > 0, 1.0, -1.0)
        dcoef[lo:hi] = 50.0 / n * (truth - ybar)
        a = int(np.sum((truth > 0) & (ybar > 0)))
        b = int(np.sum((truth < 0) & (ybar > 0)))
        c = P - a
        k = k_abs if k_abs > 0 else max(1, int(P * frac))
        if code == po.ERRORRATE:
            return dcoef, 100.0 * (b + c) / n
        if (code == po.PRBEP and a + b != P) or (code == po.PREC_K and a + b < k) or (code == po.REC_K and a + b > k):
            return None
        if code == po.ZEROONE:
            delta = 1.0 if b + c else 0.0
        elif code == po.FBETA:
            b2 = beta * beta
            delta = 100.0 if a == 0 else 100.0 * (1 - (1 + b2) * a / ((1 + b2) * a + b2 * c + b))
        elif code == po.PREC_K:
            delta = 100.0 * b / (a + b)
        else:  # PRBEP, REC_K: 1 - recall
            delta = 100.0 * c / P
        return (dcoef, delta) if delta > 0 else None  # as svm_perf, only labelings with Delta > 0 compete

    kind = "ranking" if code == po.AVGPREC else "labeling"
    return Reference(kind, len(examples), size, constraint)


def _k_measure(prefix: str):
    """p@K / recall_K with an absolute k; with --p (k relative to #pos) the nearest eval measure is PRBEP."""
    return lambda opts: f"{prefix}{opts['k']}" if opts.get("k") else "prbep"


DEFAULT_C = 100.0  # learns on the Reuters tasks where C = 1 calls every document negative (scripts/defaults.py)


def _perf(name, aliases, summary, code, measure, extra=()):
    return Loss(name, aliases, "perf", summary, _builder(code), 0.1, options=(*extra, *COMMON),
                output="ranking" if code == po.AVGPREC else "labeling", measure=measure, default_C=DEFAULT_C)


LOSSES = [
    _perf("zeroone", ("0",), "zero/one loss of the whole labeling (svm_perf -l 0)", po.ZEROONE, lambda o: "accuracy"),
    _perf("f1", ("1", "fbeta"), "100 - F-beta in percent (beta from --beta, default 1; svm_perf -l 1)", po.FBETA,
          lambda o: "f1" if o["beta"] == 1 else f"fbeta{o['beta']:g}", (BETA,)),
    _perf("errorrate", ("2", "error"), "error rate in percent (svm_perf -l 2)", po.ERRORRATE, lambda o: "accuracy"),
    _perf("prbep", ("3",), "100 - precision/recall break-even point in percent (svm_perf -l 3)", po.PRBEP,
          lambda o: "prbep"),
    _perf("prec@k", ("4", "prec"), "100 - precision at k in percent, k = --p * #pos or prec@K (svm_perf -l 4)",
          po.PREC_K, _k_measure("p@"), (P.but(examples=(0.4, 1.0)), ABSOLUTE_K)),
    _perf("rec@k", ("5", "rec"), "100 - recall at k in percent, k = --p * #pos or rec@K (svm_perf -l 5)",
          po.REC_K, _k_measure("recall_"), (P.but(examples=(1.0, 2.5)), ABSOLUTE_K)),
    _perf("rocarea", ("10", "roc"), "100 - ROC area in percent: swapped pos/neg pairs (svm_perf -l 10)", po.ROCAREA,
          lambda o: "rocarea"),
    _perf("avgprec", ("11",), "100 - average precision in percent (svm_perf -l 11, exact oracle)", po.AVGPREC,
          lambda o: "avgprec"),
]
