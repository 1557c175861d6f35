"""The cutting-plane trainer's working set."""
import numpy as np

from svmstruct import train


def test_working_set_shift_keeps_the_gram_matrix_exact():
    rng = np.random.default_rng(0)
    ws = train._WorkingSet(dim=7, capacity=2)
    for _ in range(5):  # grows past its capacity
        ws.add(rng.normal(size=7), float(rng.random()))
    delta = rng.normal(size=7)
    A = ws.A.copy()
    ws.shift(delta)
    assert np.allclose(ws.A, A + delta)
    assert np.allclose(ws.G, ws.A @ ws.A.T, rtol=1e-12, atol=1e-12)
    ws.keep(np.array([True, False, True, True, False]))
    assert np.allclose(ws.G, ws.A @ ws.A.T, rtol=1e-12, atol=1e-12)
