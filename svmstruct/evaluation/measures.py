"""Evaluation measures, per query and over the whole file (formulas in docs/commands.md, "Measures").

Two families:
- query measures, computed per query on the ranking by score and averaged over queries. Under
  trec_eval's names (`map`, `P_k`, `recall_k`, `recip_rank`, `ndcg`, `ndcg_cut_k`) they behave exactly
  like trec_eval: ties in score are ordered by docid descending (trec_eval's re-sort), relevant means
  label > rel_threshold, the ideal ranking of `ndcg` uses every judged document, gain = label and the
  discount 1/log2(rank + 1); a query without relevant documents scores 0. Under the ranking papers'
  names (`ndcg@k`, `dcg@k`, `mrr`, `wta`, `p@k`, `err@k`) the gain is 2^label - 1.
- file measures over all rows at once (svm_perf's view): predicted positive = score > 0, actual
  positive = label > rel_threshold: `accuracy`, `error`, `precision`, `recall`, `f1`, `fbeta`,
  `prbep`, `rocarea`, `avgprec`.
measure_table gives a dataset's table of measures, per query and overall (trec_eval's mean), as eval prints it.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from svmstruct.dataset.documents import check_unique_docids
from svmstruct.dataset.ranking import trec_ranking
from svmstruct.errors import InputError
from svmstruct.evaluation import batch_measures as batch
from svmstruct.evaluation import listwise
from svmstruct.options import LARGEST_INTEGER

# ---- query measures: f(labels in ranked order, all labels of the query, rel_threshold) -> value


def average_precision(ranked, labels, t):
    rel = ranked > t
    total = int(np.sum(labels > t))
    if total == 0:
        return 0.0
    hits = np.cumsum(rel)
    return batch.sequential_sum(hits[rel] / (np.flatnonzero(rel) + 1)) / total


def recall_at(k):
    def r(ranked, labels, t):
        total = int(np.sum(labels > t))
        return float(np.sum(ranked[:k] > t)) / total if total else 0.0

    return r


def reciprocal_rank(ranked, labels, t):
    hits = np.flatnonzero(ranked > t)
    return 1.0 / (hits[0] + 1) if len(hits) else 0.0


def pair_accuracy(ranked, labels, t):
    """Fraction of the query's pairs of different label that the ranking orders correctly (what svm_rank's
    pairs losses count); 0 if the query has no such pair. O(n log n) (evaluation.pair_counts), or for a short query
    every pair at once (compute.paths)."""
    from svmstruct.compute import paths

    if paths.compiled(len(ranked) ** 2, TWIN_PAIRS, "svmstruct.evaluation.pair_counts"):
        from svmstruct.evaluation.pair_counts import ordered_pairs

        correct, swapped = ordered_pairs(ranked)
    else:
        earlier_higher = ranked[:, None] > ranked[None, :]
        correct, swapped = int(np.sum(np.triu(earlier_higher, 1))), int(np.sum(np.tril(earlier_higher, -1)))
    return correct / (correct + swapped) if correct + swapped else 0.0


TWIN_PAIRS = 4_000_000  # pair_accuracy: pairs of one query below which they are compared at once


def expected_reciprocal_rank_at(k, max_grade=None):
    """ERR@k (Chapelle et al. 2009): sum_r 1/r R_r prod_{i<r}(1 - R_i), R = (2^label - 1) / 2^max_grade,
    max_grade the highest label in the query's file unless given."""

    def err(ranked, labels, t):
        g = max_grade if max_grade is not None else max(float(labels.max()), 1.0)
        R = (2.0 ** ranked[:k] - 1.0) / 2.0 ** g
        stay = np.concatenate([[1.0], np.cumprod(1.0 - R)[:-1]])
        return float(np.sum(R * stay / np.arange(1, len(R) + 1)))

    return err


# ---- file measures: f(labels, scores, rel_threshold) over every row


def _confusion(y, s, t):
    actual, predicted = y > t, s > 0
    tp = int(np.sum(actual & predicted))
    fp = int(np.sum(~actual & predicted))
    fn = int(np.sum(actual & ~predicted))
    tn = len(y) - tp - fp - fn
    return tp, fp, fn, tn


def accuracy(y, s, t):
    tp, fp, fn, tn = _confusion(y, s, t)
    return (tp + tn) / len(y)


def error(y, s, t):
    return 1.0 - accuracy(y, s, t)


def precision(y, s, t):
    tp, fp, _, _ = _confusion(y, s, t)
    return tp / (tp + fp) if tp + fp else 0.0


def recall(y, s, t):
    tp, _, fn, _ = _confusion(y, s, t)
    return tp / (tp + fn) if tp + fn else 0.0


def fbeta(beta):
    def f(y, s, t):
        p, r = precision(y, s, t), recall(y, s, t)
        b2 = beta * beta
        return (1 + b2) * p * r / (b2 * p + r) if p + r > 0 else 0.0

    return f


