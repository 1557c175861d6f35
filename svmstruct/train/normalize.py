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

import numpy as np

from svmstruct.io.documents import Dataset

METHODS = ("none", "query", "global")


def query_level(data: Dataset) -> Dataset:
    """The dataset with every query's features min-max normalised over its documents (see above)."""
    X = data.X
    if isinstance(X, np.ndarray):
        blocks = [_min_max(X[lo:hi].astype(np.float64)) for lo, hi in zip(data.qptr[:-1], data.qptr[1:])]
        return dataclasses.replace(data, X=np.vstack(blocks).astype(X.dtype))
    import scipy.sparse as sp

    parts = []
    for lo, hi in zip(data.qptr[:-1], data.qptr[1:]):
        block = X[lo:hi].tocsc()
        used = np.flatnonzero(np.diff(block.indptr))  # a column the query does not use stays 0
        scaled = _min_max(block[:, used].toarray().astype(np.float64))
        parts.append(sp.csr_matrix((scaled.ravel(), (np.repeat(np.arange(hi - lo), len(used)), np.tile(used, hi - lo))),
                                   shape=(hi - lo, X.shape[1])))
    out = sp.vstack(parts, format="csr").astype(X.dtype)
    out.eliminate_zeros()
    out.sort_indices()
    return dataclasses.replace(data, X=out)


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
