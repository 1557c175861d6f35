"""svm_rank's pairwise losses (Joachims 2006): examples are queries.

svm_rank's conventions (docs/losses.md, "Conventions"): n = number of queries (including those without a pair,
which contribute nothing); `pairs` (svm_rank -l 1) objective 1/2|w|^2 + (C/n) sum_pairs hinge with
epsilon scaled by total_pairs / n as svm_rank does; `pairs-avg` (-l 2) averages the swapped fraction of
each query: 1/2|w|^2 + (C/n) sum_q (1/pairs_q) sum hinge. No bias feature. Default epsilon 0.001.
"""
from __future__ import annotations

import functools

import numpy as np

from svmstruct.compute import threads
from svmstruct.errors import InputError
from svmstruct.spec import Loss
from svmstruct.train.problem import Reference, TrainingProblem

# one-thread nanoseconds a document of the oracle below (scripts/bench_threads.py on this project's 2-core machine)
NS_PER_DOCUMENT, NS_PER_DOCUMENT_LABELS = 70.0, 20.0  # the oracle, the label ranks


def _pairs_builder(per_query_average: bool):
    def build(data, opts: dict) -> TrainingProblem:
        qptr = data.qptr
        y = np.ascontiguousarray(data.y, dtype=np.float64)
        most_violated, pairs = _pairs_oracle(y, qptr, per_query_average)
        total = int(pairs.sum())
        if total == 0:
            raise InputError("no query has documents with different labels: no pair to rank", data.path)
        n = len(pairs)
        return TrainingProblem(
            data.X, n, most_violated,
            epsilon_scale=1.0 if per_query_average else total / n,
            skipped=int(np.sum(pairs == 0)), examples=n,
            info={"queries": n, "pairs": total},
            reference=_reference(y, qptr, per_query_average),
        )

    return build


# below this many document pairs in all (sum of n_q^2) the oracle is _pairs_twin's, unless numba runs kernels already.
# Training calls it every iteration (~300 times with OCAS's line search on MQ2008): the twin costs ~24 ns a pair a call,
# the kernel ~3 ns after numba's start (~1 s): the twin's whole process is faster on MQ2008's S1 (138,000 pairs), the
# kernel's on S1-S3 (466,000: 3.6 s of training by the twin, 0.4 s by the kernel; make bench-engine)
TWIN_PAIRS = 200_000


def _pairs_oracle(y: np.ndarray, qptr: np.ndarray, per_query_average: bool):
    """(most_violated(scores), pairs per query) by numba's rank_oracles, or for few pairs by their numpy twin
    (compute.paths)."""
    from svmstruct.compute import paths

    if not paths.compiled(int(np.sum(np.diff(qptr) ** 2)), TWIN_PAIRS, "svmstruct.losses.rank_oracles", repeated=True):
        return _pairs_twin(y, qptr, per_query_average)
    from svmstruct.losses import rank_oracles

    with threads.for_work(threads.documents(NS_PER_DOCUMENT_LABELS, len(y))):
        ranks, levels, pairs = rank_oracles.query_label_ranks(y, qptr)
    work = threads.documents(NS_PER_DOCUMENT, len(y))

    def most_violated(scores):
        with threads.for_work(work):
            return rank_oracles.pairs_most_violated(scores, qptr, ranks, levels, pairs, per_query_average)

    return most_violated, pairs


def _pairs_twin(y: np.ndarray, qptr: np.ndarray, per_query_average: bool):
    """rank_oracles' query_label_ranks and pairs_most_violated in numpy, a query's pairs at once: the same counts, so
    the same dcoef and Delta to the bit (pair (i, j) of labels y_i > y_j is swapped iff s_i - 1 < s_j)."""
    import functools
    import operator

    bounds = list(zip(qptr[:-1].tolist(), qptr[1:].tolist()))
    ranks = [np.unique(y[lo:hi], return_inverse=True)[1].ravel() for lo, hi in bounds]
    pairs = np.array([(len(r) ** 2 - int(np.sum(np.bincount(r) ** 2))) // 2 for r in ranks], dtype=np.int64)

    def most_violated(scores):
        dcoef = np.zeros(len(scores))
        deltas = np.zeros(len(bounds))
        for q, ((lo, hi), rank) in enumerate(zip(bounds, ranks)):
            if pairs[q] == 0:
                continue
            s = scores[lo:hi]
            swapped = (rank[None, :] < rank[:, None]) & ((s - 1.0)[:, None] < s[None, :])  # [i, j]: y_j < y_i
            above, below = swapped.sum(axis=1), swapped.sum(axis=0)
            scale = 1.0 / pairs[q] if per_query_average else 1.0
            dcoef[lo:hi] = scale * (above - below)
            deltas[q] = scale * int(above.sum())
        return dcoef, functools.reduce(operator.add, deltas.tolist(), 0.0)

    return most_violated, pairs


def _reference(y: np.ndarray, qptr: np.ndarray, per_query_average: bool) -> Reference:
    """Outputs: a labeling of the query's pairs of different label (-1: swapped); Psi = sum_pairs
    ybar_ij (x_i - x_j) / 2 (scaled by 1/pairs_q for pairs-avg), Delta = swapped pairs (Joachims 2006)."""
    queries = [(int(lo), int(hi)) for lo, hi in zip(qptr[:-1], qptr[1:])
               if len(np.unique(y[lo:hi])) > 1]

    @functools.cache
    def pairs(e):
        lo, hi = queries[e]
        labels = y[lo:hi]
        return lo, [(i, j) if labels[i] > labels[j] else (j, i)
                    for i in range(hi - lo) for j in range(i + 1, hi - lo) if labels[i] != labels[j]]

    def constraint(e, out):
        lo, both = pairs(e)
        scale = 1.0 / len(both) if per_query_average else 1.0
        dcoef = np.zeros(len(y))
        for (high, low), label in zip(both, out):
            if label < 0:
                dcoef[lo + high] += scale
                dcoef[lo + low] -= scale
        return dcoef, scale * sum(1 for label in out if label < 0)

    return Reference("labeling", len(queries), lambda e: len(pairs(e)[1]), constraint)


LOSSES = [
    Loss("pairs", ("rank1",), "rank", "swapped pairs per query, summed (svm_rank -l 1)", _pairs_builder(False), 0.001,
         output="labeling", measure=lambda o: "pairacc", needs_qid=True, other_codes=("1",)),
    Loss("pairs-avg", ("rank2",), "rank", "fraction of swapped pairs averaged over queries (svm_rank -l 2)",
         _pairs_builder(True), 0.001, output="labeling", measure=lambda o: "pairacc", needs_qid=True,
         other_codes=("2",)),
]
