"""The per-query measures of many queries at once: numpy twins of svmstruct.evaluation.measures' per-query functions,
and the sums the listwise measures' batches are made of (evaluation/listwise.py).

Each takes (ranked, labels, qptr, t): the labels of every query's rows in ranked order and in file order, one
query after another (query q is rows qptr[q]:qptr[q + 1], qptr[0] = 0, no query empty), and the relevance
threshold; it returns every query's value, equal to the bit to the per-query function (tests/test_measures.py):
the same values are added in the same order (0.0 + the first + the second ..., as trec_eval adds).
"""
from __future__ import annotations

import numpy as np

_NONE = np.iinfo(np.int64).max  # "no such position"
FEW = 32  # runs still being added when fewer than this are left are finished one at a time (np.cumsum)


GAIN_SHIFT_ABOVE = 960  # a query whose largest label is above this has its gains scaled (exp_gains)


def gain_shift(largest_label) -> np.ndarray:
    """The power of two by which exp_gains scales a query's gains: 2^-(its largest label - GAIN_SHIFT_ABOVE), or
    1 up to that label (so the sums of up to 2^63 gains stay finite; no gain underflows)."""
    return 2.0 ** -np.maximum(np.asarray(largest_label, dtype=float) - GAIN_SHIFT_ABOVE, 0.0)


def exp_gains(labels: np.ndarray, shift) -> np.ndarray:
    """The gains 2^label - 1, times SHIFT (gain_shift of the query): a power of two, so every sum and ratio of them
    is the unscaled one's exactly — NDCG does not change, and labels up to 1023 sum without overflow."""
    gains = 2.0 ** labels - 1.0
    return gains if np.all(shift == 1.0) else gains * shift


def sequential_sum(values) -> float:
    """0.0 + values[0] + values[1] + ..., in that order, as trec_eval adds a query's terms (numpy's pairwise sum
    can differ in the last bit): one query's sum, as sums adds many."""
    return float(np.cumsum(np.concatenate(([0.0], values)))[-1])


def positions(qptr: np.ndarray) -> np.ndarray:
    """Every row's 0-based rank within its query."""
    sizes = np.diff(qptr)
    return np.arange(qptr[-1]) - np.repeat(qptr[:-1], sizes)


def _count(flags: np.ndarray, qptr: np.ndarray) -> np.ndarray:
    return np.add.reduceat(flags, qptr[:-1], dtype=np.int64)


def sums(values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The sums of consecutive runs of `values` of the given sizes, each 0.0 + its first value + its second ...
    (sequential_sum): term j of every run at once, longest runs first, while many runs are that long;
    the few longer ones finish one by one."""
    starts = np.cumsum(sizes) - sizes
    order = np.argsort(-sizes, kind="stable")
    sizes_down, starts_down = sizes[order], starts[order]
    total = np.zeros(len(sizes))
    j = 0
    while True:
        alive = int(np.searchsorted(-sizes_down, -j, side="left"))  # runs longer than j: a prefix
        if alive < FEW:
            break
        total[:alive] += values[starts_down[:alive] + j]
        j += 1
    for r in range(alive):
        rest = values[starts_down[r] + j:starts_down[r] + sizes_down[r]]
        total[r] = np.cumsum(np.concatenate(([total[r]], rest)))[-1]
    out = np.empty(len(sizes))
    out[order] = total
    return out


def _top(qptr: np.ndarray, k) -> tuple[np.ndarray, np.ndarray]:
    """(mask of the rows ranked in their query's first k, how many rows each query has there)."""
    sizes = np.diff(qptr)
    if k is None:
        return np.ones(int(qptr[-1]), dtype=bool), sizes
    return positions(qptr) < k, np.minimum(sizes, k)


def sorted_down(labels: np.ndarray, qptr: np.ndarray) -> np.ndarray:
    """Every query's labels, largest first."""
    query = np.repeat(np.arange(len(qptr) - 1), np.diff(qptr))
    return labels[np.lexsort((-labels, query))]


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator where the denominator is positive, else 0."""
    out = np.zeros(len(numerator))
    some = denominator > 0
    out[some] = numerator[some] / denominator[some]
    return out


def average_precision(ranked, labels, qptr, t):
    rel = ranked > t
    hits = np.cumsum(rel, dtype=np.int64)
    hits -= np.repeat(hits[qptr[:-1]] - rel[qptr[:-1]], np.diff(qptr))  # relevant rows so far, in the query
    precisions = hits[rel] / (positions(qptr)[rel] + 1)
    return ratio(sums(precisions, _count(rel, qptr)), _count(labels > t, qptr).astype(float))


def recall_at(k):
    def r(ranked, labels, qptr, t):
        top, _ = _top(qptr, k)
        return ratio(_count((ranked > t) & top, qptr).astype(float), _count(labels > t, qptr).astype(float))

    return r


def reciprocal_rank(ranked, labels, qptr, t):
    first = np.minimum.reduceat(np.where(ranked > t, positions(qptr), _NONE), qptr[:-1])
    found = first != _NONE
    out = np.zeros(len(first))
    out[found] = 1.0 / (first[found] + 1)
    return out
