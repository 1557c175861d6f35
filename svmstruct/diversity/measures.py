"""Diversity measures of a selection: subtopic loss (the training loss), S-recall, alpha-NDCG; the
`eval --subtopics` table."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from svmstruct.diversity import qrels
from svmstruct.errors import InputError


def subtopic_loss(cs_topics: sp.csr_matrix, weights: np.ndarray, chosen) -> float:
    """Weighted fraction of subtopics not covered by the chosen documents (the paper's loss)."""
    if not len(chosen):
        return float(weights.sum())
    covered = np.asarray(cs_topics[list(chosen)].sum(axis=0)).ravel() > 0
    return float(weights[~covered].sum())


def subtopic_recall(cs_topics: sp.csr_matrix, chosen) -> float:
    """S-recall@K (Zhai et al. 2003): fraction of the subtopics covered by the chosen documents."""
    if cs_topics.shape[1] == 0:
        return 0.0
    covered = np.asarray(cs_topics[list(chosen)].sum(axis=0)).ravel() > 0 if len(chosen) else np.zeros(0, bool)
    return float(np.sum(covered)) / cs_topics.shape[1]


def alpha_dcg(cs_topics: sp.csr_matrix, ranking, alpha: float) -> float:
    """alpha-DCG (Clarke et al. 2008): sum_r [sum_t J(d_r, t) (1 - alpha)^{#earlier documents with t}] / log2(1 + r)."""
    seen = np.zeros(cs_topics.shape[1])
    total = 0.0
    dense = cs_topics.toarray()
    for r, d in enumerate(ranking, 1):
        gain = float(np.sum(dense[d] * (1 - alpha) ** seen))
        total += gain / np.log2(1 + r)
        seen += dense[d]
    return total


def alpha_ndcg(cs_topics: sp.csr_matrix, ranking, alpha: float = 0.5) -> float:
    """alpha-NDCG@K: alpha-DCG of the ranking over that of the greedy ideal ranking of the same length
    (the ideal is NP-hard; the greedy approximation is the usual convention)."""
    K = len(ranking)
    dense = cs_topics.toarray()
    seen = np.zeros(dense.shape[1])
    ideal, left = [], set(range(dense.shape[0]))
    for _ in range(K):
        best = max(left, key=lambda d: (float(np.sum(dense[d] * (1 - alpha) ** seen)), -d))
        ideal.append(best)
        left.discard(best)
        seen += dense[best]
    best_value = alpha_dcg(cs_topics, ideal, alpha)
    return alpha_dcg(cs_topics, ranking, alpha) / best_value if best_value > 0 else 0.0


def evaluate_selections(data, subtopics_path: str, selections_path: str, alpha: float = 0.5) -> dict:
    """Measure table of diversity measures per candidate set and their means."""
    covering = qrels.read_subtopics(subtopics_path)
    qrels.check_docids(data, covering, subtopics_path)
    chosen = qrels.read_selections(selections_path)
    table: dict[str, dict[str, float]] = {"subtopic-loss": {}, "s-recall": {}, "alpha-ndcg": {}}
    for lo, hi in zip(data.qptr[:-1], data.qptr[1:]):
        qid = int(data.qid[lo])
        topics, weights = qrels.subtopic_matrix(data, int(lo), int(hi), covering, subtopics_path)
        if qid not in chosen:
            raise InputError(f"no selection for candidate set {qid}", selections_path)
        index = {d: i for i, d in enumerate(data.docids[lo:hi])}
        unknown = [d for d in chosen[qid] if d not in index]
        if unknown:
            raise InputError(f"docid {unknown[0]} is not in candidate set {qid}", selections_path)
        rows = [index[d] for d in chosen[qid]]
        table["subtopic-loss"][str(qid)] = subtopic_loss(topics, weights, rows)
        table["s-recall"][str(qid)] = subtopic_recall(topics, rows)
        table["alpha-ndcg"][str(qid)] = alpha_ndcg(topics, rows, alpha)
    for row in table.values():
        row["all"] = float(np.mean(list(row.values())))
    return table
