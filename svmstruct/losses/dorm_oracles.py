"""DORM's most violated ranking (Le & Smola 2007, eq. 24): argmax over permutations pi of
sum_i c_{pi(i)} g_i - a_{pi(i)} b_i, with g the scores, c the decreasing position weights of Psi, and
a (positions), b (documents) the measure's vectors (Delta = <a(1), b> - <a(pi), b>, eq. 17).

Exact solvers, chosen per query by a plan code:
- SORT_PLAN, the measure's own map (c = a, svmstruct's default): the objective is
  sum_i a_{pi(i)} (g_i - b_i), so by the rearrangement inequality (a non-increasing) the documents sorted
  by g - b are a maximiser: O(l log l).
- the linear assignment problem C_ij = c_j g_i - a_j b_i (O(l^3)): `assignment_positions` in numba
  (losses/assignment.py), and `assignment_oracle` with scipy.optimize.linear_sum_assignment, the
  reference the tests hold it to.
- `truncated_oracle`: for measures with a_j = 0 beyond position k (NDCG@k, DCG@k, Precision@k,
  WTA, MRR@k...). Proof sketch (exchange arguments, c decreasing):
  (1) positions after k carry c_j g_i only, so the documents placed there are in decreasing g
      (rearrangement inequality);
  (2) two documents with equal b: swapping them so that the one with larger g takes the position with
      larger c changes the value by (c_j - c_j')(g_i - g_i') >= 0. Hence within each group of equal b,
      the documents in the top k are a prefix of the group in g order, placed in g order.
  So a solution is fixed by how the top-k positions interleave the L groups' g-sorted lists: a dynamic
  program over positions j = 1..k with state (n_1..n_L), the number taken from each group (only the
  C(k+L, L) reachable states are visited), plus for each of the C(k+L-1, L-1) full states the value of
  the sorted tail, O(l) each. Time O(l C(k+L-1, L-1)) per query: O(l k) for binary relevance,
  O(l k^2) for three grades, O(l k^4 / 24) for five — against O(l^3) for the assignment.
- MRR_PLAN: the reciprocal rank with a positional c (Le & Smola's map), O(l^2) (`mrr_oracle`).
- MRR_FIRST_PLAN: the reciprocal rank with its own map, the first-relevant map
      Psi(x, pi) = sum_{j < p} d_j phi_{pi(j)} + (1/p) phi_{pi(p)},   d_j = 1/j - 1/(j + 1),
  p the rank of the first relevant document (the weights sum to 1; every correct ranking, p = 1, maps to
  the features of its top document). 1 - 1/p = sum_{j<p} d_j, so the loss-augmented value of a ranking
  with first relevant r is sum_{j<p} d_j (1 + g_{pi(j)} - g_r) + g_r: the best r is the relevant
  document of highest score, the documents above it the non-relevant ones in score order, and p - 1
  the number of them with g > g_r - 1 (the terms decrease): O(l log l) (`mrr_first_oracle`).

- PAIRS_MAP (dorm.PAIRS_MAP), the pairwise map: pair_scale > 0 adds pair_scale * sum over pairs of documents
  of different b of (g_upper - g_lower) to the value. The exchange arguments above hold for that sum too (two
  documents of equal b swapped into g order raise every pair term they share with a third; below the
  cut-off, g order makes each pair term its largest, |g_i - g_j|), so truncated_oracle and mrr_oracle stay
  exact with it: the transition adds the new document's pairs with those above it (per-group prefix sums),
  each full state the pairs with the tail by one scan (_tail_pairs). Same complexity.
- TOP_PAIRS_MAP (dorm.TOP_PAIRS_MAP): only the pairs whose upper document is in the top k. The same
  exchange (a document of the top swapped with one of its group below, of lower g, raises its pairs with
  every other document); no pair below the top counts, so each full state adds the top-by-rest pairs in
  closed form from the groups' sums (_top_rest_pairs), O(L).
- The pairs' grades: for precision@k, whose b is a threshold of graded labels, the pairwise maps count the
  pairs of different label, as svm_rank does (its loss's label_pairs, evaluation/listwise.py); the programs
  then group the documents by label (b is constant inside a label, so the exchange arguments above hold
  unchanged): O(l k^2) for three grades instead of O(l k).

Every solver returns the Psi coefficient of each document (c of its position for the positional maps),
so that most_violated_all forms dcoef = target - coefficients whatever the map.
"""
import numpy as np

