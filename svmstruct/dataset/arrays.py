"""Datasets made from arrays in memory and from other datasets: from_arrays (the Python API), align and concatenate
(several files read as one, shards, --validate), and the largest |x| (the model's record of its training data)."""
from __future__ import annotations

import dataclasses

import numpy as np

from svmstruct.dataset.documents import Dataset, Docids, check_unique_docids, group_queries
from svmstruct.errors import InputError


def from_arrays(X, y, qid=None, docids=None, name: str = "<arrays>") -> Dataset:
    """A Dataset from in-memory arrays (the Python API): X a numpy array or scipy sparse matrix
    (n x d), y the n targets, qid None (one example) or n query ids in any order, docids None or n
    document names (eval breaks ties between equal scores by them, as trec_eval; without: `L<row>`, the
    names a file without docid comments gives its lines).

    Rows of one qid need not be adjacent: they are grouped (stably, queries in order of first
    appearance); dataset row r is input row dataset.line[r] - 1. Raises InputError for non-finite values
    or mismatched lengths.
    """
    import scipy.sparse as sp

    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        values = X.data
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise InputError(f"X must be 2-dimensional, got shape {X.shape}", name)
        values = X
    y = np.asarray(y, dtype=np.float64).ravel()
    n = X.shape[0]
    if len(y) != n:
        raise InputError(f"X has {n} rows but y has {len(y)} values", name)
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(y))):
        raise InputError("X and y must be finite (no NaN or infinity)", name)
    if n == 0:
        raise InputError("no examples", name)
    if qid is None:
        order = np.arange(n)
        qids = np.zeros(n, dtype=np.int64)
        qptr = np.array([0, n], dtype=np.int64)
    else:
        qid = np.asarray(qid).ravel()
        if len(qid) != n:
            raise InputError(f"X has {n} rows but qid has {len(qid)} values", name)
        _, first, codes = np.unique(qid, return_index=True, return_inverse=True)
        rank = np.argsort(np.argsort(first, kind="stable"), kind="stable")  # queries by first appearance
        order = np.argsort(rank[codes.ravel()], kind="stable")
        qids = rank[codes.ravel()][order].astype(np.int64) + 1
        qptr = np.concatenate(([0], np.flatnonzero(np.diff(qids)) + 1, [n])).astype(np.int64)
    X = X[order]
    if docids is not None and len(docids) != n:
        raise InputError(f"X has {n} rows but docids has {len(docids)} values", name)
    names = Docids()
    for r in order:
        names.append(f"L{r + 1}" if docids is None else str(docids[r]))
    dataset = Dataset(X, y[order], qids, qptr, names.freeze(), order + 1, name, qid is not None)
    if docids is not None and qid is not None:
        check_unique_docids(dataset)
    return dataset


def align(dataset: Dataset, width: int, columns: np.ndarray | None = None) -> Dataset:
    """The dataset over `width` columns, zero in the new ones. With `columns` (sorted feature indices - 1
    of a wider set, e.g. the union over several files), column j of the result is feature columns[j] + 1
    and the dataset's own features must be among them; without, column j stays feature j + 1."""
    import scipy.sparse as sp

    if columns is None and dataset.columns is None:
        if isinstance(dataset.X, np.ndarray):
            return dataclasses.replace(dataset, X=np.pad(dataset.X, ((0, 0), (0, width - dataset.n_features))))
        X = sp.csr_matrix(dataset.X)
        X.resize((X.shape[0], width))
        return dataclasses.replace(dataset, X=X)
    columns = np.arange(width, dtype=np.int64) if columns is None else np.asarray(columns, dtype=np.int64)
    own = np.arange(dataset.n_features) if dataset.columns is None else dataset.columns
    block = sp.csr_matrix(dataset.X).tocoo()
    X = sp.csr_matrix((block.data, (block.row, np.searchsorted(columns, own[block.col]))),
                      shape=(dataset.n_docs, len(columns)))
    return dataclasses.replace(dataset, X=X, columns=columns)


def _concatenate_by_index(datasets: list, name: str | None) -> Dataset:
    """concatenate() when some dataset keeps compact columns: the union of the feature indices used."""
    ids = [np.arange(d.n_features) if d.columns is None else d.columns for d in datasets]
    columns = np.unique(np.concatenate(ids))
    aligned = [dataclasses.replace(align(d, len(columns), columns), columns=None) for d in datasets]
    merged = concatenate(aligned, name)
    merged.columns = columns.astype(np.int64)
    return merged


def largest_magnitude(dataset: Dataset) -> float:
    """The largest |x| of the features (0 for an empty matrix)."""
    values = dataset.X if isinstance(dataset.X, np.ndarray) else dataset.X.data
    if values.size == 0:
        return 0.0
    return float(max(abs(np.max(values)), abs(np.min(values))))  # no |X| copy: X may be most of memory


def concatenate(datasets: list, name: str | None = None) -> Dataset:
    """The datasets one after the other (as if their files were concatenated); qids must stay contiguous, and
    either every file has qids or none has (InputError naming one of each)."""
    import scipy.sparse as sp

    with_qid = [d for d in datasets if d.has_qid]
    if with_qid and len(with_qid) < len(datasets):
        without = next(d for d in datasets if not d.has_qid)
        raise InputError(f"{with_qid[0].path} has qid:<id> on its lines and {without.path} has none: the files "
                         "cannot be read as one", without.path)
    if any(d.columns is not None for d in datasets):
        return _concatenate_by_index(datasets, name)
    width = max(d.n_features for d in datasets)
    if all(isinstance(d.X, np.ndarray) for d in datasets):
        X = np.vstack([align(d, width).X for d in datasets])
    else:
        X = sp.vstack([align(d, width).X for d in datasets], format="csr")
    qid = np.concatenate([d.qid for d in datasets])
    line = np.concatenate([d.line for d in datasets])
    has_qid = all(d.has_qid for d in datasets)
    path = name or "+".join(d.path for d in datasets)
    qptr = group_queries(qid, line, path) if has_qid else np.array([0, len(qid)], dtype=np.int64)
    docids = Docids()
    for d in datasets:
        for doc in d.docids:
            docids.append(doc)
    docids.freeze()
    return Dataset(X, np.concatenate([d.y for d in datasets]), qid, qptr, docids, line, path, has_qid)
