"""Viterbi's best tag sequences for SVM-hmm (svmstruct.problems.hmm), in numba, over all sequences at once.

The score of tags y_1..y_L (0-based here) is, as svm_hmm V3.10 defines it for transitions of order t <= 3 and
emissions of order e <= t,

    sum_i E0[i, y_i] + [e = 1] sum_{i>1} E1[i, y_{i-1}, y_i] + [t >= 1] sum_{i>1} T1[y_{i-1}, y_i]
        + [t >= 2] sum_{i>2} T2[y_{i-2}, y_{i-1}, y_i] + [t >= 3] sum_{i>3} T3[y_{i-3}, ..., y_i]

(E0, E1 the emission scores of each token, T the transition weights; the first tokens of a sequence have only the
lower orders). The exact search keeps one best path per state, the last t tags (a tag before the sequence's start
being "none"): (K + 1)^t states of K successors each per token; ties go to the smaller state (the earlier tags
the smaller, then the current one), the smaller last state at the end. `wrong` adds one to every tag that is not
the truth's (Hamming: margin rescaling's most violated tagging); `deviated` keeps, besides, whether a path has
left the truth, and adds one to the paths that have (the zero/one loss's most violated tagging: the truth, whose
paths never leave it, or the best path that does). The beam search is svm_hmm's --b: the
`width` best paths of each position, kept and replaced as svm_hmm keeps them, so that its predictions are
svm_hmm_classify's (the same ties, the same evictions).
"""
from __future__ import annotations

import numpy as np

from svmstruct.compute import threads
from svmstruct.compute.jit import njit, prange

NS_PER_STEP = 0.5  # one-thread nanoseconds of one (state, tag) step of the exact search (the thread policy's)


def top_table(T1, T2, T3, order: int) -> np.ndarray:
    """What the highest order's transition adds, by the state's other tags (rest: the previous tag the least
    significant digit, none = K), the next tag and the oldest tag (contiguous, none last): rests x K x (K + 1),
    0 wherever a tag is none (the sequence's first tokens)."""
    T = (T1, T2, T3)[order - 1]
    K = T.shape[-1]
    B = K + 1
    padded = np.zeros((B,) * (order + 1))
    padded[(slice(0, K),) * (order + 1)] = T  # [oldest, ..., prev, next]
    moved = np.moveaxis(padded, 0, -1)[..., :K, :]  # [..., prev, next, oldest]
    rests = B ** (order - 1)
    if order == 1:
        return np.ascontiguousarray(moved.reshape(1, K, B))
    # rest = prev + B * before (+ B^2 * ...): the earliest of the other tags is the most significant digit
    return np.ascontiguousarray(moved.reshape(rests, K, B))


