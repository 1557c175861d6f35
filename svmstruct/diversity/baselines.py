"""The baselines of Yue & Joachims 2008 (section 6): unweighted word coverage, Essential Pages
(Swaminathan et al. 2008) and random selection."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from svmstruct.diversity.features import FeatureConfig, split_columns
from svmstruct.errors import InputError


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
    chosen: list[int] = []
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
    chosen: list[int] = []
    for _ in range(min(K, covers.shape[0])):
        gains = (covers & ~covered).sum(axis=1).astype(float)
        gains[chosen] = -np.inf
        d = int(np.argmax(gains))
        chosen.append(d)
        covered |= covers[d]
    return chosen


BASELINES = ("unweighted", "essential-pages", "random")


def baseline(data, method: str, K: int, config: FeatureConfig, seed: int = 0) -> list:
    """The paper's baselines (section 6) on every candidate set: [(qid, [row indices])] of K documents
    chosen by unweighted word coverage, Essential Pages or at random (numpy seed). A word's term
    frequency is its body plus title count; document features are not words."""
    if not data.has_qid:
        raise InputError("diversity data needs qid:<candidate set> on every line", data.path)
    rng = np.random.default_rng(seed)
    out = []
    for lo, hi in zip(data.qptr[:-1], data.qptr[1:]):
        lo, hi = int(lo), int(hi)
        body, titles = split_columns(data.X[lo:hi], config)
        words = body if titles is None else body + titles
        if method == "unweighted":
            rows = unweighted_coverage(words, K)
        elif method == "essential-pages":
            rows = essential_pages(words, K)
        elif method == "random":
            rows = [int(r) for r in rng.choice(hi - lo, size=min(K, hi - lo), replace=False)]
        else:
            raise InputError(f"unknown baseline '{method}' (one of {', '.join(BASELINES)})")
        out.append((int(data.qid[lo]), [lo + int(r) for r in rows]))
    return out
