"""numba kernels of dataset.ranking and dataset.documents: every query's order by score and the docid hash."""
import numpy as np

from svmstruct.compute.jit import njit


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
