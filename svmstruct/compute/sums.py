"""Sums for the oracles' numba kernels whose value does not depend on the number of threads."""
from svmstruct.compute.jit import njit


@njit(cache=True)
def sequential_sum(values):
    """sum(values) left to right. Inside a parallel=True kernel `values.sum()` becomes a parallel
    reduction whose rounding depends on the number of threads; called from there, this does not."""
    total = 0.0
    for v in values:
        total += v
    return total
