"""SVM-multiclass (Crammer & Singer 2001 as an instance of svm_struct, svm_multiclass V2.20): one weight vector per
class, Psi(x, y) = x in the block of class y, Delta(y, ybar) = 100 [y != ybar] (-l 0; -l 1: (y - ybar)^2):

    min 1/2 sum_k |w_k|^2 + C/n sum_i xi_i   s.t.  x_i.w_{y_i} >= x_i.w_y + 100 Delta(y_i, y) - xi_i  for all y.

Examples are SVMlight lines `CLASS index:value ...`, classes 1..K (K: the largest class of the training data);
w holds the K blocks of D = the highest feature index one after the other. The most violated class of every
example comes from one product of the examples with the K blocks (cut); ties go to the smallest class."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from svmstruct.io.data import read_labelled
from svmstruct.options import positive_int
from svmstruct.problems.base import SLACK, Names, StructuredProblem, rows_matrix
from svmstruct.spec import Option, Problem

if TYPE_CHECKING:
    import scipy.sparse as sp

LOSS = 100.0  # svm_multiclass's Delta of a wrong class


class Examples(Sequence):
    """[(x, y), ...] with x a 1 x D CSR row, kept as the whole file's matrix X (n x D) and classes y: a row is cut
    out only when asked for (cut and dimension read X and y at once)."""

    def __init__(self, X: sp.csr_matrix, y: np.ndarray):
        import scipy.sparse as sp

        self.X, self.y = sp.csr_matrix(X), np.asarray(y)
        self._columns: tuple | None = None  # (D, X[:, :D] as float64 CSC), made once for every cut

    def columns(self, D: int) -> sp.csc_matrix:
        """X's first D columns as a float64 CSC matrix (rows sorted in each column), kept for the next call."""
        if self._columns is None or self._columns[0] != D:
            self._columns = (D, _columns(self.X, D))
        return self._columns[1]

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Examples(self.X[i], self.y[i])
        return self.X[i], int(self.y[i])


def _loss_function(value) -> str | None:
    return None if value in (0, 1) else "must be 0 (100 for a wrong class) or 1 (the squared difference of classes)"


