"""svm_perf's loss codes (its -l numbers), shared by the loss definitions (perf.py, imported with the
registry) and the numba kernels (perf_oracles.py, loaded when a perf loss trains)."""
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
