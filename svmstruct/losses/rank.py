"""svm_rank's pairwise losses (Joachims 2006) and SVM-map (Yue et al. 2007): examples are queries.

svm_rank conventions (DESIGN.md section 4): n = number of queries (including those without a pair,
which contribute nothing); `pairs` (svm_rank -l 1) objective 1/2|w|^2 + (C/n) sum_pairs hinge with
epsilon scaled by total_pairs / n as svm_rank does; `pairs-avg` (-l 2) averages the swapped fraction of
each query: 1/2|w|^2 + (C/n) sum_q (1/pairs_q) sum hinge. No bias feature. Default epsilon 0.001.
SVM-map: Delta = 1 - AP, Psi normalised by |C+||C-| (the paper's eq. for Psi), relevant = label >
rel_threshold; queries without a relevant or without a non-relevant document are skipped.
"""
from __future__ import annotations

import numpy as np

from svmstruct.errors import InputError
from svmstruct.losses import Loss, TrainingProblem
from svmstruct.losses import rank_oracles
from svmstruct.losses.map_oracles import map_most_violated


def _queries(data):
    if not data.has_qid:
        raise InputError("ranking losses need qid:<id> on every line", data.path)
    return data.qptr


def _pairs_builder(per_query_average: bool):
    def build(data, opts: dict) -> TrainingProblem:
        qptr = _queries(data)
        pairs = np.array([rank_oracles.count_pairs(data.y[lo:hi]) for lo, hi in zip(qptr[:-1], qptr[1:])])
        total = int(pairs.sum())
        if total == 0:
            raise InputError("no query has documents with different labels: no pair to rank", data.path)
        n = len(pairs)
        y = np.ascontiguousarray(data.y, dtype=np.float64)

        def most_violated(scores):
            return rank_oracles.pairs_most_violated(y, scores, qptr, per_query_average)

        return TrainingProblem(
            data.X, n, most_violated,
            epsilon_scale=1.0 if per_query_average else total / n,
            skipped=int(np.sum(pairs == 0)),
            info={"queries": n, "pairs": total},
        )

    return build


def build_map(data, opts: dict) -> TrainingProblem:
    qptr = _queries(data)
    relevant = np.where(data.y > float(opts.get("rel_threshold") or 0.0), 1.0, -1.0)
    pos = np.add.reduceat(relevant > 0, qptr[:-1])
    used = (pos > 0) & (pos < np.diff(qptr))
    if not used.any():
        raise InputError("no query has both relevant and non-relevant documents", data.path)

    def most_violated(scores):
        return map_most_violated(relevant, scores, qptr)

    return TrainingProblem(data.X, int(used.sum()), most_violated, skipped=int((~used).sum()),
                           info={"queries": len(used), "relevant": int(pos.sum())})


LOSSES = [
    Loss("pairs", ("rank1",), "rank", "swapped pairs per query, summed (svm_rank -l 1)", _pairs_builder(False), 0.001),
    Loss("pairs-avg", ("rank2",), "rank", "fraction of swapped pairs averaged over queries (svm_rank -l 2)",
         _pairs_builder(True), 0.001),
    Loss("map", ("svmmap",), "map", "1 - average precision per query (SVM-map, Yue et al. 2007)", build_map, 0.001),
]
