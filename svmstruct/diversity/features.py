"""SVM-div's joint feature map (Yue & Joachims 2008, eq. 4): coverage units and their features.

A candidate set x (the documents of one qid, features word_id:term_frequency) is scored for a subset y
of K documents by w . Psi(x, y): for every importance level l (how well a document covers a word: tf >= t,
relative frequency >= p, in the title, among the document's top-m TF-IDF words) and every word v covered
at level l by some document of y, the features phi_l(v, x) of how common v is in the candidate set at
that level (indicators |D_l(v)|/n >= threshold), plus sum_{i in y} psi(x_i).

For the trainer, every (level, word) with |D_l(v)| >= 1 is a "coverage unit": a row of the design matrix
holding phi_l(v, x) in level l's block, so scores = Z w are the benefits of covering each unit, and
Psi(x, y) - Psi(x, ybar) = Z' (cover(y) - cover(ybar)). Document features psi, if any, are further rows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from svmstruct.errors import InputError

if TYPE_CHECKING:
    import scipy.sparse as sp

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
        from svmstruct.options import parse_number

        try:
            th = tuple(sorted(parse_number(x.strip()) for x in (thresholds or DEFAULT_THRESHOLDS).split(",")
                              if x.strip()))
        except ValueError:
            th = (-1.0,)
        if not all(0.0 <= t <= 1.0 for t in th):
            raise InputError("takes comma-separated fractions of the documents, from 0 to 1")
        return cls(lv, th, int(title_offset or 0), int(doc_features_from or 0))

    def options(self) -> dict:
        return {"levels": ",".join(self.levels), "df_thresholds": ",".join(f"{t:g}" for t in self.thresholds),
                "title_offset": self.title_offset, "doc_features_from": self.doc_features_from}


def _check_level(level: str) -> None:
    from svmstruct.options import parse_integer, parse_number

    try:
        if level.startswith(("tf>=", "rf>=")):
            parse_number(level[4:])  # finite, in svm_light's syntax
        elif level.startswith("tfidf-top:"):
            parse_integer(level[10:])
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
    import scipy.sparse as sp

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
    import scipy.sparse as sp

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
    import scipy.sparse as sp

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


def candidate_sets(data, config, subtopics=None):
    """Prepared candidate sets and the design matrix Z (units, then document rows for psi); subtopics(lo, hi):
    the subtopics of the documents lo..hi and their weights (qrels.subtopic_matrix), for training."""
    import scipy.sparse as sp

    if not data.has_qid:
        raise InputError("diversity data needs qid:<candidate set> on every line", data.path)
    if data.columns is not None:
        raise InputError("diversity data needs word ids (feature indices) below 1048576", data.path)
    n_word = n_word_features(config)
    psi = document_features(data.X, config)
    width = n_word + (psi.shape[1] if psi is not None else 0)
    sets, blocks = [], []
    for lo, hi in zip(data.qptr[:-1], data.qptr[1:]):
        doc_units, unit_features = build_candidate_set(data.X, int(lo), int(hi), config, width)
        topics = weights = None
        if subtopics is not None:
            topics, weights = subtopics(int(lo), int(hi))
        sets.append(CandidateSet(int(lo), int(hi), doc_units, unit_features, topics, weights))
        blocks.append(unit_features)
    unit_rows = sum(b.shape[0] for b in blocks)
    if psi is not None:
        blocks.append(sp.hstack([sp.csr_matrix((psi.shape[0], n_word)), psi]).tocsr())
    Z = sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, width))
    return sets, Z, unit_rows


def split_scores(scores, sets, unit_rows):
    """Per candidate set: (unit benefits, document benefits) from scores = Z w."""
    offset = 0
    for cs in sets:
        units = cs.doc_units.shape[1]
        unit_benefit = scores[offset: offset + units]
        doc_benefit = (scores[unit_rows + cs.lo: unit_rows + cs.hi] if len(scores) > unit_rows
                       else np.zeros(cs.hi - cs.lo))
        yield cs, offset, unit_benefit, doc_benefit
        offset += units