from svmstruct.compute import threads
from svmstruct.compute.jit import njit, prange
from svmstruct.losses.assignment import assignment_positions
from svmstruct.losses.mrr_oracles import mrr_first_oracle, mrr_oracle

# the dynamic program's table is kept below this many states; larger cases go to the assignment
MAX_STATES = 2_000_000
# query_most_violated's plans besides -1 (assignment), 0 (sort by score: no position matters) and k > 0 (the
# truncated program with cut-off k); see the module docstring
MRR_PLAN = -2
SORT_PLAN = -3
MRR_FIRST_PLAN = -4


def assignment_oracle(g, a, b, c):
    """(position of every document, 0-based) maximising sum c[pos] g - a[pos] b, by linear assignment."""
    from scipy.optimize import linear_sum_assignment

    C = np.outer(g, c) - np.outer(b, a)
    rows, cols = linear_sum_assignment(C, maximize=True)
    pos = np.empty(len(g), dtype=np.int64)
    pos[rows] = cols
    return pos


def truncated_states(b, k):
    """Size of the dynamic program's table for these b values and cut-off k (0 if not applicable)."""
    values, counts = np.unique(b, return_counts=True)
    size = 1
    for count in counts:
        size *= min(k, int(count)) + 1
        if size > MAX_STATES:
            return 0
    return size


@njit(cache=True)
def _room(array, size):
    """ARRAY, or a copy at least twice as long when it holds fewer than SIZE entries."""
    if size <= array.shape[0]:
        return array
    grown = np.empty(max(size, 2 * array.shape[0]), dtype=array.dtype)
    grown[:array.shape[0]] = array
    return grown


@njit(cache=True)
def _tail_pairs(g, by_g, group_of, rank_in_group, top, prefix, starts):
    """The pairwise map's sum over the pairs with a document below the top (top[q] documents of each group
    q, the highest in g, placed above the rest) when the rest follow in g order: sum of g_upper - g_lower
    over such pairs of different groups, by one scan keeping each group's running sum."""
    L = top.shape[0]
    run_sum = np.empty(L)
    run_count = np.empty(L)
    for q in range(L):
        run_sum[q] = prefix[starts[q] + q + top[q]]
        run_count[q] = top[q]
    total_sum = run_sum.sum()
    total_count = run_count.sum()
    pairs = 0.0
    for r in range(g.shape[0]):
        i = by_g[r]
        q = group_of[i]
        if rank_in_group[i] < top[q]:
            continue
        pairs += (total_sum - run_sum[q]) - (total_count - run_count[q]) * g[i]
        run_sum[q] += g[i]
        run_count[q] += 1
        total_sum += g[i]
        total_count += 1
    return pairs


@njit(cache=True)
def _groups(b):
    """(group of each document, size of each group): the groups of documents of equal b, by b ascending."""
    l = b.shape[0]
    order_b = np.argsort(b, kind="mergesort")
    group_of = np.empty(l, dtype=np.int64)
    L = 0
    for t in range(l):
        if t == 0 or b[order_b[t]] != b[order_b[t - 1]]:
            L += 1
        group_of[order_b[t]] = L - 1
    sizes = np.zeros(L, dtype=np.int64)
    for i in range(l):
        sizes[group_of[i]] += 1
    return group_of, sizes


@njit(cache=True)
def _top_rest_pairs(top, sizes, prefix, starts):
    """sum of g_top - g_rest over the pairs of a top document (top[q] of each group q, the highest in g) and a
    document of another group below the top: per group, its top's sum times the rest of the other groups
    minus its top's count times their sum."""
    L = top.shape[0]
    rest_count = np.empty(L)
    rest_sum = np.empty(L)
    for q in range(L):
        rest_count[q] = sizes[q] - top[q]
        rest_sum[q] = prefix[starts[q] + q + sizes[q]] - prefix[starts[q] + q + top[q]]
    count_all, sum_all = rest_count.sum(), rest_sum.sum()
    pairs = 0.0
    for q in range(L):
        pairs += prefix[starts[q] + q + top[q]] * (count_all - rest_count[q]) - top[q] * (sum_all - rest_sum[q])
    return pairs


