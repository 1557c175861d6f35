"""SVM-multiclass (Crammer & Singer 2001 as an instance of svm_struct, svm_multiclass V2.20): one weight vector per
class, Psi(x, y) = x in the block of class y, Delta(y, ybar) = 100 [y != ybar]:

    min 1/2 sum_k |w_k|^2 + C/n sum_i xi_i   s.t.  x_i.w_{y_i} >= x_i.w_y + 100 Delta(y_i, y) - xi_i  for all y.

Examples are SVMlight lines `CLASS index:value ...`, classes 1..K (K: the largest class of the training data);
w holds the K blocks of D = the highest feature index one after the other. The most violated class of every
example comes from one product of the examples with the K blocks (cut); ties go to the smallest class."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from svmstruct.io.data import read_labelled
from svmstruct.options import Option, positive_int
from svmstruct.problems.base import SLACK, StructuredProblem

LOSS = 100.0  # svm_multiclass's Delta of a wrong class


class Examples(list):
    """[(x, y), ...] with x a 1 x D CSR row, and the whole file as one matrix X (n x D) and the classes y."""

    def __init__(self, X: sp.csr_matrix, y: np.ndarray):
        super().__init__((X[i], int(c)) for i, c in enumerate(y))
        self.X, self.y = X, y


class Multiclass(StructuredProblem):
    """SVM-multiclass: Crammer & Singer's multi-class SVM, 0/1 loss scaled by 100."""

    declared = (Option("classes", ("--classes",), "int", "the number of classes K (default: the training data's "
                       "largest class)", check=positive_int),
                Option("features", ("--features",), "int", "the number of features D (default: the training "
                       "data's highest index)", check=positive_int))

    def __init__(self, classes: int | None = None, features: int | None = None):
        super().__init__(classes=classes, features=features)

    def read(self, path: str) -> Examples:
        _, X, y = read_labelled(path, "class")
        return Examples(X, y)

    def dimension(self, examples: list) -> int:
        """K D; K and D settled from the examples when not given (and kept in the options: the model's)."""
        if self.options.get("classes") is None:
            self.options["classes"] = int(max(y for _, y in examples))
        if self.options.get("features") is None:
            self.options["features"] = int(max(x.shape[1] for x, _ in examples))
        return self.K * self.D

    @property
    def K(self) -> int:
        return int(self.options["classes"])

    @property
    def D(self) -> int:
        return int(self.options["features"])

    def _scores(self, x, w: np.ndarray) -> np.ndarray:
        """w_k.x for every class k (x's features beyond D weigh nothing)."""
        x = sp.csr_matrix(x)
        keep = x.indices < self.D
        W = w.reshape(self.K, self.D)
        return W[:, x.indices[keep]] @ x.data[keep]

    def psi(self, x, y):
        x = sp.csr_matrix(x)
        keep = x.indices < self.D
        return x.indices[keep] + (int(y) - 1) * self.D, x.data[keep]

    def loss(self, y, ybar) -> float:
        return 0.0 if int(y) == int(ybar) else LOSS

    def most_violated(self, x, y, w: np.ndarray) -> int:
        values = self._scores(x, w) + LOSS
        values[int(y) - 1] -= LOSS
        return int(np.argmax(values)) + 1

    def most_violated_slack(self, x, y, w: np.ndarray) -> int:
        s = self._scores(x, w)
        values = LOSS * (1.0 + s - s[int(y) - 1])
        values[int(y) - 1] = 0.0
        best = int(np.argmax(values))
        return best + 1 if values[best] > 0 else int(y)

    def predict(self, x, w: np.ndarray) -> int:
        return int(np.argmax(self._scores(x, w))) + 1

    def outputs(self, x):
        return range(1, self.K + 1)

    def cut(self, examples: list, w: np.ndarray, rescaling: int) -> tuple:
        """Every example at once: S = X W' (n x K), the most violated class per row, the cut as G' X."""
        X, y = (examples.X, examples.y) if isinstance(examples, Examples) else \
            (sp.vstack([sp.csr_matrix(x) for x, _ in examples], format="csr"), np.array([y for _, y in examples]))
        X = X[:, :self.D] if X.shape[1] > self.D else X
        n, rows = len(y), np.arange(len(y))
        W = w.reshape(self.K, self.D)[:, :X.shape[1]]
        S = np.asarray(X @ W.T)
        truth = y - 1
        if rescaling == SLACK:
            values = LOSS * (1.0 + S - S[rows, truth][:, None])
            values[rows, truth] = 0.0
        else:
            values = S + LOSS
            values[rows, truth] -= LOSS
        ybar = np.argmax(values, axis=1)
        wrong = ybar != truth
        if rescaling == SLACK:
            wrong &= values[rows, ybar] > 0  # no class beats the correct one's 0
        scale = np.where(wrong, LOSS if rescaling == SLACK else 1.0, 0.0)
        G = sp.csr_matrix((np.concatenate([scale, -scale]), (np.concatenate([rows, rows]),
                           np.concatenate([truth, ybar]))), shape=(n, self.K))
        blocks = np.zeros((self.K, self.D))
        blocks[:, :X.shape[1]] = np.asarray((G.T @ X).todense())
        return blocks.ravel(), LOSS * float(wrong.sum())
