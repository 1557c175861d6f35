"""The 1-slack cutting-plane algorithm with margin rescaling (Joachims, Finley & Yu 2009, Algorithm 4).

    min_w,xi  1/2 |w|^2 + C xi   s.t.  w . a(ybar) >= b(ybar) - xi  for every joint output ybar,

with a(ybar) = (1/n) sum_i [Psi(x_i, y_i) - Psi(x_i, ybar_i)] = X' dcoef / n and
b(ybar) = (1/n) sum_i Delta(y_i, ybar_i). Each iteration asks the loss's oracle for the most violated
joint output at the current w, adds it to the working set and re-solves the dual QP (qp.solve_dual,
warm-started). It stops when that constraint is violated by at most epsilon beyond the working set's
slack, as svm_struct does; the primal objective printed as `pval` is 1/2|w|^2 + C * xi_global with the
slack of the most violated constraint at the final w (svm_struct's convention).

Latent targets (problem.latent_target, e.g. DORM's ideal ranking whose order inside a grade is free):
the concave-convex procedure of Yu & Joachims (2009). When the cutting-plane loop has converged for
the current target, the target is re-imputed at w (the correct output most compatible with w); if it
changed, every constraint of the working set shifts by the same vector X'(t_new - t_old)/n (a
constraint is Psi(target) - Psi(ybar)), the QP is re-solved and the loop goes on. The objective never
increases between these steps; training ends when the imputation no longer changes, when an outer step
gains less than C * epsilon, or after MAX_OUTER steps.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from svmstruct import qp, sparse_ops
from svmstruct.errors import NumericalError
from svmstruct.problem import TrainingProblem

# svm_struct drops constraints that stayed inactive this long (remove_inactive_constraints(..., 50)).
INACTIVE_LIMIT = 50
# outer (CCCP) steps of a latent-target problem
MAX_OUTER = 100
OUTER_TOLERANCE = 1e-6
# iterations in a row without progress (see train) before giving up
STALL_LIMIT = 10


@dataclass
class TrainResult:
    w: np.ndarray  # weights over the columns of the problem's X (bias column included)
    primal: float  # 1/2 |w|^2 + C xi at the returned w (pval)
    dual: float  # dual objective of the last QP (dval)
    xi: float  # global slack at w
    iterations: int
    constraints: int  # in the final working set
    total_constraints: int  # ever added
    converged: bool
    seconds: float
    history: list = field(default_factory=list)
    outer_steps: int = 0  # re-imputations of a latent target (0 for ordinary problems)
    status: str = "converged"  # converged | iteration limit | stalled


class _WorkingSet:
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
        m = self.m
        if m == len(self._A):
            A = np.zeros((2 * m, self._A.shape[1]))
            A[:m] = self._A
            G = np.zeros((2 * m, 2 * m))
            G[:m, :m] = self._G
            self._A, self._G = A, G
        g = self.A @ a
        self._A[m] = a
        self._G[m, :m] = g
        self._G[:m, m] = g
        self._G[m, m] = a @ a
        self.b = np.append(self.b, b)
        self.idle = np.append(self.idle, 0)

    def shift(self, delta: np.ndarray) -> None:
        """Add delta to every constraint vector a_k (G updated in O(m d), not rebuilt)."""
        g = self.A @ delta
        m = self.m
        self._G[:m, :m] += g[:, None] + g[None, :] + float(delta @ delta)
        self._A[:m] += delta

    def keep(self, mask: np.ndarray) -> None:
        k = int(mask.sum())
        self._A[:k] = self.A[mask]
        self._G[:k, :k] = self.G[np.ix_(mask, mask)]
        self.b, self.idle = self.b[mask], self.idle[mask]


def train(
    problem: TrainingProblem,
    C: float,
    epsilon: float,
    max_iterations: int = 100000,
    progress: Callable[[dict], None] | None = None,
) -> TrainResult:
    """Train w for `problem` with regularisation C; epsilon in the loss's units (times problem.epsilon_scale).

    The run is `converged` only when the certified gap (primal at w minus the dual of the QP) is within
    C * epsilon. When STALL_LIMIT iterations in a row make no progress (no violated constraint but a gap
    above that, or violated constraints that do not raise the dual: round-off on badly scaled data or a
    huge C), it gives up with status `stalled`.
    Raises NumericalError when a constraint or the QP cannot be represented in floating point.
    """
    start = time.perf_counter()
    X, n = problem.X, problem.n
    eps = epsilon * problem.epsilon_scale
    dim = X.shape[1]
    w = np.zeros(dim)
    ws = _WorkingSet(dim)
    alpha = np.zeros(0)
    duals = None
    dual = 0.0
    added = 0
    history = []
    status = "iteration limit"
    iteration = 0
    xi_global = 0.0
    stalled = 0
    best_dual = -np.inf
    shift = np.zeros(X.shape[0]) if problem.latent_target is not None else None
    outer, outer_primal = 0, np.inf

    def solve(alpha0, y0):
        sol = qp.solve_dual(ws.G, ws.b, C, alpha0, y0)
        w = sol.alpha @ ws.A
        return sol.alpha, sol.y, float(sol.alpha @ ws.b) - 0.5 * float(w @ w), w

    while iteration < max_iterations:
        iteration += 1
        scores = sparse_ops.matvec(X, w)
        dcoef, delta_sum = problem.most_violated(scores)
        if shift is not None:
            dcoef = dcoef + shift
        a = sparse_ops.rmatvec(X, dcoef) / n
        b = delta_sum / n
        _check_finite(a, b)
        xi_global = max(0.0, b - float(dcoef @ scores) / n)
        xi_ws = max(0.0, float(np.max(ws.b - ws.A @ w))) if len(ws.b) else 0.0
        violation = xi_global - xi_ws
        primal = 0.5 * float(w @ w) + C * xi_global
        row = dict(iteration=iteration, violation=violation, primal=primal, dual=dual,
                   constraints=len(ws.b), seconds=time.perf_counter() - start)
        history.append(row)
        if progress:
            progress(row)
        certified = primal - dual <= C * eps * (1 + 1e-6) + 1e-12 * abs(primal)
        if violation <= eps and certified:
            if shift is None or outer >= MAX_OUTER or outer_primal - primal <= OUTER_TOLERANCE * C * eps:
                status = "converged"
                break
            assert problem.latent_target is not None
            new_shift = problem.latent_target(scores)
            if np.array_equal(new_shift, shift):
                status = "converged"
                break
            outer += 1
            outer_primal = primal
            ws.shift(sparse_ops.rmatvec(X, new_shift - shift) / n)
            shift = new_shift
            alpha, duals, dual, w = solve(alpha, duals)
            best_dual = -np.inf  # a new target is a new QP: its dual starts afresh
            continue
        # no violated constraint yet no certified gap, or violated constraints that no longer raise the dual:
        # the QP has lost precision (features or C too large for double precision)
        progress_made = violation > eps and dual > best_dual + 1e-12 * abs(best_dual)
        stalled = 0 if progress_made or iteration == 1 else stalled + 1
        best_dual = max(best_dual, dual)
        if stalled >= STALL_LIMIT:
            status = "stalled"
            break
        if iteration == max_iterations:
            break
        ws.add(a, b)
        added += 1
        alpha0 = np.append(alpha, 0.0)
        y0 = None if duals is None else np.concatenate([duals[:-1], [0.0], duals[-1:]])
        alpha, duals, dual, w = solve(alpha0, y0)
        # inactive: no weight relative to the largest (a scale-free test: on data scaled by 1e6 every alpha is ~1e-12)
        ws.idle = np.where(alpha > 1e-12 * float(alpha.max(initial=0.0)), 0, ws.idle + 1)
        if iteration % INACTIVE_LIMIT == 0 and np.any(ws.idle >= INACTIVE_LIMIT):
            keep = ws.idle < INACTIVE_LIMIT
            ws.keep(keep)
            alpha = alpha[keep]
            duals = np.concatenate([duals[:-1][keep], duals[-1:]])
            w = alpha @ ws.A
            dual = float(alpha @ ws.b) - 0.5 * float(w @ w)
    return TrainResult(
        w=w,
        primal=0.5 * float(w @ w) + C * xi_global,
        dual=dual,
        xi=xi_global,
        iterations=iteration,
        constraints=len(ws.b),
        total_constraints=added,
        converged=status == "converged",
        seconds=time.perf_counter() - start,
        history=history,
        outer_steps=outer,
        status=status,
    )


def _check_finite(a: np.ndarray, b: float) -> None:
    """A constraint whose vector or squared norm overflows cannot enter the QP: say so instead of
    handing NaN to the solver (which LAPACK can spin on)."""
    with np.errstate(over="ignore", invalid="ignore"):
        norm2 = float(a @ a) if np.all(np.isfinite(a)) else np.inf
    if not (np.isfinite(norm2) and np.isfinite(b)):
        biggest = float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0))
        raise NumericalError(
            "a constraint vector overflows double precision (its entries reach "
            f"{biggest:.3g}{' and beyond' if not np.all(np.isfinite(a)) else ''}): the feature values are too large; "
            "scale them (e.g. to [0, 1] per feature)")


def summary(result: TrainResult) -> str:
    """svm_struct's closing lines (dval, pval, iterations, constraints) for the log."""
    state = {"converged": "converged", "iteration limit": "stopped at the iteration limit (not converged)",
             "stalled": "stopped without progress: the QP lost precision (feature values or C too large "
                        "for double precision; not converged)"}[result.status]
    return "\n".join([
        f"Optimization finished: {state} after {result.iterations} iterations",
        f"Upper bound on duality gap: {result.primal - result.dual:.5f}",
        f"Dual objective value: dval={result.dual:.5f}",
        f"Primal objective value: pval={result.primal:.5f}",
        f"Number of iterations: {result.iterations}",
        f"Total number of constraints in final working set: {result.constraints} (of {result.total_constraints})",
        f"Norm of weight vector: |w|={float(np.linalg.norm(result.w)):.5f}",
        f"Value of slack variable (global): xi={result.xi:.5f}",
        f"Runtime in seconds: {result.seconds:.2f}",
    ])
