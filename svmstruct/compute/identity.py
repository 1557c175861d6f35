"""The design matrix of a structured problem, which is the identity (compute.products hands vectors through it)."""


class Identity:
    """The identity design of a structured problem (svmstruct.problems.base.training_problem): its scores are w and
    X' c is c, so the products return the vector they are given, without a dim x dim matrix to walk or a copy of
    a million weights (the training loop never writes into a point or a cut it holds)."""

    def __init__(self, dim: int):
        self.shape = (dim, dim)