def prbep(y, s, t):
    """Precision (= recall) among the #pos highest scores; ties broken by input order."""
    pos = int(np.sum(y > t))
    if pos == 0:
        return 0.0
    top = np.argsort(-s, kind="stable")[:pos]
    return float(np.sum(y[top] > t)) / pos


def rocarea(y, s, t):
    """Fraction of (positive, negative) pairs ordered correctly; a tie counts 1/2 (Mann-Whitney U)."""
    actual = y > t
    P, N = int(actual.sum()), int((~actual).sum())
    if P == 0 or N == 0:
        return 0.0
    ranks = midranks(s)
    return float((ranks[actual].sum() - P * (P + 1) / 2) / (P * N))


def midranks(s):
    """1-based ranks of s ascending, tied values sharing the mean of their ranks (scipy's rankdata
    'average', without importing scipy.stats, which costs 0.7 s per process)."""
    order = np.argsort(s, kind="stable")
    ordered = np.asarray(s)[order]
    starts = np.concatenate(([0], np.flatnonzero(ordered[1:] != ordered[:-1]) + 1))
    ends = np.append(starts[1:], len(ordered))
    ranks = np.empty(len(ordered))
    ranks[order] = np.repeat((starts + 1 + ends) / 2.0, ends - starts)
    return ranks


def avgprec(y, s, t):
    """Average precision of the whole file ranked by score (ties by input order)."""
    order = np.argsort(-s, kind="stable")
    return average_precision(y[order], y, t)


@dataclass(frozen=True)
class Measure:
    name: str
    per_query: bool
    fn: Callable
    largest_label: float = float("inf")  # labels beyond this overflow the measure's arithmetic (2^label)
    batch: Callable | None = None  # per-query: fn of many queries at once (batch_measures), if written


_FILE = {"accuracy": accuracy, "error": error, "precision": precision, "recall": recall, "f1": fbeta(1.0),
         "prbep": prbep, "rocarea": rocarea, "avgprec": avgprec}
_QUERY = {"map": (average_precision, batch.average_precision), "recip_rank": (reciprocal_rank, batch.reciprocal_rank),
          "mrr": (reciprocal_rank, batch.reciprocal_rank), "pairacc": (pair_accuracy, None)}
_QUERY_AT = [  # (pattern, factory, batch factory): names with a cutoff; the listwise measures are listwise.MEASURES
    (re.compile(r"recall_(\d+)$"), recall_at, batch.recall_at),
    (re.compile(r"err@(\d+)$"), expected_reciprocal_rank_at, None),
]
_FBETA = re.compile(r"f(?:beta)?([0-9.]+)$")

DEFAULT_MEASURES = ["error", "precision", "recall", "f1", "rocarea", "map", "ndcg@10"]
ALL_MEASURES = ["accuracy", "error", "precision", "recall", "f1", "prbep", "rocarea", "avgprec", "map", "P_5",
                "P_10", "recall_10", "recip_rank", "ndcg", "ndcg_cut_10", "ndcg@10", "dcg@10", "mrr", "wta", "mwta",
                "p@10", "err@10", "pairacc", "eru"]


LOWER_IS_BETTER = {"error"}  # measures whose best value is the smallest (C selection, did_not_learn)
_TREC_DOTTED = re.compile(r"(P|recall|ndcg_cut)\.(\d+)$")  # trec_eval's -m spelling: P.10 is P_10


def canonical(name: str) -> str:
    """The name a measure is printed by: trec_eval's `-m P.10` is `P_10`, as trec_eval prints it."""
    return _TREC_DOTTED.sub(r"\1_\2", name)


def lookup(name: str) -> Measure:
    """The measure called `name` (or its dotted trec_eval spelling, see canonical); KeyError says why not and
    lists the known names."""
    name = canonical(name)
    if name in _FILE:
        return Measure(name, False, _FILE[name])
    if name in _QUERY:
        fn, batch_fn = _QUERY[name]
        return Measure(name, True, fn, batch=batch_fn)
    found = listwise.lookup(name)
    if found:
        return _listwise(name, *found)
    for pattern, factory, batch_factory in _QUERY_AT:
        m = pattern.match(name)
        if m and int(m.group(1)) > LARGEST_INTEGER:
            raise KeyError(f"the cutoff of '{name}' is larger than {LARGEST_INTEGER}")
        if m and int(m.group(1)) > 0:
            k = int(m.group(1))
            exponential = factory is expected_reciprocal_rank_at
            return Measure(name, True, factory(k), listwise.LARGEST_GAIN_LABEL if exponential else float("inf"),
                           batch_factory(k) if batch_factory else None)
    m = _FBETA.match(name)
    if m:
        try:
            return Measure(name, False, fbeta(float(m.group(1))))
        except ValueError:
            pass
    raise KeyError(f"unknown measure '{name}'; known: {', '.join(ALL_MEASURES)} (any cutoff k in P_k, "
                   "recall_k, ndcg_cut_k, ndcg@k, dcg@k, p@k, err@k; fbetaB for F-beta; eru:ALPHA:NEUTRAL)")


