"""The state of the cutting-plane loop (train.optimise) between two iterations, as one value: the working set
of constraints, the QP with its warm start (qp.DualQP), the best point w_b and the QP's solution w_t with the
oracle's slack at each, the w of the last latent re-imputation, and the counters.

It has one way to be saved (to_arrays: what svmstruct.train.checkpoint writes) and one way to be restored
(from_arrays: a checkpoint's arrays for the same problem, resumed as if the run had not stopped).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from svmstruct.compute import threads
from svmstruct.errors import InputError
from svmstruct.train.qp import DualQP


class WorkingSet:
    """The constraints (a_k, b_k) found so far, their Gram matrix and how long each has been inactive.

    Rows live in preallocated buffers that double when full, so adding a constraint costs O(m d).
    """

    def __init__(self, dim: int, capacity: int = 64):
        self._A = np.zeros((capacity, dim))
        self._G = np.zeros((capacity, capacity))
        self.b = np.zeros(0)
        self.idle = np.zeros(0, dtype=np.int64)

    @property
    def m(self) -> int:
        return len(self.b)

    @property
    def A(self) -> np.ndarray:
        return self._A[: self.m]

    @property
    def G(self) -> np.ndarray:
        return self._G[: self.m, : self.m]

    def add(self, a: np.ndarray, b: float) -> None:
        """Append the constraint (a, b); a's products with the others fill the new row and column of G."""
        m = self.m
        g = self._products(a)
        if m == len(self._G):
            G = np.zeros((2 * m, 2 * m))
            G[:m, :m] = self._G
            self._G = G
        self._store(a)
        self._G[m, :m] = g
        self._G[:m, m] = g
        self._G[m, m] = a @ a
        self.b = np.append(self.b, b)
        self.idle = np.append(self.idle, 0)

    def _products(self, a: np.ndarray) -> np.ndarray:
        """a_k . a for every constraint k."""
        return self.A @ a

    def _store(self, a: np.ndarray) -> None:
        """Keep a as the next row (the buffer doubles when full)."""
        m = self.m
        if m == len(self._A):
            A = np.zeros((2 * m, self._A.shape[1]))
            A[:m] = self._A
            self._A = A
        self._A[m] = a

    def shift(self, delta: np.ndarray) -> None:
        """Add delta to every constraint vector a_k (G updated in O(m d), not rebuilt)."""
        g = self._products(delta)
        m = self.m
        self._G[:m, :m] += g[:, None] + g[None, :] + float(delta @ delta)
        self._shift_rows(delta)

    def _shift_rows(self, delta: np.ndarray) -> None:
        self._A[: self.m] += delta

    def keep(self, mask: np.ndarray) -> None:
        k = int(mask.sum())
        self._A[:k] = self.A[mask]
        self._G[:k, :k] = self.G[np.ix_(mask, mask)]
        self.b, self.idle = self.b[mask], self.idle[mask]

    def combination(self, alpha: np.ndarray) -> np.ndarray:
        """sum_k alpha_k a_k (the QP's w)."""
        return alpha @ self.A

    def slack(self, w: np.ndarray) -> float:
        """The slack the constraints ask at w: max(0, max_k b_k - a_k . w)."""
        return max(0.0, float(np.max(self.b - self._products(w), initial=0.0)))


class WideWorkingSet(WorkingSet):
    """The working set of a wide problem (SVM-multiclass on text: a constraint of millions of weights): each
    constraint in arrays of its own, so that adding one never copies the others (a buffer that doubles holds three
    times the constraints while it grows), kept sparse (its nonzero weights and their indices) where that is smaller.
    The same products, a constraint at a time."""

    WIDTH = 1 << 16  # from this width of w on (64 constraints: 32 MB; a buffer that doubles holds three times that)

    def __init__(self, dim: int, capacity: int = 64):
        super().__init__(0, capacity)
        self.dim = dim
        self.rows: list = []  # (indices or None for a dense row, values)

    @property
    def A(self) -> np.ndarray:
        out = np.zeros((len(self.rows), self.dim))
        for k, (indices, values) in enumerate(self.rows):
            if indices is None:
                out[k] = values
            else:
                out[k, indices] = values
        return out

    def _products(self, a: np.ndarray) -> np.ndarray:
        from svmstruct.train import row_kernels

        a = np.ascontiguousarray(a, dtype=np.float64)
        out = np.empty(len(self.rows))
        for k, (indices, values) in enumerate(self.rows):
            if indices is None:
                out[k] = values @ a
            else:
                with threads.for_work(len(values) * row_kernels.NS_PER_ENTRY * 1e-9):
                    out[k] = row_kernels.sparse_dot(indices, values, a)
        return out

    def _store(self, a: np.ndarray) -> None:
        from svmstruct.train import row_kernels

        indices, values = row_kernels.nonzeros(np.ascontiguousarray(a, dtype=np.float64))
        sparse = 3 * len(indices) < 2 * len(a)  # int32 index + double value against a double per weight
        self.rows.append((indices, values) if sparse else (None, np.array(a, dtype=np.float64)))

    def _shift_rows(self, delta: np.ndarray) -> None:
        self.rows = [(None, row) for row in self.A + delta]

    def keep(self, mask: np.ndarray) -> None:
        k = int(mask.sum())
        self.rows = [row for row, kept in zip(self.rows, mask) if kept]
        self._G[:k, :k] = self.G[np.ix_(mask, mask)]
        self.b, self.idle = self.b[mask], self.idle[mask]

    def combination(self, alpha: np.ndarray) -> np.ndarray:
        from svmstruct.train import row_kernels

        w = np.zeros(self.dim)
        for weight, (indices, values) in zip(alpha, self.rows):
            if not weight:
                continue
            with threads.for_work(len(values) * row_kernels.NS_PER_ENTRY * 1e-9):
                if indices is None:
                    row_kernels.dense_add(values, float(weight), w)
                else:
                    row_kernels.sparse_add(indices, values, float(weight), w)
        return w


