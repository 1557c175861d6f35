"""The order of documents every room shares: trec_eval's tie order (score descending, ties by docid descending)
for one query or every query of a file, and the docid hash behind documents.Docids.hashes (numba)."""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def order_by_score(scores, qptr, ranking, tied):
    """Every query's rows by score descending, ties in row order (a stable sort per query), written to ranking
    as positions in the file; tied[q]: query q has two equal scores."""
    for q in range(qptr.shape[0] - 1):
        lo, hi = qptr[q], qptr[q + 1]
        order = np.argsort(-scores[lo:hi], kind="mergesort")
        tied[q] = False
        for r in range(hi - lo):
            ranking[lo + r] = lo + order[r]
            if r > 0 and scores[ranking[lo + r]] == scores[ranking[lo + r - 1]]:
                tied[q] = True


@njit(cache=True, nogil=True)
def fnv_hashes(blob, offsets, out):
    """documents.Docids.hashes: FNV-1a over the first 64 bytes of every docid, seeded with its length."""
    for i in range(offsets.shape[0] - 1):
        a, b = offsets[i], offsets[i + 1]
        h = np.uint64(b - a) ^ np.uint64(14695981039346656037)
        for k in range(a, min(b, a + 64)):
            h = (h ^ np.uint64(blob[k])) * np.uint64(1099511628211)
        out[i] = h


def trec_order(scores: np.ndarray, docids) -> np.ndarray:
    """Indices by score descending, ties by docid descending (as trec_eval re-sorts a run).

    Docids compare by code point, which is strcmp's byte order for UTF-8.
    """
    _, docid_rank = np.unique(np.asarray(docids, dtype=str), return_inverse=True)
    return np.lexsort((-docid_rank.ravel(), -np.asarray(scores, dtype=float)))


def trec_ranking(scores, qptr, docids) -> np.ndarray:
    """Every query's rows in trec_order (a permutation of all rows, query by query): a sort of every query
    (numba); the docids are looked at only in the queries that have tied scores."""
    scores = np.asarray(scores, dtype=float)
    ranking = np.empty(len(scores), dtype=np.int64)
    has_tie = np.empty(len(qptr) - 1, dtype=np.bool_)
    order_by_score(scores, np.asarray(qptr, dtype=np.int64), ranking, has_tie)
    tied = np.flatnonzero(has_tie)
    for q in tied.tolist():
        lo, hi = int(qptr[q]), int(qptr[q + 1])
        ranking[lo:hi] = lo + trec_order(scores[lo:hi], docids[lo:hi])
    return ranking
