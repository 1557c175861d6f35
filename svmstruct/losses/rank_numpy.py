"""numpy twins of svmstruct.losses.rank_oracles for small training sets (at most svmstruct.small.DOCUMENTS): the same
dcoef and Delta to the bit (tests/test_small_inputs.py), without loading numba.

Pair (i, j) of a query with label rank r_i > r_j is swapped iff s_i - 1 < s_j (the oracle's one rounding of
t = s - 1); above_i counts the swapped pairs below i, below_j those above j. With few label levels (LEVELS)
by binary search, O(L n log n) per call: the documents sorted by (level, query, score), every document
counts in each level below (above) its own, in its query, those whose score beats its t (whose t its
score beats); what depends only on the labels is prepared once (PairsOracle). With more levels, queries
padded to the longest are compared all pairs at once, O(sum of squared query lengths).
"""
from __future__ import annotations

import numpy as np

LEVELS = 16  # label levels per query counted level by level (more: all pairs compared)
PADDED = 1 << 22  # pair comparisons per batch of queries padded to one length


def query_label_ranks(y: np.ndarray, qptr: np.ndarray):
    """rank_oracles.query_label_ranks: (dense label ranks 1..L within each query, each query's L, its
    number of pairs with different labels)."""
    sizes = np.diff(qptr)
    query = np.repeat(np.arange(len(sizes)), sizes)
    order = np.lexsort((y, query))  # by query (already grouped), then label
    ys = y[order]
    new = np.ones(len(y), dtype=bool)
    new[1:] = (ys[1:] != ys[:-1]) | (query[order][1:] != query[order][:-1])
    level = np.cumsum(new)
    first = level[np.minimum(qptr[:-1], len(y) - 1)] if len(y) else np.zeros(len(sizes), dtype=np.int64)
    ranks = np.empty(len(y), dtype=np.int64)
    ranks[order] = level - np.repeat(first, sizes) + 1
    levels = np.zeros(len(sizes), dtype=np.int64)
    np.maximum.at(levels, query, ranks)
    same = np.zeros(len(sizes), dtype=np.int64)
    counts = np.bincount(level, minlength=int(level[-1]) + 1 if len(level) else 1)  # documents per (query, label)
    np.add.at(same, query[order], counts[level])  # each document adds its group's size: sum of squared sizes
    pairs = (sizes * sizes - same) // 2
    return ranks, levels, pairs


class PairsOracle:
    """rank_oracles.pairs_most_violated(s, qptr, ranks, levels, pairs, per_query_average) as a callable of s,
    with what depends only on the labels (query_label_ranks) prepared once."""

    def __init__(self, qptr, ranks, levels, pairs, per_query_average: bool):
        self.qptr, self.ranks = qptr, ranks
        sizes = np.diff(qptr)
        self.query = query = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
        with np.errstate(divide="ignore"):
            scale = 1.0 / pairs.astype(np.float64) if per_query_average else np.ones(len(sizes))
        self.scale = np.where(pairs > 0, scale, 0.0)
        self.scale_of_document = self.scale[query]
        self.by_level = int(levels.max(initial=0)) <= LEVELS
        if not self.by_level:
            return
        n, span = len(ranks), len(ranks) + 1  # keys: (level, query) * span + a score's position 0..n
        group = (ranks - 1) * len(sizes) + query
        self.group_base = group * span
        first_of_group = np.concatenate([[0], np.cumsum(np.bincount(group, minlength=int(levels.max(initial=0))
                                                                    * len(sizes)))])
        # above: document i against each level l < r_i of its query; below: j against each l > r_j
        self.doc_a, level = _spans(ranks - 1, np.ones(n, dtype=np.int64))
        group_a = (level - 1) * len(sizes) + query[self.doc_a]
        self.base_a, self.end_a = group_a * span, first_of_group[group_a + 1]
        self.doc_b, level = _spans(levels[query] - ranks, ranks + 1)
        group_b = (level - 1) * len(sizes) + query[self.doc_b]
        self.base_b, self.start_b = group_b * span, first_of_group[group_b]

    def __call__(self, s: np.ndarray):
        """(dcoef, summed Delta) with the kernel's scaling and order of additions."""
        above, below = self._counts_by_level(s) if self.by_level else self._counts_padded(s)
        n = len(s)
        # 0 where a query has no pair; + 0.0 makes 0 x (a negative count) the kernel's 0.0, not -0.0
        dcoef = self.scale_of_document * (above - below).astype(np.float64) + 0.0
        swapped = np.bincount(self.query, weights=above, minlength=len(self.scale))  # whole numbers: exact
        deltas = self.scale * swapped
        return dcoef, float(np.cumsum(deltas)[-1]) + 0.0 if n and len(deltas) else 0.0  # left to right

    def _counts_by_level(self, s):
        """(above, below): a score and a t as their positions among the sorted scores (s_j > t_i iff
        #{s < s_j} >= #{s <= t_i}), so that one sorted array of keys serves every level and query."""
        n = len(s)
        order = np.argsort(s)
        ordered = s[order]
        at_s, at_t = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        first = np.ones(n, dtype=bool)  # #{s < s_j}: the start of s_j's run of ties
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        at_s[order] = np.maximum.accumulate(np.where(first, np.arange(n), 0))
        at_t[order] = np.searchsorted(ordered, ordered - 1.0, "right")  # #{s <= t_i}; sorted needles: fast
        keys_s, keys_t = np.sort(self.group_base + at_s), np.sort(self.group_base + at_t)
        found = self.end_a - np.searchsorted(keys_s, self.base_a + at_t[self.doc_a], "left")
        above = np.bincount(self.doc_a, weights=found, minlength=n).astype(np.int64)
        found = np.searchsorted(keys_t, self.base_b + at_s[self.doc_b], "right") - self.start_b
        below = np.bincount(self.doc_b, weights=found, minlength=n).astype(np.int64)
        return above, below

    def _counts_padded(self, s):
        above = np.zeros(len(s), dtype=np.int64)
        below = np.zeros(len(s), dtype=np.int64)
        sizes = np.diff(self.qptr)
        longest = int(sizes.max(initial=0))
        step = max(1, PADDED // max(longest * longest, 1))
        for lo_q in range(0, len(sizes), step):  # batches of queries, each padded to the longest
            hi_q = min(lo_q + step, len(sizes))
            _count_swapped(s, self.ranks, self.qptr[lo_q:hi_q + 1], longest, above, below)
        return above, below


def _spans(counts: np.ndarray, first: np.ndarray):
    """(document, level) for every document d and its counts[d] levels first[d], first[d] + 1, ..."""
    doc = np.repeat(np.arange(len(counts)), counts)
    return doc, first[doc] + np.arange(len(doc)) - np.repeat(np.cumsum(counts) - counts, counts)


def _count_swapped(s, ranks, qptr, longest: int, above, below) -> None:
    """above and below of the queries qptr[:-1], compared as rows padded to `longest` documents."""
    sizes = np.diff(qptr)
    position = qptr[:-1, None] + np.arange(longest)
    valid = np.arange(longest) < sizes[:, None]
    at = np.where(valid, position, 0)
    S = s[at]
    rank_high = np.where(valid, ranks[at], 0)  # a padding slot is never above another document
    rank_low = np.where(valid, ranks[at], np.iinfo(np.int64).max)  # nor below one
    swapped = (rank_high[:, :, None] > rank_low[:, None, :]) & (S[:, :, None] - 1.0 < S[:, None, :])
    above[at[valid]] = swapped.sum(axis=2)[valid]
    below[at[valid]] = swapped.sum(axis=1)[valid]
