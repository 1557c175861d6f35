"""Greedy selection of a diverse subset (Yue & Joachims 2008, Algorithm 1): prediction and the oracle."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from svmstruct.compute.jit import njit

if TYPE_CHECKING:
    from svmstruct.diversity.features import CandidateSet


@njit(cache=True)
def greedy_select(doc_ptr, doc_idx, unit_benefit, doc_benefit, topic_ptr, topic_idx, topic_weight, K,
                  loss_weight):
    """Algorithm 1: pick K documents one at a time, each maximising the marginal gain of
    sum of benefits of newly covered units + its own benefit + loss_weight * (weight of subtopics still
    uncovered after it; loss_weight 1 for the oracle's Delta, 0 for prediction, -1 to cover subtopics).
    Ties go to the earlier document. Returns (the selected documents in order, the covered units as
    0/1, the weight of the subtopics left uncovered: the loss)."""
    n = doc_ptr.shape[0] - 1
    covered = np.zeros(unit_benefit.shape[0], dtype=np.bool_)
    topic_covered = np.zeros(topic_weight.shape[0], dtype=np.bool_)
    chosen = np.zeros(n, dtype=np.bool_)
    order = np.empty(min(K, n), dtype=np.int64)
    for step in range(min(K, n)):
        best, best_gain = -1, -np.inf
        for d in range(n):
            if chosen[d]:
                continue
            gain = doc_benefit[d]
            for p in range(doc_ptr[d], doc_ptr[d + 1]):
                u = doc_idx[p]
                if not covered[u]:
                    gain += unit_benefit[u]
            if loss_weight != 0.0:
                newly = 0.0
                for p in range(topic_ptr[d], topic_ptr[d + 1]):
                    t = topic_idx[p]
                    if not topic_covered[t]:
                        newly += topic_weight[t]
                gain -= loss_weight * newly
            if gain > best_gain:
                best, best_gain = d, gain
        order[step] = best
        chosen[best] = True
        for p in range(doc_ptr[best], doc_ptr[best + 1]):
            covered[doc_idx[p]] = True
        for p in range(topic_ptr[best], topic_ptr[best + 1]):
            topic_covered[topic_idx[p]] = True
    uncovered = 0.0
    for t in range(topic_weight.shape[0]):
        if not topic_covered[t]:
            uncovered += topic_weight[t]
    return order, covered.astype(np.float64), uncovered


def select(cs: CandidateSet, unit_benefit, doc_benefit, K: int, loss_weight: float = 0.0):
    """Greedy subset of cs: (documents in selection order, covered units 0/1, subtopic loss)."""
    topics = cs.doc_topics if cs.doc_topics is not None else sp.csr_matrix((cs.hi - cs.lo, 0))
    weights = cs.topic_weights if cs.topic_weights is not None else np.zeros(0)
    return greedy_select(cs.doc_units.indptr, cs.doc_units.indices, np.ascontiguousarray(unit_benefit, dtype=float),
                         np.ascontiguousarray(doc_benefit, dtype=float), topics.indptr, topics.indices,
                         np.ascontiguousarray(weights, dtype=float), K, float(loss_weight))
