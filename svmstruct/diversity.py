"""SVM-div (Yue & Joachims 2008): predicting diverse subsets by learned weighted word coverage.

A candidate set x (the documents of one qid, features word_id:term_frequency) is scored for a subset y
of K documents by w . Psi(x, y), eq. (4): for every importance level l (how well a document covers a
word: tf >= t, relative frequency >= p, in the title, among the document's top-m TF-IDF words) and every
word v covered at level l by some document of y, the features phi_l(v, x) of how common v is in the
candidate set at that level (indicators |D_l(v)|/n >= threshold), plus sum_{i in y} psi(x_i).

For the trainer, every (level, word) with |D_l(v)| >= 1 is a "coverage unit": a row of the design
matrix holding phi_l(v, x) in level l's block, so scores = Z w are the benefits of covering each
unit, and Psi(x, y) - Psi(x, ybar) = Z' (cover(y) - cover(ybar)). Document features psi, if any, are
further rows. Prediction and the oracle are greedy (Algorithm 1); the loss is the weighted fraction of
subtopics not covered, a subtopic's weight proportional to the number of candidate documents covering it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from svmstruct.errors import InputError

DEFAULT_LEVELS = "tf>=1,tf>=2,tf>=5,rf>=0.02,tfidf-top:10"
DEFAULT_THRESHOLDS = "0,0.02,0.05,0.1,0.15,0.2,0.3,0.4,0.5,0.6,0.8"


@dataclass(frozen=True)
class FeatureConfig:
    levels: tuple  # importance criteria, e.g. ("tf>=1", "rf>=0.02", "title", "tfidf-top:10")
    thresholds: tuple  # document-frequency ratio thresholds of phi
    title_offset: int = 0  # feature ids above this are title words (id - offset); 0 = no titles
    doc_features_from: int = 0  # feature ids from this on are document features psi; 0 = none

    @classmethod
    def parse(cls, levels: str | None, thresholds: str | None, title_offset=0, doc_features_from=0):
        lv = tuple(x.strip() for x in (levels or DEFAULT_LEVELS).split(",") if x.strip())
        for level in lv:
            _check_level(level)
        try:
            th = tuple(sorted(float(x) for x in (thresholds or DEFAULT_THRESHOLDS).split(",") if x.strip()))
        except ValueError:
            raise InputError(f"--df-thresholds takes comma-separated numbers, got '{thresholds}'") from None
        return cls(lv, th, int(title_offset or 0), int(doc_features_from or 0))

    def options(self) -> dict:
        return {"levels": ",".join(self.levels), "df_thresholds": ",".join(f"{t:g}" for t in self.thresholds),
                "title_offset": self.title_offset, "doc_features_from": self.doc_features_from}


def _check_level(level: str) -> None:
    try:
        if level.startswith("tf>="):
            float(level[4:])
        elif level.startswith("rf>="):
            float(level[4:])
        elif level.startswith("tfidf-top:"):
            int(level[10:])
        elif level != "title":
            raise ValueError
    except ValueError:
        raise InputError(f"unknown importance level '{level}' (tf>=T, rf>=P, title, tfidf-top:M)") from None


@dataclass
class CandidateSet:
    """One candidate set prepared for greedy selection."""

    lo: int  # its rows in the data file
    hi: int
    doc_units: sp.csr_matrix  # documents x units: which coverage units each document covers
    unit_features: sp.csr_matrix  # units x features (phi in the unit's level block)
    doc_topics: sp.csr_matrix | None  # documents x subtopics (training/evaluation only)
    topic_weights: np.ndarray | None  # weight of each subtopic, summing to 1


def word_levels(X_words: sp.csr_matrix, titles: sp.csr_matrix | None, levels: tuple) -> list:
    """For each level, a boolean documents x words matrix: document i covers word v at that level."""
    tf = X_words.tocsr()
    length = np.asarray(tf.sum(axis=1)).ravel()
    out = []
    for level in levels:
        if level.startswith("tf>="):
            out.append(tf >= float(level[4:]))
        elif level.startswith("rf>="):
            rel = sp.diags(1.0 / np.maximum(length, 1e-300)) @ tf
            out.append(rel >= float(level[4:]))
        elif level == "title":
            out.append((titles > 0) if titles is not None else sp.csr_matrix(tf.shape, dtype=bool))
        else:  # tfidf-top:M within the candidate set
            m = int(level[10:])
            n = tf.shape[0]
            df = np.asarray((tf > 0).sum(axis=0)).ravel()
            idf = np.log((n + 1.0) / (df + 1.0)) + 1.0
            weighted = (tf @ sp.diags(idf)).tocsr()
            rows, cols = [], []
            for i in range(n):
                lo, hi = weighted.indptr[i], weighted.indptr[i + 1]
                if hi > lo:
                    top = np.argsort(-weighted.data[lo:hi], kind="mergesort")[:m]
                    rows.extend([i] * len(top))
                    cols.extend(weighted.indices[lo:hi][top])
            out.append(sp.csr_matrix((np.ones(len(rows), dtype=bool), (rows, cols)), shape=tf.shape))
    return [m.astype(bool).tocsr() for m in out]


def build_candidate_set(X: sp.csr_matrix, lo: int, hi: int, config: FeatureConfig, n_features: int):
    """Coverage units and their features for rows lo:hi (one candidate set)."""
    words, titles = split_columns(X[lo:hi].tocsr(), config)
    n = hi - lo
    T = len(config.thresholds)
    thresholds = np.asarray(config.thresholds)
    unit_blocks, feature_rows, feature_cols = [], [], []
    unit_count = 0
    for level_index, covers in enumerate(word_levels(words, titles, config.levels)):
        df = np.asarray(covers.sum(axis=0)).ravel()
        present = np.flatnonzero(df)
        ratio = df[present] / n
        # phi_l(v): indicators ratio >= threshold, in block l of the feature vector
        hits = ratio[:, None] >= thresholds[None, :]
        r, t = np.nonzero(hits)
        feature_rows.append(unit_count + r)
        feature_cols.append(level_index * T + t)
        column_to_unit = np.full(words.shape[1], -1, dtype=np.int64)
        column_to_unit[present] = unit_count + np.arange(len(present))
        coo = covers.tocoo()
        unit_blocks.append((coo.row, column_to_unit[coo.col]))
        unit_count += len(present)
    doc_r = np.concatenate([b[0] for b in unit_blocks]) if unit_blocks else np.zeros(0, dtype=np.int64)
    doc_c = np.concatenate([b[1] for b in unit_blocks]) if unit_blocks else np.zeros(0, dtype=np.int64)
    doc_units = sp.csr_matrix((np.ones(len(doc_r)), (doc_r, doc_c)), shape=(n, unit_count))
    doc_units.sort_indices()
    fr, fc = np.concatenate(feature_rows), np.concatenate(feature_cols)
    unit_features = sp.csr_matrix((np.ones(len(fr)), (fr, fc)), shape=(unit_count, n_features))
    return doc_units, unit_features


def split_columns(rows: sp.csr_matrix, config: FeatureConfig):
    """(body words, title words or None) as documents x word-id matrices of one width: ids 1..offset are
    body words, ids offset+1.. title words (id - offset), ids from doc_features_from on are not words."""
    end = config.doc_features_from - 1 if config.doc_features_from else rows.shape[1]
    end = min(end, rows.shape[1])
    if not config.title_offset:
        return rows[:, :end], None
    width = min(config.title_offset, end)
    titles = rows[:, width:end] if end > width else sp.csr_matrix((rows.shape[0], 0))
    titles = titles[:, :width] if titles.shape[1] >= width else \
        sp.hstack([titles, sp.csr_matrix((rows.shape[0], width - titles.shape[1]))]).tocsr()
    return rows[:, :width], titles


def n_word_features(config: FeatureConfig) -> int:
    return len(config.levels) * len(config.thresholds)


def document_features(X: sp.csr_matrix, config: FeatureConfig) -> sp.csr_matrix | None:
    """psi(x_i): the columns from doc_features_from on, or None."""
    if not config.doc_features_from:
        return None
    return X.tocsr()[:, config.doc_features_from - 1:]


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


def read_subtopics(path: str) -> dict:
    """TREC diversity qrels `qid subtopic docid judgment` -> {(qid, docid): set of subtopics} (judgment > 0)."""
    covering: dict = {}
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        raise InputError(f"cannot open subtopics: {e.strerror}", path) from None
    with f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) != 4:
                raise InputError(f"expected 'qid subtopic docid judgment', found '{line.strip()}'", path, lineno)
            try:
                qid, judgment = int(parts[0]), float(parts[3])
            except ValueError:
                raise InputError(f"bad qid or judgment in '{line.strip()}'", path, lineno) from None
            if judgment > 0:
                covering.setdefault((qid, parts[2]), set()).add(parts[1])
            else:
                covering.setdefault((qid, parts[2]), set())
    return covering


def subtopic_matrix(dataset, lo: int, hi: int, covering: dict, path: str):
    """(documents x subtopics incidence, weights proportional to the documents covering each)."""
    qid = int(dataset.qid[lo])
    names, rows, cols = {}, [], []
    for r in range(lo, hi):
        for topic in sorted(covering.get((qid, dataset.docids[r]), ())):
            cols.append(names.setdefault(topic, len(names)))
            rows.append(r - lo)
    if not names:
        raise InputError(f"candidate set qid {qid} has no subtopic judgments", path)
    M = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(hi - lo, len(names)))
    counts = np.asarray(M.sum(axis=0)).ravel()
    return M, counts / counts.sum()


def check_docids(dataset, covering: dict, path: str) -> None:
    """Every judged (qid, docid) must be a document of the data file."""
    known = {(int(q), d) for q, d in zip(dataset.qid, dataset.docids)}
    missing = [key for key in covering if key[0] in set(int(q) for q in dataset.qid) and key not in known]
    if missing:
        qid, docid = missing[0]
        raise InputError(f"{len(missing)} judged documents are not in {dataset.path}, e.g. qid {qid} docid {docid}", path)


def select(cs: CandidateSet, unit_benefit, doc_benefit, K: int, loss_weight: float = 0.0):
    """Greedy subset of cs: (documents in selection order, covered units 0/1, subtopic loss)."""
    topics = cs.doc_topics if cs.doc_topics is not None else sp.csr_matrix((cs.hi - cs.lo, 0))
    weights = cs.topic_weights if cs.topic_weights is not None else np.zeros(0)
    return greedy_select(cs.doc_units.indptr, cs.doc_units.indices, np.ascontiguousarray(unit_benefit, dtype=float),
                         np.ascontiguousarray(doc_benefit, dtype=float), topics.indptr, topics.indices,
                         np.ascontiguousarray(weights, dtype=float), K, float(loss_weight))


def subtopic_loss(cs_topics: sp.csr_matrix, weights: np.ndarray, chosen) -> float:
    """Weighted fraction of subtopics not covered by the chosen documents (the paper's loss)."""
    covered = np.asarray(cs_topics[list(chosen)].sum(axis=0)).ravel() > 0 if len(chosen) else np.zeros(len(weights), bool)
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


def present_words(X_words: sp.csr_matrix) -> sp.csr_matrix:
    """The columns of the words that occur in the candidate set (dense baselines stay small when word
    ids run to millions)."""
    X_words = X_words.tocsr()
    return X_words[:, np.unique(X_words.indices)]


def essential_pages(X_words: sp.csr_matrix, K: int) -> list:
    """Essential Pages (Swaminathan et al. 2008) as in the paper: the benefit of covering word v with
    document x_i is TF(v, x_i) log(1/DF(v, x)), DF the fraction of candidates containing v; greedy
    selection, a word counting once (for the document that covers it best so far)."""
    tf = present_words(X_words).astype(float)
    n = tf.shape[0]
    df = np.asarray((tf > 0).sum(axis=0)).ravel() / n
    benefit = tf @ sp.diags(np.log(1.0 / np.maximum(df, 1e-300)))
    benefit = benefit.toarray()
    best_so_far = np.zeros(tf.shape[1])
    chosen = []
    for _ in range(min(K, n)):
        gains = np.maximum(benefit - best_so_far, 0).sum(axis=1)
        gains[chosen] = -np.inf
        d = int(np.argmax(gains))
        chosen.append(d)
        best_so_far = np.maximum(best_so_far, benefit[d])
    return chosen


def unweighted_coverage(X_words: sp.csr_matrix, K: int) -> list:
    """Greedy maximum coverage of distinct words (every word worth 1)."""
    covers = (present_words(X_words) > 0).toarray()
    covered = np.zeros(covers.shape[1], dtype=bool)
    chosen = []
    for _ in range(min(K, covers.shape[0])):
        gains = (covers & ~covered).sum(axis=1).astype(float)
        gains[chosen] = -np.inf
        d = int(np.argmax(gains))
        chosen.append(d)
        covered |= covers[d]
    return chosen
