"""The design matrix of a structured problem, which is the identity (compute.products copies through it)."""


class Identity:
    """The identity design of a structured problem (svmstruct.problems.base.training_problem): its scores are w and
    X' c is c, so the products copy (adding 0.0, as the product with a 1.0 would: -0.0 becomes 0.0) without a
    dim x dim matrix to walk."""

    def __init__(self, dim: int):
        self.shape = (dim, dim)