class Multiclass(StructuredProblem):
    """SVM-multiclass: Crammer & Singer's multi-class SVM, 0/1 loss scaled by 100 (or (y - ybar)^2)."""

    declared = (Option("classes", ("--classes",), "int", "the number of classes K (default: the training data's "
                       "largest class)", check=positive_int, metavar="K"),
                Option("features", ("--features",), "int", "the number of features D (default: the training "
                       "data's highest index)", check=positive_int, metavar="D"),
                Option("loss_function", ("--loss-function",), "int", "svm_multiclass's -l: 0 100 for a wrong "
                       "class, 1 (y - ybar)^2", default=0, check=_loss_function, metavar="L"),
                Option("class_names", ("--class-names",), "str", "what classify writes for classes 1..K, a JSON "
                       "list (StructuredSVM keeps its labels here)", metavar="JSON"))

    def __init__(self, classes: int | None = None, features: int | None = None, loss_function: int = 0,
                 class_names: str | None = None):
        super().__init__(classes=classes, features=features, loss_function=loss_function, class_names=class_names)
        self.names = Names.from_option(class_names)

    def examples_of(self, X, Y=None, fit: bool = False) -> Examples:
        """scikit-learn's X (n x D: a 2-D array, a sparse matrix, a list of rows) and y (n labels of any kind: FIT
        names classes 1..K after them, in sorted order, kept in class_names)."""
        X = rows_matrix(X, "multiclass takes X as n_samples x n_features (a 2-D array or a sparse matrix)")
        if Y is None:
            return Examples(X, np.ones(X.shape[0], dtype=np.int64))
        y = np.asarray(Y)
        if y.ndim != 1 or len(y) != X.shape[0]:
            raise ValueError(f"multiclass takes y as n_samples labels, one for each of X's {X.shape[0]} rows; got "
                             f"shape {y.shape}")
        if fit:
            self.names = Names.of(y)
            self.options.update(class_names=self.names.option(), classes=len(self.names.values))
        return Examples(X, self.names.codes(y) if self.names is not None else y.astype(np.int64))

    def decoded(self, y):
        return self.names.name(y) if self.names is not None else y

    def format(self, y) -> str:
        return str(self.decoded(y))

    def tiny_examples(self, rng: np.random.Generator) -> Examples:
        """12 sparse rows of 4 features over 3 classes (or the options' K and D), values with ties."""
        import scipy.sparse as sp

        K, D = self.options.get("classes") or 3, self.options.get("features") or 4
        X = np.round(rng.normal(size=(12, D)), 1) * (rng.random((12, D)) < 0.7)
        return Examples(sp.csr_matrix(X), rng.integers(1, K + 1, size=12))

    def read(self, path: str) -> Examples:
        _, X, y = read_labelled(path, "class")
        return Examples(X, y)

    def read_all(self, paths: list) -> Examples:
        import scipy.sparse as sp

        parts = [self.read(path) for path in paths]
        width = max(part.X.shape[1] for part in parts)
        X = sp.vstack([sp.csr_matrix((p.X.data, p.X.indices, p.X.indptr), shape=(p.X.shape[0], width))
                       for p in parts], format="csr")
        return Examples(X, np.concatenate([part.y for part in parts]))

    def dimension(self, examples: Sequence) -> int:
        """K D; K and D settled from the examples when not given (and kept in the options: the model's)."""
        if not isinstance(examples, Examples):
            examples = Examples(_stacked(examples), np.array([y for _, y in examples]))
        classes, features = int(examples.y.max()), int(examples.X.shape[1])
        if examples.y.min() < 1:
            raise ValueError("multiclass's classes are 1, 2, ..., K (svm_multiclass's): StructuredSVM names classes "
                             f"of any kind, got class {examples.y.min()}")
        if self.options.get("classes") is None:
            self.options["classes"] = classes
        if self.options.get("features") is None:
            self.options["features"] = features
        return self.K * self.D

    @property
    def K(self) -> int:
        return int(self.options["classes"])

    @property
    def D(self) -> int:
        return int(self.options["features"])

    def _scores(self, x, w: np.ndarray) -> np.ndarray:
        """w_k.x for every class k (x's features beyond D weigh nothing), as _all_scores adds them."""
        return self._all_scores(_stacked([(x, None)]), w)[0]

    def _all_scores(self, X, w: np.ndarray) -> np.ndarray:
        """S = X W' (n x K) of CSR rows X: scipy's product adds each row's terms in order, as the cut's kernel does
        (class_kernels.class_scores), so a class scores the same for prediction, training and one example alone."""
        X = X[:, :self.D] if X.shape[1] > self.D else X
        WT = np.ascontiguousarray(w.reshape(self.K, self.D)[:, :X.shape[1]].T)
        return np.asarray(X.astype(np.float64) @ WT)

    def psi(self, x, y):
        import scipy.sparse as sp

        x = sp.csr_matrix(x)
        keep = x.indices < self.D
        return x.indices[keep] + (int(y) - 1) * self.D, x.data[keep]

    def _losses(self, truth: np.ndarray) -> np.ndarray:
        """Delta(y_i, c) for every example (0-based classes truth) and class c, an n x K matrix."""
        classes = np.arange(self.K)
        if int(self.options.get("loss_function") or 0) == 1:
            return (classes[None, :] - truth[:, None]).astype(np.float64) ** 2
        return np.where(classes[None, :] == truth[:, None], 0.0, LOSS)

    def loss(self, y, ybar) -> float:
        return float(self._losses(np.array([int(y) - 1]))[0, int(ybar) - 1])

    def most_violated(self, x, y, w: np.ndarray) -> int:
        values = self._scores(x, w) + self._losses(np.array([int(y) - 1]))[0]
        return int(np.argmax(values)) + 1

    def most_violated_slack(self, x, y, w: np.ndarray) -> int:
        s = self._scores(x, w)
        values = self._losses(np.array([int(y) - 1]))[0] * (1.0 + s - s[int(y) - 1])
        best = int(np.argmax(values))
        return best + 1 if values[best] > 0 else int(y)

    def predict(self, x, w: np.ndarray) -> int:
        return int(np.argmax(self._scores(x, w))) + 1

    def predict_all(self, examples: Sequence, w: np.ndarray) -> list:
        """Every example's class from one product S = X W' (ties: the smallest class)."""
        return (np.argmax(self._all_scores(_stacked(examples), w), axis=1) + 1).tolist()

    def outputs(self, x):
        return range(1, self.K + 1)

    def feature_rows(self, examples: Sequence):
        return _stacked(examples)

    def with_rows(self, examples: Sequence, rows) -> Examples:
        import scipy.sparse as sp

        labels = examples.y if isinstance(examples, Examples) else np.array([y for _, y in examples])
        return Examples(sp.csr_matrix(rows), labels)

    def cut(self, examples: Sequence, w: np.ndarray, rescaling: int) -> tuple:
        """Every example at once: S = X W' (n x K), the most violated class per row, the cut as G' X."""

        from svmstruct.compute import threads
        from svmstruct.problems import class_kernels

        if not isinstance(examples, Examples):
            examples = Examples(_stacked(examples), np.array([y for _, y in examples]))
        X, y = examples.X, examples.y
        X = X[:, :self.D] if X.shape[1] > self.D else X
        n, rows = len(y), np.arange(len(y))
        X = X if X.dtype == np.float64 else X.astype(np.float64)
        WT = np.ascontiguousarray(w.reshape(self.K, self.D)[:, :X.shape[1]].T)
        S = np.empty((n, self.K))
        with threads.for_work(X.nnz * self.K * class_kernels.NS_PER_MADD * 1e-9):
            class_kernels.class_scores(X.indptr, X.indices, X.data, WT, S)
        truth = y - 1
        losses = self._losses(truth)
        if rescaling == SLACK:
            values = losses * (1.0 + S - S[rows, truth][:, None])
        else:
            values = S + losses
        ybar = np.argmax(values, axis=1)
        wrong = ybar != truth
        if rescaling == SLACK:
            wrong &= values[rows, ybar] > 0  # no class beats the correct one's 0
        delta = losses[rows, ybar]
        scale = np.where(wrong, delta if rescaling == SLACK else 1.0, 0.0)
        blocks = np.zeros((self.K, self.D))  # +scale x_i in the true class's block, -scale x_i in ybar_i's
        columns = examples.columns(self.D)
        with threads.for_work(X.nnz * 2 * class_kernels.NS_PER_MADD * 1e-9):
            class_kernels.cut_blocks(columns.indptr, columns.indices, columns.data,
                                     class_kernels.column_spans(columns.indptr),
                                     np.ascontiguousarray(truth, dtype=np.int64), ybar.astype(np.int64), scale, blocks)
        return blocks.ravel(), float(np.sum(np.where(wrong, delta, 0.0)))


def _stacked(examples: Sequence) -> sp.csr_matrix:
    """The rows x of examples [(x, y), ...] as one CSR matrix (an Examples' own X)."""
    import scipy.sparse as sp

    if isinstance(examples, Examples):
        return examples.X
    width = max((sp.csr_matrix(x).shape[1] for x, _ in examples), default=0)
    return sp.vstack([sp.csr_matrix(x, shape=(1, width)) if sp.issparse(x) else
                      sp.csr_matrix(np.asarray(x, dtype=np.float64).reshape(1, -1), shape=(1, width))
                      for x, _ in examples], format="csr")


def _columns(X: sp.csr_matrix, D: int) -> sp.csc_matrix:
    import scipy.sparse as sp

    X = X[:, :D] if X.shape[1] > D else X
    columns = sp.csc_matrix(X, dtype=np.float64)
    columns.sort_indices()
    return columns


PROBLEMS = [Problem.of(Multiclass, ("multiclass",))]  # the registry lists it (svmstruct.losses)