def _listwise(name: str, measure: listwise.ListwiseMeasure, settings: listwise.Settings) -> Measure:
    """eval's Measure of a listwise measure (evaluation/listwise.py), the threshold given when it is computed."""

    def one(ranked, labels, t):
        return measure.value(ranked, labels, dataclasses.replace(settings, threshold=t))

    def many(ranked, labels, qptr, t):
        return measure.batch(ranked, labels, qptr, dataclasses.replace(settings, threshold=t))

    return Measure(name, True, one, measure.largest_label, many)


BATCH_ROWS = 1 << 16  # rows of queries a batch measure takes at once (its temporary arrays stay small)


def per_query(measure: Measure, labels, scores, qptr, docids, rel_threshold=0.0, ranking=None) -> np.ndarray:
    """The measure of every query (rows qptr[q]:qptr[q+1]) ranked by score, trec_eval's tie order
    (ranking: trec_ranking's, when several measures share it); by the measure's batch function, about
    BATCH_ROWS rows of whole queries at a time, where it has one."""
    if ranking is None:
        ranking = trec_ranking(scores, qptr, docids)
    values = np.empty(len(qptr) - 1)
    if measure.batch is None:
        for q in range(len(qptr) - 1):
            lo, hi = qptr[q], qptr[q + 1]
            values[q] = measure.fn(labels[ranking[lo:hi]], labels[lo:hi], rel_threshold)
        return values
    q = 0
    while q < len(qptr) - 1:
        end = max(q + 1, int(np.searchsorted(qptr, qptr[q] + BATCH_ROWS, side="right")) - 1)
        lo, hi = qptr[q], qptr[end]
        values[q:end] = measure.batch(labels[ranking[lo:hi]], labels[lo:hi], qptr[q:end + 1] - lo, rel_threshold)
        q = end
    return values


def over_file(measure: Measure, labels, scores, rel_threshold=0.0) -> float:
    return float(measure.fn(labels, scores, rel_threshold))


def measure_table(dataset, scores: np.ndarray, names: list, rel_threshold: float = 0.0) -> dict:
    """{measure: {"all": mean or file value, qid: per-query value, ...}} (qids as strings, file order)."""
    table = {}
    qids = [str(dataset.qid[lo]) for lo in dataset.qptr[:-1]]
    checked = False
    ranking = None  # the rows in trec_eval's order, for every per-query measure
    for name in names:
        try:
            m = lookup(name)
        except KeyError as e:
            raise InputError(e.args[0]) from None
        beyond = np.flatnonzero(dataset.y > m.largest_label)
        if len(beyond):
            raise InputError(f"label {dataset.y[beyond[0]]:g}: {name}'s gain 2^label - 1 overflows double precision "
                             f"(labels up to {m.largest_label:g})", dataset.path, int(dataset.line[beyond[0]]))
        if m.per_query:
            if not checked:  # ties are broken by docid, as trec_eval does: a docid must be unique in its query
                check_unique_docids(dataset)
                checked = True
            if ranking is None:
                ranking = trec_ranking(scores, dataset.qptr, dataset.docids)
            values = per_query(m, dataset.y, scores, dataset.qptr, dataset.docids, rel_threshold, ranking)
            if not np.all(np.isfinite(values)):
                q = int(np.flatnonzero(~np.isfinite(values))[0])
                _not_finite(name, dataset, int(dataset.qptr[q]), int(dataset.qptr[q + 1]))
            row = dict(zip(qids, values.tolist()))
            row["all"] = trec_eval_mean(values, qids)
        else:
            row = {"all": over_file(m, dataset.y, scores, rel_threshold)}
            if not np.isfinite(row["all"]):
                _not_finite(name, dataset, 0, dataset.n_docs)
        table[name] = row
    return table


def trec_eval_mean(values: np.ndarray, qids: list) -> float:
    """The mean as trec_eval computes it, to the last bit: the per-query values added one after the other in
    its query order (qids sorted as byte strings, strcmp), then divided by their number. (A pairwise or exact
    sum can print differently where the mean sits on a rounding boundary: P_10 0.99465 shows 0.9947, trec_eval
    0.9946.)"""
    if not len(values):
        return float("nan")
    order = sorted(range(len(qids)), key=lambda i: qids[i].encode())
    return float(np.cumsum(np.asarray(values, dtype=np.float64)[order])[-1] / len(values))


def _not_finite(name: str, dataset, lo: int, hi: int) -> None:
    """A measure that is not finite on rows lo:hi: their labels are beyond its arithmetic (InputError at the
    line of the largest label)."""
    largest = lo + int(np.argmax(np.abs(dataset.y[lo:hi])))
    raise InputError(f"{name} is not finite here: label {dataset.y[largest]:g} is beyond what it can compute (a gain "
                     "2^label - 1 overflows double precision beyond label 1023)", dataset.path,
                     int(dataset.line[largest]))
