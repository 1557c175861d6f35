"""numpy twins of svmstruct.losses.rank_oracles for small training sets (at most SMALL documents): the same
dcoef and Delta to the bit (tests/test_small_inputs.py), without loading numba.

Pair (i, j) of a query with label rank r_i > r_j is swapped iff s_i - 1 < s_j (the oracle's one rounding of
t = s - 1); above_i counts the swapped pairs below i, below_j those above j. With few label levels (LEVELS)
each level is counted by binary search: the documents of a level sorted by (query, s), every higher
document counts those with s_j > t_i in its query, O(L n log n); with more levels, queries padded to the
longest are compared all pairs at once, O(sum of squared query lengths).
"""
from __future__ import annotations

import numpy as np

SMALL = 20_000  # documents
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


def pairs_most_violated(s, qptr, ranks, levels, pairs, per_query_average: bool):
    """rank_oracles.pairs_most_violated: (dcoef, summed Delta) with the same scaling and additions."""
    sizes = np.diff(qptr)
    if int(levels.max(initial=0)) <= LEVELS:
        above, below = _count_by_level(s, ranks, sizes, int(levels.max(initial=0)))
    else:
        above = np.zeros(len(s), dtype=np.int64)
        below = np.zeros(len(s), dtype=np.int64)
        longest = int(sizes.max(initial=0))
        step = max(1, PADDED // max(longest * longest, 1))
        for lo_q in range(0, len(sizes), step):  # batches of queries, each padded to the longest
            hi_q = min(lo_q + step, len(sizes))
            _count_swapped(s, ranks, qptr[lo_q:hi_q + 1], longest, above, below)
    with np.errstate(divide="ignore"):
        scale = 1.0 / pairs.astype(np.float64) if per_query_average else np.ones(len(sizes))
    scale[pairs == 0] = 0.0
    query = np.repeat(np.arange(len(sizes)), sizes)
    dcoef = np.where(pairs[query] > 0, scale[query] * (above - below).astype(np.float64), 0.0)
    swapped = np.bincount(query, weights=above, minlength=len(sizes))  # whole numbers: exact in float64
    deltas = np.where(pairs > 0, scale * swapped, 0.0)
    return dcoef, float(np.cumsum(deltas)[-1]) + 0.0 if len(deltas) else 0.0  # left to right: sequential_sum


def _count_by_level(s, ranks, sizes, top: int):
    """(above, below) level by level: scores and t = s - 1 replaced by their ranks among all of them
    (comparisons unchanged), offset by query, so that one sorted array of a level serves every query."""
    n = len(s)
    t = s - 1.0
    _, order = np.unique(np.concatenate([s, t]), return_inverse=True)
    span = int(order.max(initial=0)) + 2
    base = np.repeat(np.arange(len(sizes), dtype=np.int64) * span, sizes)
    key_s, key_t = base + order[:n], base + order[n:]
    above = np.zeros(n, dtype=np.int64)
    below = np.zeros(n, dtype=np.int64)
    for level in range(1, top + 1):
        at = ranks == level
        higher, lower = ranks > level, ranks < level
        level_s, level_t = np.sort(key_s[at]), np.sort(key_t[at])
        # a higher document i: the level's documents j of its query with s_j > t_i
        above[higher] += (np.searchsorted(level_s, base[higher] + span - 1, "left")
                          - np.searchsorted(level_s, key_t[higher], "right"))
        # a lower document j: the level's documents i of its query with t_i < s_j
        below[lower] += (np.searchsorted(level_t, key_s[lower], "left")
                         - np.searchsorted(level_t, base[lower], "left"))
    return above, below


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
