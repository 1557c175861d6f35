"""The order of documents every room shares: trec_eval's tie order (score descending, ties by docid descending)
for one query or every query of a file (the kernels: dataset.order_kernels)."""
import numpy as np

from svmstruct.compute import paths

KERNEL_ROWS = 200_000  # trec_ranking: numba's per-query sort from this many rows (make bench-startup)


def trec_order(scores: np.ndarray, docids) -> np.ndarray:
    """Indices by score descending, ties by docid descending (as trec_eval re-sorts a run).

    Docids compare by code point, which is strcmp's byte order for UTF-8.
    """
    _, docid_rank = np.unique(np.asarray(docids, dtype=str), return_inverse=True)
    return np.lexsort((-docid_rank.ravel(), -np.asarray(scores, dtype=float)))


def trec_ranking(scores, qptr, docids) -> np.ndarray:
    """Every query's rows in trec_order (a permutation of all rows, query by query): a stable sort of every query
    by score descending (numba's per query, or one numpy sort by query and score: compute.paths), then by docid in
    the queries that have tied scores, the only ones whose docids are looked at."""
    scores = np.asarray(scores, dtype=float)
    qptr = np.asarray(qptr, dtype=np.int64)
    if paths.compiled(len(scores), KERNEL_ROWS, "svmstruct.dataset.order_kernels"):
        from svmstruct.dataset.order_kernels import order_by_score

        ranking = np.empty(len(scores), dtype=np.int64)
        has_tie = np.empty(len(qptr) - 1, dtype=np.bool_)
        order_by_score(scores, qptr, ranking, has_tie)
        tied = np.flatnonzero(has_tie)
    else:
        query = np.repeat(np.arange(len(qptr) - 1), np.diff(qptr))
        ranking = np.lexsort((-scores, query))  # stable: equal scores in row order, as the kernel's mergesort
        ordered = scores[ranking]
        tied = np.unique(query[1:][(ordered[1:] == ordered[:-1]) & (query[1:] == query[:-1])])
    for q in tied.tolist():
        lo, hi = int(qptr[q]), int(qptr[q + 1])
        ranking[lo:hi] = lo + trec_order(scores[lo:hi], docids[lo:hi])
    return ranking
