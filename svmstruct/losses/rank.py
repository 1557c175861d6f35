"""svm_rank's pairwise losses (Joachims 2006): examples are queries.

svm_rank's conventions (README, "Conventions"): n = number of queries (including those without a pair,
which contribute nothing); `pairs` (svm_rank -l 1) objective 1/2|w|^2 + (C/n) sum_pairs hinge with
epsilon scaled by total_pairs / n as svm_rank does; `pairs-avg` (-l 2) averages the swapped fraction of
each query: 1/2|w|^2 + (C/n) sum_q (1/pairs_q) sum hinge. No bias feature. Default epsilon 0.001.
"""
from __future__ import annotations

import numpy as np

from svmstruct.errors import InputError
from svmstruct.losses import rank_oracles
from svmstruct.losses.base import Loss
from svmstruct.problem import TrainingProblem


def _pairs_builder(per_query_average: bool):
    def build(data, opts: dict) -> TrainingProblem:
        qptr = data.qptr
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


LOSSES = [
    Loss("pairs", ("rank1",), "rank", "swapped pairs per query, summed (svm_rank -l 1)", _pairs_builder(False), 0.001,
         output="labeling", measure=lambda o: "pairacc", needs_qid=True),
    Loss("pairs-avg", ("rank2",), "rank", "fraction of swapped pairs averaged over queries (svm_rank -l 2)",
         _pairs_builder(True), 0.001, output="labeling", measure=lambda o: "pairacc", needs_qid=True),
]
