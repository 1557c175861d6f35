"""Evaluation: the measures (trec_eval's and the papers'), many queries at once, the per-query sort in numba, and
the tables and comparisons of `svmstruct eval`."""
