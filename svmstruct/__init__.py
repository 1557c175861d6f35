"""svmstruct: structural SVMs trained with the 1-slack cutting-plane algorithm."""

__version__ = "0.1.0"
