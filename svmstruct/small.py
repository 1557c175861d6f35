"""The limits under which an input takes the numpy paths — svmstruct.quick's readers, sparse_ops' products, the
losses' *_numpy oracles — which load neither numba, scipy nor osqp (~0.45 s and 130 MB before the first byte)
and give the numba paths' results to the bit. In one place, so that the warm-up, which must compile the
kernels, and the tests that compare both paths can send tiny inputs the numba way (numba_paths).
Files are read the numpy way at about 35 ms a MB (numba's tokenizer: ~1 ms a MB, after loading numba).
"""
from __future__ import annotations

import contextlib

CLASSIFY_BYTES = 1 << 21  # classify scores a plain file up to this size (MQ2008 S5, 1.8 MB: 0.16 s whole process)
LABELS_BYTES = 1 << 22  # eval reads labels, qids and docids of a plain file up to this size
TRAINING_BYTES = 1 << 23  # learn reads a plain file it stores dense up to this size (a 5.9 MB MQ2008 fold: 0.2 s)
DOCUMENTS = 20_000  # the pairs and error-rate oracles in numpy on training sets up to this size
VALUES = 1 << 20  # products with a dense X of up to this many values in numpy (~1 ms each at the limit)
MAP_QUERIES = 16  # SVM-map's oracle in numpy, a query at a time, up to this many queries (~130 µs a query a call)

_LIMITS = ("CLASSIFY_BYTES", "LABELS_BYTES", "TRAINING_BYTES", "DOCUMENTS", "VALUES", "MAP_QUERIES")


def use_numba_paths() -> None:
    """Every input takes the numba paths from now on (no input is this small: the limits are -1), in a process
    that has loaded numba and its kernels anyway (svmstruct.resident)."""
    globals().update(dict.fromkeys(_LIMITS, -1))


@contextlib.contextmanager
def numba_paths():
    """Every input takes the numba paths inside the block."""
    kept = {name: globals()[name] for name in _LIMITS}
    use_numba_paths()
    try:
        yield
    finally:
        globals().update(kept)
