"""The loss families, one module each with its numba oracles beside it; svmstruct.registry lists them."""
