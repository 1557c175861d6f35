"""Exact linear assignment in numba: the shortest augmenting path method (Jonker & Volgenant 1987, in
the form described by Crouse 2016, "On implementing 2D rectangular assignment algorithms", IEEE TAES
52(4)), the method scipy.optimize.linear_sum_assignment uses, so that DORM's oracle (Le & Smola 2007,
eq. 24) can run inside numba.

The maximisation of sum_i C[i, col_i] is solved as the minimisation of the cost -C (negation is exact
in floating point). Rows are assigned one at a time: from the new row, a Dijkstra-like search over the
reduced costs cost[i, j] - u[i] - v[j] >= 0 (row potentials u, column potentials v) finds the shortest
alternating path to a free column; the potentials are updated so that the reduced costs stay
non-negative and zero on the assigned pairs, and the path is flipped. n rows, each an O(n^2) search:
O(n^3) time, O(n^2) for the cost matrix.

Entries must be finite (not checked: an inf or nan makes the result meaningless). Deterministic: when
several columns are at the same shortest distance, a free column is taken (it ends the search), and
among equals of the same kind the one of lowest index.
"""
import numpy as np

from svmstruct.compute.jit import njit


@njit(cache=True)
def max_weight_assignment(C):
    """cols with cols[i] the column of row i, a permutation of 0..n-1 maximising sum_i C[i, cols[i]]
    (C square, float64, finite)."""
    n = C.shape[0]
    col4row = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return col4row
    row4col = np.full(n, -1, dtype=np.int64)
    u = np.zeros(n)  # row potentials
    v = np.zeros(n)  # column potentials
    dist = np.empty(n)  # shortest path length from the current row to each column
    path = np.empty(n, dtype=np.int64)  # row preceding each column on its shortest path
    # columns not yet scanned; unsigned, so that numba indexes with them without a wraparound check
    remaining = np.empty(n, dtype=np.uint64)
    row_seen = np.zeros(n, dtype=np.bool_)
    col_seen = np.zeros(n, dtype=np.bool_)
    for cur in range(n):
        for j in range(n):
            dist[j] = np.inf
            path[j] = -1
            remaining[j] = j
            row_seen[j] = False
            col_seen[j] = False
        n_rem = n
        min_val = 0.0
        i = cur
        sink = -1
        while sink == -1:
            row_seen[i] = True
            base = min_val - u[i]
            Ci = C[i]
            best = -1  # index into remaining
            best_j = remaining[0]
            best_free = False
            lowest = np.inf
            for t in range(n_rem):
                j = remaining[t]
                r = base - Ci[j] - v[j]  # reduced cost of -C, plus the distance to row i
                d = dist[j]
                if r < d:
                    dist[j] = r
                    path[j] = i
                    d = r
                if d <= lowest:
                    if d < lowest or best == -1:
                        take = True
                    else:  # tie: a free column first, then the lowest index
                        free = row4col[j] == -1
                        take = (free and not best_free) or (free == best_free and j < best_j)
                    if take:
                        lowest = d
                        best = t
                        best_j = j
                        best_free = row4col[j] == -1
            min_val = lowest
            j = np.int64(best_j)
            n_rem -= 1
            remaining[best] = remaining[n_rem]
            col_seen[j] = True
            if row4col[j] == -1:
                sink = j
            else:
                i = row4col[j]
        # potentials: reduced costs stay >= 0 and become 0 along the new path
        u[cur] += min_val
        for r in range(n):
            if row_seen[r] and r != cur:
                u[r] += min_val - dist[col4row[r]]
        for j in range(n):
            if col_seen[j]:
                v[j] -= min_val - dist[j]
        # flip the alternating path ending at the sink
        j = sink
        while True:
            r = path[j]
            row4col[j] = r
            previous = col4row[r]
            col4row[r] = j
            j = previous
            if r == cur:
                break
    return col4row


@njit(cache=True)
def assignment_positions(g, a, b, c):
    """(0-based position of every document) maximising sum_i c[pos_i] g_i - a[pos_i] b_i: the assignment
    of C_ij = c_j g_i - a_j b_i (Le & Smola 2007, eq. 24)."""
    n = g.shape[0]
    C = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            C[i, j] = c[j] * g[i] - a[j] * b[i]
    return max_weight_assignment(C)
