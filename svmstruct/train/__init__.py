"""Training: the problem a loss hands the trainer, the 1-slack cutting-plane loop, its state and checkpoints,
the dual QP, the line search, the oracle evaluator, matrix-vector products, normalisation, and the Dask source."""
