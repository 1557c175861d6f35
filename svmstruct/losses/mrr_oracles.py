"""The reciprocal rank's oracles (DORM's MRR, dorm_oracles.query_most_violated's MRR_PLAN and MRR_FIRST_PLAN):
the ranking of most violation under the positional map by trying every position of the first relevant document,
and under the first-relevant map in closed form (docstrings below; dorm_oracles' module docstring has the maps)."""
import numpy as np

from svmstruct.compute.jit import njit


@njit(cache=True)
def _mrr_pairs(g, relevant, by_g, nonrel, rank_nonrel, first_rel, p):
    """The pairwise map's sum (g_upper - g_lower over relevant/non-relevant pairs) of mrr_oracle's ranking
    for p: nonrel[:p - 1], first_rel, then the rest in g order."""
    sums = np.zeros(2)  # running sum and count of the documents above, non-relevant [0] and relevant [1]
    counts = np.zeros(2)
    pairs = 0.0
    for t in range(-(p - 1) - 1, g.shape[0]):
        if t < -1:
            i = nonrel[t + p]
        elif t == -1:
            i = first_rel
        else:
            i = by_g[t]
            if i == first_rel or rank_nonrel[i] < p - 1:
                continue
        own = 1 if relevant[i] else 0
        pairs += sums[1 - own] - counts[1 - own] * g[i]
        sums[own] += g[i]
        counts[own] += 1
    return pairs


@njit(cache=True)
def mrr_oracle(g, relevant, c, pair_scale=0.0):
    """Positions maximising sum_i c[pos_i] g_i + 1 - 1/p, p the 1-based position of the first relevant
    document (Delta of the reciprocal rank), plus pair_scale * the pairwise map's sum (PAIRS_MAP). For a
    fixed p the best ranking puts the p - 1 non-relevant documents of highest g first (in g order), the
    relevant one of highest g at p and the rest after it in g order (exchange arguments: c decreases; a
    pair's term g_upper - g_lower is largest in g order), so trying every p is exact: O(l^2)."""
    l = g.shape[0]
    by_g = np.argsort(-g, kind="mergesort")
    n_rel = 0
    for i in range(l):
        if relevant[i]:
            n_rel += 1
    nonrel = np.empty(l - n_rel, dtype=np.int64)
    first_rel = -1
    t = 0
    for r in range(l):
        i = by_g[r]
        if relevant[i]:
            if first_rel < 0:
                first_rel = i
        else:
            nonrel[t] = i
            t += 1
    rank_nonrel = np.full(l, l, dtype=np.int64)
    for t in range(l - n_rel):
        rank_nonrel[nonrel[t]] = t
    best_value = -np.inf
    best_p = 1
    for p in range(1, l - n_rel + 2):
        v = 1.0 - 1.0 / p
        for j in range(p - 1):
            v += c[j] * g[nonrel[j]]
        v += c[p - 1] * g[first_rel]
        q = p
        for r in range(l):
            i = by_g[r]
            if i == first_rel or rank_nonrel[i] < p - 1:
                continue
            v += c[q] * g[i]
            q += 1
        if pair_scale != 0.0:
            v += pair_scale * _mrr_pairs(g, relevant, by_g, nonrel, rank_nonrel, first_rel, p)
        if v > best_value:
            best_value = v
            best_p = p
    pos = np.empty(l, dtype=np.int64)
    for j in range(best_p - 1):
        pos[nonrel[j]] = j
    pos[first_rel] = best_p - 1
    q = best_p
    for r in range(l):
        i = by_g[r]
        if i == first_rel or rank_nonrel[i] < best_p - 1:
            continue
        pos[i] = q
        q += 1
    return pos


@njit(cache=True)
def mrr_first_oracle(g, relevant):
    """(Psi coefficient of every document, rank p of the first relevant one) of the ranking maximising
    1 - 1/p + w.Psi under the first-relevant map (module docstring): the relevant document of highest g
    (the first in the order given among equal ones) gets 1/p, the p - 1 non-relevant documents of
    highest g with g > g_r - 1 get d_1, d_2, ... in g order. Requires a relevant document."""
    l = g.shape[0]
    best = -1
    for i in range(l):
        if relevant[i] and (best < 0 or g[i] > g[best]):
            best = i
    coef = np.zeros(l)
    by_g = np.argsort(-g, kind="mergesort")
    j = 0
    for r in range(l):
        i = by_g[r]
        if relevant[i]:
            continue
        if not g[i] > g[best] - 1.0:  # the terms d_j (1 + g_i - g_r) decrease: the rest are <= 0
            break
        j += 1
        coef[i] = 1.0 / j - 1.0 / (j + 1)
    coef[best] = 1.0 / (j + 1)
    return coef, j + 1
