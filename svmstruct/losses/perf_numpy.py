"""numpy twin of svmstruct.losses.perf_oracles for the error rate on small training sets (at most
svmstruct.small.DOCUMENTS): the same dcoef and Delta to the bit (tests/test_small_inputs.py), without loading numba.

Error rate (Joachims 2005): per example of N documents, ybar_i = -y_i iff y_i s_i < 1; dcoef_i = (100/N) y_i
there, and Delta = 100/N added once per such document, left to right as the kernel adds it.
"""
from __future__ import annotations

import numpy as np


def errorrate_examples(y: np.ndarray, s: np.ndarray, qptr: np.ndarray):
    """perf_oracles.examples_most_violated(y, s, qptr, ERRORRATE, ...): (dcoef, deltas, used)."""
    sizes = np.diff(qptr)
    with np.errstate(divide="ignore"):
        unit = 100.0 / sizes.astype(np.float64)
    violated = y * s < 1.0
    dcoef = np.where(violated, np.repeat(unit, sizes) * y, 0.0)
    counts = np.bincount(np.repeat(np.arange(len(sizes)), sizes)[violated], minlength=len(sizes))
    deltas = np.array([np.cumsum(np.full(k, u))[-1] if k else 0.0 for k, u in zip(counts.tolist(), unit.tolist())])
    return dcoef, deltas, np.ones(len(sizes), dtype=bool)
