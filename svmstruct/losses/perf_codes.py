"""svm_perf's loss codes (its -l numbers) and the examples each loss is defined on, shared by the loss
definitions (perf.py, imported with the registry) and the numba kernels (perf_oracles.py, loaded when a perf
loss trains, which jits the two functions below)."""
# contingency-table losses (svm_perf's "threshold metrics")
ZEROONE = 0
FBETA = 1
PRBEP = 3
PREC_K = 4
REC_K = 5
# the others
ERRORRATE = 2
ROCAREA = 10
AVGPREC = 11


def needs_positives(code: int) -> bool:
    """The loss is undefined on an example without a positive (also jitted for the kernels)."""
    return code != ZEROONE and code != ERRORRATE


def needs_negatives(code: int) -> bool:
    """The loss is undefined on an example without a negative."""
    return code == ROCAREA or code == AVGPREC