def working_set(dim: int, capacity: int = 64) -> WorkingSet:
    """The working set for w of width dim: in one buffer, or a wide problem's row by row."""
    return WideWorkingSet(dim, capacity) if dim >= WideWorkingSet.WIDTH else WorkingSet(dim, capacity)


# to_arrays' fields: their shapes in terms of m (constraints) and d (the width of w), "" for a scalar, "*" any
# length; svmstruct.train.checkpoint checks a file against this before from_arrays sees it
FIELDS = {"n": "", "dim": "", "C": "", "epsilon": "", "A": "m,d", "b": "m", "idle": "m", "alpha": "m",
          "dual": "", "w_best": "d", "w_t": "d", "w_imputed": "d", "value_best": "", "value_t": "",
          "value_zero": "", "primal": "", "cuts": "*", "iteration": "", "added": "", "stalled": "", "outer": "",
          "outer_primal": "", "seconds": "", "kept": "*"}
OPTIONAL = ("w_imputed", "kept")  # None in the state: absent from the arrays


@dataclass
class LoopState:
    n: int  # examples: the 1/n of the 1-slack constraint
    dim: int  # the width of w
    C: float
    epsilon: float  # scaled by the problem's epsilon_scale
    working_set: WorkingSet
    w_best: np.ndarray  # the best point so far (w_b)
    w_t: np.ndarray  # the QP's solution
    value_best: float  # the oracle's slack at w_b (the objective there is 1/2|w_b|^2 + C max(0, value_best))
    value_t: float  # ... at w_t
    value_zero: float  # ... at w = 0, where every run starts
    primal: float  # the objective at w_b
    qp: DualQP = field(default_factory=DualQP)  # the working set's QP: its multipliers, its warm start
    dual: float = -np.inf  # the QP's dual objective
    w_imputed: np.ndarray | None = None  # w_b at the last re-imputation of a latent target
    cuts: list = field(default_factory=list)  # steps of [w_b, w_t] whose answers become the next cutting planes
    iteration: int = 0
    added: int = 0  # constraints ever added
    stalled: int = 0  # iterations in a row without progress
    outer: int = 0  # re-imputations of a latent target
    outer_primal: float = np.inf  # the objective at the last re-imputation
    seconds: float = 0.0  # training time before this process (a resumed run)
    resumed: bool = False  # restored from a checkpoint: the data must be checked against it
    kept: np.ndarray | None = None  # the outputs a problem keeps from its oracle's answers (TrainingProblem.kept_state)

    @classmethod
    def at_zero(cls, n: int, dim: int, C: float, epsilon: float, value_zero: float) -> LoopState:
        """The start of every run: w_b = w_t = 0, whose slack the oracle gave, the first cutting plane there."""
        zero = np.zeros(dim)
        return cls(n, dim, C, epsilon, working_set(dim), zero, zero, value_zero, value_zero, value_zero,
                   C * max(0.0, value_zero), cuts=[0.0])

    def to_arrays(self, seconds: float) -> dict:
        """The state as named arrays (FIELDS; None for an absent optional one), `seconds` spent so far."""
        ws = self.working_set
        return dict(n=self.n, dim=self.dim, C=self.C, epsilon=self.epsilon, A=ws.A, b=ws.b, idle=ws.idle,
                    alpha=self.qp.alpha, dual=self.dual, w_best=self.w_best, w_t=self.w_t,
                    w_imputed=self.w_imputed, value_best=self.value_best, value_t=self.value_t,
                    value_zero=self.value_zero, primal=self.primal, cuts=np.asarray(self.cuts, dtype=float),
                    iteration=self.iteration, added=self.added, stalled=self.stalled, outer=self.outer,
                    outer_primal=self.outer_primal, seconds=seconds, kept=self.kept)

    @classmethod
    def from_arrays(cls, arrays: dict, n: int, dim: int, C: float, epsilon: float) -> LoopState:
        """The state to_arrays gave, for a problem of n examples and width dim trained with C and epsilon
        (InputError if the arrays are another problem's)."""
        saved = (int(arrays["n"]), int(arrays["dim"]), float(arrays["C"]), float(arrays["epsilon"]))
        if saved != (n, dim, float(C), float(epsilon)):
            raise InputError(f"the checkpoint is of another training problem (n, width, C, epsilon {saved} here "
                             f"{(n, dim, float(C), float(epsilon))})")
        ws = WorkingSet(dim, max(1, len(arrays["b"])))
        for a, b in zip(arrays["A"], arrays["b"]):
            ws.add(a, float(b))
        ws.idle = np.asarray(arrays["idle"], dtype=np.int64)
        return cls(n, dim, C, epsilon, ws, arrays["w_best"], arrays["w_t"], float(arrays["value_best"]),
                   float(arrays["value_t"]), float(arrays["value_zero"]), float(arrays["primal"]),
                   qp=DualQP(arrays["alpha"]), dual=float(arrays["dual"]),
                   w_imputed=arrays["w_imputed"], cuts=[float(step) for step in arrays["cuts"]],
                   iteration=int(arrays["iteration"]), added=int(arrays["added"]), stalled=int(arrays["stalled"]),
                   outer=int(arrays["outer"]), outer_primal=float(arrays["outer_primal"]),
                   seconds=float(arrays["seconds"]), resumed=True, kept=arrays.get("kept"))
