"""The pairs of a ranking that its labels order one way or the other (what svm_rank's pairs losses count), in
O(n log L) time and O(n) memory: one sweep down the ranking with a Fenwick tree over the L distinct labels
(Joachims 2006 counts swapped pairs the same way)."""
import numpy as np

from svmstruct.compute.jit import njit


@njit(cache=True)
def _sweep(levels, L):
    """(correct, swapped) of labels' dense levels 0..L-1 in ranked order: pairs of positions i < j with
    levels[i] > levels[j] (correct) and levels[i] < levels[j] (swapped)."""
    tree = np.zeros(L + 1, dtype=np.int64)
    correct = 0
    swapped = 0
    for j in range(levels.shape[0]):
        level = levels[j] + 1
        at_most = 0  # documents above j with a level <= this one
        r = level
        while r > 0:
            at_most += tree[r]
            r -= r & -r
        below = 0  # ... with a level < this one
        r = level - 1
        while r > 0:
            below += tree[r]
            r -= r & -r
        correct += j - at_most
        swapped += below
        r = level
        while r <= L:
            tree[r] += 1
            r += r & -r
    return correct, swapped


def ordered_pairs(ranked: np.ndarray) -> tuple:
    """(correct, swapped) pairs of a ranking's labels (RANKED: the labels in ranked order)."""
    values, levels = np.unique(np.asarray(ranked, dtype=np.float64), return_inverse=True)
    correct, swapped = _sweep(levels.astype(np.int64).ravel(), len(values))
    return int(correct), int(swapped)
