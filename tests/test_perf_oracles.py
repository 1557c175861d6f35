"""svm_perf's ROCArea oracle on hand-computed cases (every svm_perf oracle is checked against exhaustive
enumeration of its labelings in tests/test_loss_contract.py)."""
import numpy as np
import pytest

from svmstruct.losses.perf_oracles import rocarea_most_violated


def test_rocarea_counts_margin_ties_as_not_swapped():
    # s_pos - s_neg == 1 exactly: hinge 0, the pair is not swapped and contributes nothing
    dcoef, delta = rocarea_most_violated(np.array([1.0, -1.0]), np.array([1.0, 0.0]))
    assert delta == 0.0 and not dcoef.any()


def test_rocarea_dcoef_counts_swaps_per_document():
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0])
    s = np.array([3.0, 0.0, 0.5, -2.0, 2.5])
    dcoef, delta = rocarea_most_violated(y, s)
    unit = 100.0 / 6
    # positive 0 (s=3): swapped with neg s=2.5 only; positive 1 (s=0): with 0.5 and 2.5 (and not -2)
    np.testing.assert_allclose(dcoef, [unit, 2 * unit, -unit, 0.0, -2 * unit])
    assert delta == pytest.approx(3 * unit)