@njit(cache=True)
def truncated_oracle(g, a, b, grade, c, k, pair_scale=0.0, tail_pairs=True):
    """Exact maximiser when a[j] = 0 for j >= k (0-based); see the module docstring. Returns positions.
    The program's groups are the documents of equal grade (b must be constant inside a grade: grade = b, or
    the labels). With pair_scale > 0 the value also counts pair_scale * the pairwise map's sum (PAIRS_MAP),
    over every pair of different grade, or with tail_pairs False over such pairs with a document in the top
    k (TOP_PAIRS_MAP)."""
    l = g.shape[0]
    k = min(k, l)
    # groups of equal grade, each sorted by g descending (ties: input order)
    group_of, sizes = _groups(grade)
    L = sizes.shape[0]
    by_g = np.argsort(-g, kind="mergesort")  # all documents by g descending
    members = np.empty(l, dtype=np.int64)  # group after group, each in g order
    starts = np.zeros(L + 1, dtype=np.int64)
    for q in range(L):
        starts[q + 1] = starts[q] + sizes[q]
    fill = starts[:L].copy()
    rank_in_group = np.empty(l, dtype=np.int64)
    for t in range(l):
        i = by_g[t]
        q = group_of[i]
        members[fill[q]] = i
        rank_in_group[i] = fill[q] - starts[q]
        fill[q] += 1
    group_b = np.empty(L)
    for q in range(L):
        group_b[q] = b[members[starts[q]]]
    prefix = np.zeros(l + L)  # group q's sums of its n highest g at prefix[starts[q] + q + n], n = 0..sizes[q]
    for q in range(L):
        for t in range(sizes[q]):
            prefix[starts[q] + q + t + 1] = prefix[starts[q] + q + t] + g[members[starts[q] + t]]
    # mixed-radix states: n_q in 0..cap_q documents of group q placed; only the reachable ones are stored, layer
    # by layer (layer j: j documents placed), each layer's ids sorted for lookups and visited in the order the
    # states were first reached (the order a full table's scan would update them in: the same ties win)
    cap = np.minimum(sizes, k)
    stride = np.ones(L, dtype=np.int64)
    for q in range(1, L):
        if stride[q - 1] > (1 << 62) // (cap[q - 1] + 1):
            raise ValueError("truncated_oracle: too many groups and documents for a state id")
        stride[q] = stride[q - 1] * (cap[q - 1] + 1)
    ids = np.zeros(1, dtype=np.int64)  # all layers: sorted state ids, their value and last group, visiting order
    val = np.zeros(1)
    chosen = np.full(1, -1, dtype=np.int64)
    visit = np.zeros(1, dtype=np.int64)
    first = np.zeros(k + 2, dtype=np.int64)  # layer j is [first[j], first[j + 1])
    first[1] = 1
    for j in range(k):
        lo, hi = first[j], first[j + 1]
        reached = np.empty((hi - lo) * L, dtype=np.int64)
        count = 0
        for v in range(lo, hi):
            s = ids[lo + visit[v]]
            for q in range(L):
                if (s // stride[q]) % (cap[q] + 1) < cap[q]:
                    reached[count] = s + stride[q]
                    count += 1
        reached = reached[:count]
        by_id = np.argsort(reached, kind="mergesort")
        unique = 0
        for t in range(count):
            if t == 0 or reached[by_id[t]] != reached[by_id[t - 1]]:
                unique += 1
        layer_ids = np.empty(unique, dtype=np.int64)
        first_reached = np.empty(unique, dtype=np.int64)
        u = -1
        for t in range(count):
            if t == 0 or reached[by_id[t]] != reached[by_id[t - 1]]:
                u += 1
                layer_ids[u] = reached[by_id[t]]
                first_reached[u] = by_id[t]  # the stable sort puts the first reach first
        layer_visit = np.argsort(first_reached, kind="mergesort")
        layer_val = np.full(unique, -np.inf)
        layer_chosen = np.full(unique, -1, dtype=np.int64)
        for v in range(lo, hi):
            s = ids[lo + visit[v]]
            above_sum = 0.0  # the state's placed documents: their g sum and count (the pairwise maps)
            if pair_scale != 0.0:
                for h in range(L):
                    above_sum += prefix[starts[h] + h + (s // stride[h]) % (cap[h] + 1)]
            for q in range(L):
                taken = (s // stride[q]) % (cap[q] + 1)
                if taken < cap[q]:
                    i = members[starts[q] + taken]
                    x = val[lo + visit[v]] + c[j] * g[i] - a[j] * group_b[q]
                    if pair_scale != 0.0:  # the pairs of i with the documents above it, of other groups
                        others = j - taken  # documents placed (j) minus those of i's group
                        x += pair_scale * ((above_sum - prefix[starts[q] + q + taken]) - others * g[i])
                    at = np.searchsorted(layer_ids, s + stride[q])
                    if x > layer_val[at]:
                        layer_val[at] = x
                        layer_chosen[at] = q
        ids, val, chosen, visit = (_room(ids, hi + unique), _room(val, hi + unique), _room(chosen, hi + unique),
                                   _room(visit, hi + unique))
        ids[hi:hi + unique] = layer_ids
        val[hi:hi + unique] = layer_val
        chosen[hi:hi + unique] = layer_chosen
        visit[hi:hi + unique] = layer_visit
        first[j + 2] = hi + unique
    counts = np.zeros(L, dtype=np.int64)
    best_total = -np.inf
    best_state = np.int64(-1)
    lo, hi = first[k], first[k + 1]
    for v in range(lo, hi):  # every way to fill the top k: add the sorted tail
        s = ids[lo + visit[v]]
        tail = 0.0
        p = k
        for r in range(l):
            i = by_g[r]
            if rank_in_group[i] >= (s // stride[group_of[i]]) % (cap[group_of[i]] + 1):
                tail += c[p] * g[i]
                p += 1
        if pair_scale != 0.0:
            for q in range(L):
                counts[q] = (s // stride[q]) % (cap[q] + 1)
            if tail_pairs:
                tail += pair_scale * _tail_pairs(g, by_g, group_of, rank_in_group, counts, prefix, starts)
            else:
                tail += pair_scale * _top_rest_pairs(counts, sizes, prefix, starts)
        if val[lo + visit[v]] + tail > best_total:
            best_total = val[lo + visit[v]] + tail
            best_state = s
    # backtrack the top positions, then fill the tail in g order
    pos = np.full(l, -1, dtype=np.int64)
    s = best_state
    rest = s
    for q in range(L):
        counts[q] = rest % (cap[q] + 1)
        rest //= cap[q] + 1
    final = counts.copy()
    for j in range(k - 1, -1, -1):
        layer = ids[first[j + 1]:first[j + 2]]
        q = chosen[first[j + 1] + np.searchsorted(layer, s)]
        counts[q] -= 1
        pos[members[starts[q] + counts[q]]] = j
        s -= stride[q]
    p = k
    for r in range(l):
        i = by_g[r]
        if rank_in_group[i] >= final[group_of[i]]:
            pos[i] = p
            p += 1
    return pos


@njit(cache=True)
def ranking_value(pos, g, a, b, c):
    """sum_i c[pos_i] g_i - a[pos_i] b_i."""
    v = 0.0
    for i in range(g.shape[0]):
        v += c[pos[i]] * g[i] - a[pos[i]] * b[i]
    return v


@njit(cache=True)
def tie_average(values, key1, key2):
    """values averaged over the documents with equal (key1, key2): documents that tie in both are
    interchangeable, so the average is the mean of equally good choices and independent of input order."""
    l = values.shape[0]
    order = np.argsort(key2, kind="mergesort")
    order = order[np.argsort(key1[order], kind="mergesort")]
    out = np.empty(l)
    start = 0
    while start < l:
        end = start + 1
        while end < l and key1[order[end]] == key1[order[start]] and key2[order[end]] == key2[order[start]]:
            end += 1
        total = 0.0
        for t in range(start, end):
            total += values[order[t]]
        for t in range(start, end):
            out[order[t]] = total / (end - start)
        start = end
    return out


@njit(cache=True)
def ideal_coefficients(labels, scores, c):
    """c of the ideal ranking most compatible with the scores: labels descending, inside a grade scores
    descending, documents equal in both sharing the mean of their positions' c. With all scores equal
    (w = 0) every grade gets the mean c of its block of positions."""
    l = labels.shape[0]
    order = np.argsort(-scores, kind="mergesort")
    order = order[np.argsort(-labels[order], kind="mergesort")]
    at = np.empty(l)
    for j in range(l):
        at[order[j]] = c[j]
    return tie_average(at, labels, scores)


@njit(cache=True)
def sort_positions(g, b):
    """Positions maximising sum_i a_{pos_i} (g_i - b_i) for any non-increasing a: by g - b descending
    (ties in the order given)."""
    l = g.shape[0]
    ranked = np.argsort(-(g - b), kind="mergesort")
    pos = np.empty(l, dtype=np.int64)
    for j in range(l):
        pos[ranked[j]] = j
    return pos


@njit(cache=True)
def target_coefficients(b, g, c, plan):
    """Psi coefficients of the correct output most compatible with the scores g (svmstruct's latent
    target): the ideal ranking (ideal_coefficients) for the positional maps; for MRR_FIRST_PLAN the
    relevant document of highest score at the top (weight 1, shared by relevant documents equal in score)."""
    if plan != MRR_FIRST_PLAN:
        return ideal_coefficients(b, g, c)
    l = g.shape[0]
    best = -1
    for i in range(l):
        if b[i] > 0 and (best < 0 or g[i] > g[best]):
            best = i
    top = np.zeros(l)
    top[best] = 1.0
    return tie_average(top, b, g)


@njit(cache=True)
def _canonical_order(g, b):
    """Documents by (b, g) ascending: documents equal in both are indistinguishable to the oracle."""
    order = np.argsort(g, kind="mergesort")
    return order[np.argsort(b[order], kind="mergesort")]


@njit(cache=True)
def pair_coefficients(pos, grade, top):
    """Psi coefficients of the pairwise map (unscaled) for a ranking (positions) over the pairs of documents
    of different grade whose upper document is at a position < top (every pair: top = l): per document, the
    number of such pairs in which it is the upper minus those in which it is the lower."""
    l = pos.shape[0]
    ranked = np.argsort(pos)
    group_of, sizes = _groups(grade)
    L = sizes.shape[0]
    above_same = np.zeros(L, dtype=np.int64)
    in_top = np.zeros(L, dtype=np.int64)  # documents of each group placed above, at positions < top
    coef = np.empty(l)
    for t in range(l):
        i = ranked[t]
        q = group_of[i]
        above = t - above_same[q]
        above_in_top = min(t, top) - in_top[q]
        coef[i] = (l - sizes[q] - above if t < top else 0) - above_in_top
        above_same[q] += 1
        if t < top:
            in_top[q] += 1
    return coef


@njit(cache=True)
def top_pairs_target(grade, g, top):
    """Psi coefficients (unscaled) of the pairwise maps' correct output most compatible with the scores g (pairs
    whose upper document is at a position < top; top = l: PAIRS_MAP, the same for every ideal ranking): the
    ranking by grade, inside a grade by g, documents equal in both sharing the mean (at w = 0 every grade's mean)."""
    l = grade.shape[0]
    order = np.argsort(-g, kind="mergesort")
    order = order[np.argsort(-grade[order], kind="mergesort")]
    pos = np.empty(l, dtype=np.int64)
    for j in range(l):
        pos[order[j]] = j
    return tie_average(pair_coefficients(pos, grade, top), grade, g)


@njit(cache=True)
def query_most_violated(g, a, b, grade, c, plan, pair_scale=0.0, top_pairs=False):
    """The most violated output of one query: (Psi coefficient of every document, the measure's value
    <a(pi), b>, or 1/p for the reciprocal-rank plans). The pairwise maps count the pairs of different
    grade (b, or the labels where b is a threshold of them; b is constant inside a grade).

    plan: SORT_PLAN sort by g - b (c = a), -1 linear assignment, 0 sort by score (no position matters),
    k > 0 the truncated dynamic program with cut-off k, MRR_PLAN the reciprocal-rank oracle with a
    positional c, MRR_FIRST_PLAN the first-relevant map (b = relevant). pair_scale > 0 adds the pairwise
    map (PAIRS_MAP: plans k > 0 and MRR_PLAN; with top_pairs, TOP_PAIRS_MAP: plans k > 0). The oracle sees
    the documents in the canonical order of (grade, g), never the order of the input lines.
    """
    l = g.shape[0]
    order = _canonical_order(g, grade)
    gc = g[order]
    bc = b[order]
    gradec = grade[order]
    coef = np.empty(l)
    if plan == MRR_FIRST_PLAN:
        coefc, first = mrr_first_oracle(gc, bc > 0)
        for t in range(l):
            coef[order[t]] = coefc[t]
        return coef, 1.0 / first
    if plan == MRR_PLAN:
        posc = mrr_oracle(gc, bc > 0, c, pair_scale)
    elif plan == SORT_PLAN:
        posc = sort_positions(gc, bc)
    elif plan == 0:
        posc = np.empty(l, dtype=np.int64)
        ranked = np.argsort(-gc, kind="mergesort")
        for j in range(l):
            posc[ranked[j]] = j
    elif plan > 0:
        posc = truncated_oracle(gc, a, bc, gradec, c, plan, pair_scale, not top_pairs)
    else:
        posc = assignment_positions(gc, a, bc, c)
    pairs = pair_coefficients(posc, gradec, plan if top_pairs else l) if pair_scale != 0.0 else np.zeros(l)
    pos = np.empty(l, dtype=np.int64)
    for t in range(l):
        pos[order[t]] = posc[t]
        coef[order[t]] = c[posc[t]] + pair_scale * pairs[t]
    if plan == MRR_PLAN:
        first = l
        for i in range(l):
            if b[i] > 0 and pos[i] < first:
                first = pos[i]
        return coef, 1.0 / (first + 1)
    value = 0.0
    for i in range(l):
        value += a[pos[i]] * b[i]
    return coef, value


@threads.parallel_kernel
def most_violated_all(scores, los, his, a_rows, b_rows, grade_rows, c_rows, target_rows, best, plans, pair_scales,
                      top_pairs, dcoef, deltas):
    """Every query's most violated output (in parallel over queries, results independent of the thread
    count): dcoef = Psi coefficients of the target - those of the output (averaged over documents equal
    in grade and score), deltas[q] = Delta of query q. a_rows/c_rows hold query q's position vectors at rows
    los[q]:his[q]; pair_scales[q] is the pairwise map's 1/P (0 for the positional maps), top_pairs[q] says
    it counts the pairs with a document in the top k only (TOP_PAIRS_MAP)."""
    for q in prange(los.shape[0]):
        lo, hi = los[q], his[q]
        g = scores[lo:hi]
        grade = grade_rows[lo:hi]
        coef, value = query_most_violated(g, a_rows[lo:hi], b_rows[lo:hi], grade, c_rows[lo:hi], plans[q],
                                          pair_scales[q], top_pairs[q])
        averaged = tie_average(coef, grade, g)
        for i in range(hi - lo):
            dcoef[lo + i] = target_rows[lo + i] - averaged[i]
        deltas[q] = best[q] - value


@threads.parallel_kernel
def latent_shift_all(scores, los, his, b_rows, grade_rows, c_rows, target_rows, plans, pair_scales, top_pairs,
                     shift):
    """shift = Psi coefficients of the correct output most compatible with the scores (target_coefficients,
    top_pairs_target) - those of the w = 0 target, per row."""
    for q in prange(los.shape[0]):
        lo, hi = los[q], his[q]
        if top_pairs[q]:
            ideal = pair_scales[q] * top_pairs_target(grade_rows[lo:hi], scores[lo:hi], plans[q])
        else:
            ideal = target_coefficients(b_rows[lo:hi], scores[lo:hi], c_rows[lo:hi], plans[q])
        for i in range(hi - lo):
            shift[lo + i] = ideal[i] - target_rows[lo + i]
