"""Feature normalisation (`learn --normalize`), recorded in the model so that scoring applies the same.

- `query`: LETOR's QueryLevelNorm. In every query (every example when there is no qid: the whole file)
  each feature becomes (x - min) / (max - min) over the query's documents, a feature absent from a
  line counting as 0; a feature constant over the query becomes 0. It depends only on the query, so
  `classify` applies it to the test queries (the model header says `normalize query`).
- `global`: each feature divided by its largest |value| in the training data (scikit-learn's
  MaxAbsScaler: sparse data stays sparse). The scale is folded into the written weights
  (w_j / scale_j), so the model scores raw feature values and stays a plain linear model that the
  originals' classify programs read too.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from svmstruct.dataset.documents import Dataset


METHODS = ("none", "query", "global")


def query_level(data: Dataset) -> Dataset:
    """The dataset with every query's features min-max normalised over its documents (see above)."""
    X = data.X
    if isinstance(X, np.ndarray):
        blocks = [_min_max(X[lo:hi].astype(np.float64)) for lo, hi in zip(data.qptr[:-1], data.qptr[1:])]
        return dataclasses.replace(data, X=np.vstack(blocks).astype(X.dtype))
    return dataclasses.replace(data, X=_sparse_min_max(X, np.asarray(data.qptr, dtype=np.int64)))


def _sparse_min_max(X, qptr: np.ndarray):
    """query_level of a CSR matrix, sparse throughout: per (query, feature) the minimum and maximum of its stored
    values and, where a document of the query lacks the feature, 0. Where that minimum is 0 (non-negative
    features, such as counts and TF-IDF) an absent feature stays absent; only a feature with negative values in a
    query where some document lacks it gets entries for those documents ((0 - min) / (max - min) != 0)."""
    import scipy.sparse as sp

    coo = X.tocoo()
    if coo.nnz == 0:
        return X.copy()
    rows, cols = coo.row.astype(np.int64), coo.col.astype(np.int64)
    values = coo.data.astype(np.float64)
    query = np.searchsorted(qptr, rows, side="right") - 1
    key = query * X.shape[1] + cols
    order = np.argsort(key, kind="stable")
    key, rows, cols, values, query = key[order], rows[order], cols[order], values[order], query[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    counts = np.diff(np.r_[starts, len(key)])
    size = (qptr[1:] - qptr[:-1])[query[starts]]
    absent = counts < size  # some document of the query lacks the feature: a 0 in its minimum and maximum
    low, high = np.minimum.reduceat(values, starts), np.maximum.reduceat(values, starts)
    low, high = np.where(absent, np.minimum(low, 0.0), low), np.where(absent, np.maximum(high, 0.0), high)
    span = high - low
    group = np.repeat(np.arange(len(starts)), counts)
    scaled = np.where(span[group] > 0, (values - low[group]) / np.where(span > 0, span, 1.0)[group], 0.0)
    filled = np.flatnonzero(absent & (low < 0))  # absent documents get (0 - low) / span
    extra_rows, extra_cols, extra_values = [], [], []
    for g in filled:
        q = query[starts[g]]
        present = rows[starts[g]:starts[g] + counts[g]]
        missing = np.setdiff1d(np.arange(qptr[q], qptr[q + 1]), present, assume_unique=True)
        extra_rows.append(missing)
        extra_cols.append(np.full(len(missing), cols[starts[g]]))
        extra_values.append(np.full(len(missing), -low[g] / span[g]))
    out = sp.csr_matrix((np.concatenate([scaled, *extra_values]),
                         (np.concatenate([rows, *extra_rows]), np.concatenate([cols, *extra_cols]))),
                        shape=X.shape).astype(X.dtype)
    out.eliminate_zeros()
    out.sort_indices()
    return out


def _min_max(block: np.ndarray) -> np.ndarray:
    low, high = block.min(axis=0), block.max(axis=0)
    span = high - low
    return np.where(span > 0, (block - low) / np.where(span > 0, span, 1.0), 0.0)


def global_scale(data: Dataset) -> np.ndarray:
    """Per column: the largest |value| in the data; 1 for a column that is all zero or whose largest |value|
    is below the normal range of doubles (1 / that would overflow: such a column is left as it is)."""
    X = data.X
    largest = np.abs(X).max(axis=0)
    largest = np.asarray(largest.toarray() if hasattr(largest, "toarray") else largest, dtype=np.float64).ravel()
    return np.where(largest >= np.finfo(np.float64).tiny, largest, 1.0)


def scaled(data: Dataset, scale: np.ndarray) -> Dataset:
    """The dataset with column j divided by scale[j]."""
    X = data.X
    if isinstance(X, np.ndarray):
        out = (X / scale).astype(X.dtype)
    else:
        import scipy.sparse as sp

        out = sp.csr_matrix(X @ sp.diags(1.0 / scale)).astype(X.dtype)
        out.sort_indices()
    return dataclasses.replace(data, X=out)
