"""SVM-map (Yue, Finley, Radlinski & Joachims 2007): examples are queries, Delta = 1 - AP.

Psi(x, y) = 1/(|C+||C-|) sum_{i in C+} sum_{j in C-} y_ij (x_i - x_j) (the paper's eq. 4), relevant =
label > rel_threshold; queries without a relevant or without a non-relevant document are skipped and
counted. The oracle (map_oracles) is exact in O(n log n) per query.
"""
from __future__ import annotations

import numpy as np

from svmstruct.compute import threads
from svmstruct.errors import InputError
from svmstruct.spec import REL_THRESHOLD, Loss
from svmstruct.train.problem import Reference, TrainingProblem

# one-thread nanoseconds a document of the oracle below (scripts/bench_threads.py on this project's 2-core machine)
NS_PER_DOCUMENT = 63.0


def build(data, opts: dict) -> TrainingProblem:
    qptr = data.qptr
    relevant = np.where(data.y > float(opts.get("rel_threshold") or 0.0), 1.0, -1.0)
    pos = np.add.reduceat(relevant > 0, qptr[:-1])
    used = (pos > 0) & (pos < np.diff(qptr))
    if not used.any():
        raise InputError("no query has both relevant and non-relevant documents", data.path)

    work = threads.documents(NS_PER_DOCUMENT, len(relevant))
    from svmstruct.losses import map_oracles  # numba: loaded when MAP trains, not with the registry

    def most_violated(scores):
        with threads.for_work(work):
            return map_oracles.map_most_violated(relevant, scores, qptr)

    examples = [(int(qptr[q]), int(qptr[q + 1])) for q in np.flatnonzero(used)]
    return TrainingProblem(data.X, int(used.sum()), most_violated, skipped=int((~used).sum()),
                           info={"queries": len(used), "relevant": int(pos.sum())},
                           reference=_reference(relevant, examples))


def _reference(relevant: np.ndarray, examples: list) -> Reference:
    """Outputs: a ranking of the query (each document's position); Psi and Delta as the paper's eq. 4 and
    Delta = 1 - AP."""

    def constraint(e, out):
        lo, hi = examples[e]
        rel = np.flatnonzero(relevant[lo:hi] > 0)
        non = np.flatnonzero(relevant[lo:hi] < 0)
        unit = 1.0 / (len(rel) * len(non))
        dcoef = np.zeros(len(relevant))
        for i in rel:
            for j in non:
                if out[j] < out[i]:  # y_ij = -1 instead of +1
                    dcoef[lo + i] += 2 * unit
                    dcoef[lo + j] -= 2 * unit
        ranks = np.sort(np.asarray(out)[rel]) + 1
        ap = float(np.mean(np.arange(1, len(rel) + 1) / ranks))
        return dcoef, 1.0 - ap

    return Reference("ranking", len(examples), lambda e: examples[e][1] - examples[e][0], constraint)


LOSSES = [
    Loss("map", ("svmmap",), "map", "1 - average precision per query (SVM-map, Yue et al. 2007)", build, 0.001,
         options=(REL_THRESHOLD,), output="ranking", measure=lambda o: "map", needs_qid=True),
]