@njit(cache=True)
def _fast(E0, E1, T1, T2, top, h, emit, bounds, truth, wrong, out):
    """viterbi_all without `deviated`, for transitions of order h >= 1: the best predecessor of a state and tag
    is the best of its oldest tag alone (what the others add does not depend on it): K + 1 candidates each, the
    highest order's transitions from `top` (top_table)."""
    K = E0.shape[1]
    B = K + 1
    S = B ** h
    rests = S // B
    pad = 0
    for j in range(1, h):
        pad += K * B ** j
    column = np.empty(B)
    for s in range(bounds.shape[0] - 1):
        lo, hi = bounds[s], bounds[s + 1]
        L = hi - lo
        score = np.full(S, -np.inf)
        back = np.full((L, S), -1, dtype=np.int64)
        for c in range(K):
            score[c + pad] = E0[lo, c] + (1.0 if wrong and c != truth[lo] else 0.0)
        for t in range(1, L):
            i = lo + t
            new = np.full(S, -np.inf)
            for rest in range(rests):
                reached = False
                for o in range(B):
                    column[o] = score[rest + rests * o]
                    reached = reached or column[o] > -np.inf
                if not reached:
                    continue
                prev = rest % B if h >= 2 else K
                before = (rest // B) % B if h >= 3 else K
                for nxt in range(K):
                    best, arg = -np.inf, -1
                    for o in range(B):
                        v = column[o] + top[rest, nxt, o]
                        if h == 1 and emit >= 1 and o < K:
                            v += E1[i, o, nxt]
                        if v > best:
                            best, arg = v, o
                    v = best + E0[i, nxt] + (1.0 if wrong and nxt != truth[i] else 0.0)
                    if prev < K:
                        if emit >= 1:
                            v += E1[i, prev, nxt]
                        v += T1[prev, nxt]
                        if h >= 3 and before < K:
                            v += T2[before, prev, nxt]
                    target = nxt + B * rest
                    new[target], back[t, target] = v, rest + rests * arg
            score = new
        last, best = -1, -np.inf
        for code in range(S):
            if score[code] > best:
                last, best = code, score[code]
        for t in range(L - 1, -1, -1):
            out[lo + t] = last % B
            last = back[t, last]


@threads.parallel_kernel
def viterbi_all(E0, E1, T1, T2, T3, top, order, emit, bounds, truth, wrong, deviated, out):
    """out[lo:hi] = the best tags of every sequence lo..hi of `bounds` (module docstring); truth: 0-based tags (read
    when wrong or deviated); deviated: one more for a path that differs from the truth somewhere. The sequences are
    searched apart (prange: on several threads, each writing its own tags; the same tags on any number)."""
    K = E0.shape[1]
    B = K + 1
    h = max(order, 1)
    S = B ** h
    flags = 2 if deviated else 1
    pad = 0
    for j in range(1, h):
        pad += K * B ** j
    for s in prange(bounds.shape[0] - 1):
        lo, hi = bounds[s], bounds[s + 1]
        L = hi - lo
        if order >= 1 and not deviated:
            _fast(E0, E1, T1, T2, top, order, emit, bounds[s:s + 2], truth, wrong, out)
            continue
        if order == 0 and not deviated:  # independent tokens
            for i in range(lo, hi):
                best, arg = -np.inf, 0
                for c in range(K):
                    v = E0[i, c] + (1.0 if wrong and c != truth[i] else 0.0)
                    if v > best:
                        best, arg = v, c
                out[i] = arg
            continue
        score = np.full(S * flags, -np.inf)
        back = np.full((L, S * flags), -1, dtype=np.int64)
        for c in range(K):
            f = 1 if deviated and c != truth[lo] else 0
            score[(c + pad) * flags + f] = E0[lo, c] + (1.0 if wrong and c != truth[lo] else 0.0)
        for t in range(1, L):
            i = lo + t
            new = np.full(S * flags, -np.inf)
            for code in range(S * flags):
                start = score[code]
                if start == -np.inf:
                    continue
                state, f = code // flags, code % flags
                shifted = B * (state % (S // B))
                prev, before, oldest = state % B, (state // B) % B, (state // (B * B)) % B
                first = prev < K and emit >= 1
                second = prev < K and order >= 1
                third = second and order >= 2 and before < K
                fourth = third and order >= 3 and oldest < K
                for nxt in range(K):  # what tag nxt at token i adds after this state (module docstring)
                    v = start + E0[i, nxt]
                    if first:
                        v += E1[i, prev, nxt]
                    if second:
                        v += T1[prev, nxt]
                    if third:
                        v += T2[before, prev, nxt]
                    if fourth:
                        v += T3[oldest, before, prev, nxt]
                    if wrong and nxt != truth[i]:
                        v += 1.0
                    g = f if not deviated else (1 if f == 1 or nxt != truth[i] else 0)
                    target = (shifted + nxt) * flags + g
                    if v > new[target]:
                        new[target] = v
                        back[t, target] = code
            score = new
        last, best = -1, -np.inf
        for code in range(S * flags):
            value = score[code] + (1.0 if deviated and code % flags == 1 else 0.0)  # zero/one: 1 off the truth
            if value > best:
                last, best = code, value
        for t in range(L - 1, -1, -1):
            out[lo + t] = (last // flags) % B
            last = back[t, last]


@njit(cache=True)
def _beam_add(elem, count, worst, score, new, width):
    """svm_hmm's beam_add: (count, worst) after offering state `new` (its score already set) to the beam."""
    if count == 0:
        elem[0] = new
        return 1, 0
    present = False
    for j in range(count):
        if elem[j] == new:
            present = True
    if count < width:
        if not present:
            elem[count] = new
            count += 1
    elif score[new] > score[elem[worst]]:
        if not present:
            elem[worst] = new
    else:
        return count, worst
    lowest = score[elem[worst]]
    for j in range(count):
        if lowest > score[elem[j]]:
            worst, lowest = j, score[elem[j]]
    return count, worst


@njit(cache=True)
def beam_all(E0, E1, T1, T2, T3, order, emit, bounds, truth, wrong, width, out):
    """svm_hmm's beam search of `width` (--b) for transitions of order >= 1: at every token the best paths of the
    states the beam reaches, a state being the last `order` tags (fewer at the start); the beam keeps the `width`
    best states offered, in svm_hmm's order of offering and eviction."""
    K = E0.shape[1]
    power = np.empty(order + 1, dtype=np.int64)
    power[0] = K
    for o in range(1, order + 1):
        power[o] = power[o - 1] * K
    states = power[order - 1]
    for s in range(bounds.shape[0] - 1):
        lo, hi = bounds[s], bounds[s + 1]
        L = hi - lo
        score = np.zeros((L, states))
        label = np.zeros((L, states), dtype=np.int64)
        back = np.full((L, states), -1, dtype=np.int64)  # the previous token's state; -1: not reached this round
        index = np.zeros((L, states), dtype=np.int64)
        elem = np.empty(width, dtype=np.int64)
        count, worst = 0, 0
        end, top = -1, 0.0
        for c in range(K):
            score[0, c] = E0[lo, c] + (1.0 if wrong and c != truth[lo] else 0.0)
            label[0, c], index[0, c] = c, c
            count, worst = _beam_add(elem, count, worst, score[0], c, width)
            if L == 1 and (top < score[0, c] or end < 0):
                end, top = c, score[0, c]
        for t in range(1, L):
            i = lo + t
            cur = min(t, order - 1)
            for j in range(count):
                first = (index[t - 1, elem[j]] * K) % power[cur]
                for c in range(K):
                    back[t, first + c] = -1
            fresh = np.empty(width, dtype=np.int64)
            fresh_count, fresh_worst = 0, 0
            for j in range(count):
                previous = elem[j]
                history = index[t - 1, previous] * K  # the previous tags, then this one's place
                target = history % power[cur]
                for c in range(K):
                    v = score[t - 1, previous] + E0[i, c] + (1.0 if wrong and c != truth[i] else 0.0)
                    prev_tag = index[t - 1, previous] % K
                    if emit >= 1:
                        v += E1[i, prev_tag, c]
                    v += T1[prev_tag, c]
                    if order >= 2 and t >= 2:
                        v += T2[(index[t - 1, previous] // K) % K, prev_tag, c]
                    if order >= 3 and t >= 3:
                        v += T3[(index[t - 1, previous] // (K * K)) % K, (index[t - 1, previous] // K) % K, prev_tag, c]
                    if back[t, target] < 0 or score[t, target] < v:
                        back[t, target], score[t, target] = previous, v
                        label[t, target], index[t, target] = c, target
                        fresh_count, fresh_worst = _beam_add(fresh, fresh_count, fresh_worst, score[t], target, width)
                        if t == L - 1 and (top < v or end < 0):
                            end, top = target, v
                    target += 1
            elem, count, worst = fresh, fresh_count, fresh_worst
        for t in range(L - 1, -1, -1):
            out[lo + t] = label[t, end]
            end = back[t, end]
