"""The dual QP of the 1-slack cutting-plane algorithm, solved by OSQP (the only module that imports it).

Joachims, Finley & Yu (2009), the dual of OP 5 over the working set of constraints (a_k, b_k):

    max_alpha  sum_k alpha_k b_k - 1/2 alpha' G alpha    s.t.  alpha >= 0,  sum_k alpha_k <= C

with G_kl = a_k . a_l; the primal solution is w = sum_k alpha_k a_k.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from svmstruct.errors import NumericalError

# ADMM to moderate accuracy, then an exact solve on the active set it identifies (polish_active_set):
# the objective must match the C originals to ~1e-5 relative.
_SETTINGS = dict(
    eps_abs=1e-2,
    eps_rel=1e-2,
    eps_prim_inf=1e-12,
    eps_dual_inf=1e-12,
    max_iter=200000,
    polishing=False,  # OSQP 1.1 prints its polishing status on stdout even when quiet; we polish ourselves
    verbose=False,
    warm_starting=True,
    adaptive_rho=True,
)




@dataclass
class DualSolution:
    alpha: np.ndarray
    dual_objective: float  # sum alpha b - 1/2 alpha' G alpha
    y: np.ndarray  # OSQP's constraint multipliers, kept to warm-start the next solve
    status: str


@dataclass
class DualQP:
    """The working set's dual QP between two solves: the multipliers alpha of its constraints and OSQP's
    multipliers (one per alpha_k >= 0 and one for the sum; None before the first solve), which warm-start the next
    solve. The loop appends constraints, drops idle ones (keep) and re-solves; a checkpoint stores alpha and
    duals and hands them back (DualQP(alpha, duals))."""

    alpha: np.ndarray = field(default_factory=lambda: np.zeros(0))
    duals: np.ndarray | None = None

    def solve(self, G: np.ndarray, b: np.ndarray, C: float) -> DualSolution:
        """solve_dual for the working set (G, b), warm-started from the last solution; the constraints beyond the
        last solve's (appended since) start at 0."""
        added = len(b) - len(self.alpha)
        alpha0 = np.append(self.alpha, np.zeros(added))
        y0 = None if self.duals is None else np.concatenate([self.duals[:-1], np.zeros(added), self.duals[-1:]])
        solution = solve_dual(G, b, C, alpha0, y0)
        self.alpha, self.duals = solution.alpha, solution.y
        return solution

    def keep(self, mask: np.ndarray) -> None:
        """Only the constraints where mask is True stay (the working set dropped the others)."""
        self.alpha = self.alpha[mask]
        if self.duals is not None:
            self.duals = np.concatenate([self.duals[:-1][mask], self.duals[-1:]])


def solve_dual(G: np.ndarray, b: np.ndarray, C: float, alpha0=None, y0=None) -> DualSolution:
    """Maximise sum(alpha*b) - alpha'G alpha/2 subject to alpha >= 0, sum(alpha) <= C.

    alpha0/y0 warm-start OSQP (e.g. the previous iteration's solution padded with zeros).
    The QP is solved in the variables gamma = s alpha, s the largest diagonal entry of G (the same
    problem with Gram matrix G/s and bound C s, and the same multipliers): OSQP's tolerances are
    absolute, and on features scaled by 1e6 every alpha is ~1e-12.
    """
    m = len(b)
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(b))):
        raise NumericalError("the QP's Gram matrix overflows double precision: the feature values are too large; "
                             "scale them (e.g. to [0, 1] per feature)")
    scale = float(np.max(np.diag(G), initial=0.0)) if m else 0.0
    scale = scale if scale > 0 and np.isfinite(scale * C) else 1.0
    Gs, Cs = G / scale, C * scale
    if alpha0 is not None:  # the previous optimum (padded with 0 for a new constraint) is a few steps away
        # the active-set method within its own bound of steps, 4(m + 1); OSQP is asked when it does not finish
        polished = polish_active_set(Gs, b, Cs, project_feasible(np.asarray(alpha0, dtype=float) * scale, Cs))
        if polished is not None:
            alpha = polished / scale
            y = y0 if y0 is not None else np.zeros(m + 1)
            return DualSolution(alpha, dual_objective(G, b, alpha), np.asarray(y, dtype=float), "warm active set")
    import osqp  # loaded when the warm-started active-set method does not finish (rare; never on small runs)

    P, A = _upper_triangle(Gs), _simplex_constraints(m)
    lower = np.concatenate([np.zeros(m), [-np.inf]])
    upper = np.concatenate([np.full(m, np.inf), [Cs]])
    solver = osqp.OSQP()
    solver.setup(P, -np.asarray(b, dtype=float), A, lower, upper, **_SETTINGS)
    if alpha0 is not None:
        solver.warm_start(x=np.asarray(alpha0) * scale, y=y0 if y0 is not None else np.zeros(m + 1))
    for tolerance in (None, 1e-10):  # a second, tighter solve only if the active set was not found
        if tolerance is not None:
            solver.update_settings(eps_abs=tolerance, eps_rel=tolerance)
        result = solver.solve(raise_error=False)
        if result.info.status_val == osqp.SolverStatus.OSQP_SIGINT:  # OSQP catches Ctrl-C while solving: pass it on
            raise KeyboardInterrupt
        gamma = np.asarray(result.x, dtype=float)
        if not np.all(np.isfinite(gamma)):
            raise NumericalError(f"the QP solver failed ({result.info.status}) on a working set of {m} constraints")
        gamma = project_feasible(gamma, Cs)
        polished = polish_active_set(Gs, b, Cs, gamma)
        status = "polished" if polished is not None else result.info.status
        alpha = (polished if polished is not None else gamma) / scale
        if polished is not None or tolerance is not None:
            break
    value = dual_objective(G, b, alpha)
    if alpha0 is not None:  # the warm start is feasible: never return a worse point (round-off on ill-posed QPs)
        start = project_feasible(np.asarray(alpha0, dtype=float), C)
        if dual_objective(G, b, start) > value:
            return DualSolution(start, dual_objective(G, b, start), np.asarray(result.y, dtype=float), "no progress")
    return DualSolution(alpha, value, np.asarray(result.y, dtype=float), status)


def _upper_triangle(G: np.ndarray):
    """The upper triangle of the dense Gram matrix as CSC (OSQP's P), built without scipy's converters."""
    import scipy.sparse as sp

    m = len(G)
    rows, cols = np.triu_indices(m)
    order = np.lexsort((rows, cols))
    rows, cols = rows[order], cols[order]
    indptr = np.concatenate([[0], np.cumsum(np.arange(1, m + 1))])
    return sp.csc_matrix((G[rows, cols], rows, indptr), shape=(m, m))


def _simplex_constraints(m: int):
    """[I; 1'] as CSC: column k holds row k (alpha_k >= 0) and row m (the sum)."""
    import scipy.sparse as sp

    rows = np.empty(2 * m, dtype=np.int64)
    rows[0::2] = np.arange(m)
    rows[1::2] = m
    return sp.csc_matrix((np.ones(2 * m), rows, np.arange(0, 2 * m + 1, 2)), shape=(m + 1, m))


def dual_objective(G: np.ndarray, b: np.ndarray, alpha: np.ndarray) -> float:
    return float(alpha @ b - 0.5 * alpha @ (G @ alpha))


def polish_active_set(G: np.ndarray, b: np.ndarray, C: float, alpha: np.ndarray, max_steps: int | None = None):
    """Refine an approximate solution to the exact optimum by a primal active-set method.

    With a slack s = C - sum(alpha) the feasible set is the simplex {x >= 0, 1'x = C}. On the free set F
    the step p towards the best point of the face solves [G_FF 1; 1' 0][p; mu] = [g_F; 0] with the
    gradient g = b - G x; when G_FF is singular and g has a component in its null space, the objective
    rises linearly along that component, which is followed instead. A step that would make an
    entry negative is cut back (ratio test) and that index joins the bound set; at the best point of a face
    the bound index with the largest gradient above the free ones is released. Seeded with OSQP's
    support this takes a few steps. Returns None if it does not finish within max_steps.
    """
    m = len(b)
    Gs = np.zeros((m + 1, m + 1))
    Gs[:m, :m] = G
    bs = np.append(b, 0.0)
    x = np.append(alpha, max(C - alpha.sum(), 0.0))
    # drop OSQP's near-zeros relative to the largest alpha (not the slack, which can be 1e19 times larger
    # when the bound sum(alpha) <= C is far from active); wrongly dropped indices come back below
    x[:m][x[:m] <= 1e-5 * max(float(x[:m].max(initial=0.0)), 1e-300)] = 0.0
    x = x * (C / x.sum()) if x.sum() > 0 else np.eye(m + 1)[m] * C
    free = x > 0
    absG, absb = np.abs(Gs), np.abs(bs)
    for _ in range(max_steps or 4 * (m + 1)):
        F = np.flatnonzero(free)
        g = bs - Gs @ x
        GFF = Gs[np.ix_(F, F)]
        p, newton = _face_step(GFF, g[F])
        if np.any(p < 0) and (not newton or np.any(x[F] + p < 0)):
            shrinking = p < 0
            ratios = x[F][shrinking] / -p[shrinking]
            t = float(ratios.min())
            if newton:
                t = min(t, 1.0)
            x[F] = np.maximum(x[F] + t * p, 0.0)
            if not newton or t < 1.0:
                blocking = F[shrinking][np.argmin(ratios)]
                x[blocking] = 0.0
                free[blocking] = False
            continue
        if newton:
            x[F] = np.maximum(x[F] + p, 0.0)
        g = bs - Gs @ x
        lam = float(g[F].mean())
        bound = np.flatnonzero(~free)
        # round-off in g_k is ~1e-16 (|b_k| + sum_l |G_kl| x_l): a gradient within 1e-12 of that is a tie
        slack = g[bound] - lam - 1e-12 * (absb[bound] + absG[bound] @ x + abs(lam))
        if len(bound) == 0 or slack.max() <= 0:
            return project_feasible(x[:m], C)
        free[bound[np.argmax(slack)]] = True
    return None


def _face_step(GFF: np.ndarray, gF: np.ndarray):
    """The step on a face: (Newton step, True), or (ascent direction along the null space, False)."""
    k = len(gF)
    K = np.zeros((k + 1, k + 1))
    K[:k, :k] = GFF
    K[:k, k] = 1.0
    K[k, :k] = 1.0
    rhs = np.append(gF, 0.0)
    sol = _solve_kkt(K, rhs)
    if np.all(np.abs(K @ sol - rhs) <= 1e-10 * (np.abs(K) @ np.abs(sol) + np.abs(rhs))):
        return sol[:k], True
    M = np.vstack([GFF, np.ones((1, k))])
    _, sv, Vt = np.linalg.svd(M)
    rank = int(np.sum(sv > 1e-12 * max(sv.max(), 1.0)))
    N = Vt[rank:]
    direction = N.T @ (N @ gF)
    if np.abs(direction).max() <= 1e-15 * max(1.0, np.abs(gF).max()):
        return sol[:k], True
    return direction, False


def _solve_kkt(K: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """LU solve; least squares when the free constraints are linearly dependent (singular K)."""
    try:
        sol = np.linalg.solve(K, rhs)
        if np.all(np.isfinite(sol)) and np.allclose(K @ sol, rhs, rtol=1e-9, atol=1e-12 * np.abs(rhs).max()):
            return sol
    except np.linalg.LinAlgError:
        pass
    return np.linalg.lstsq(K, rhs, rcond=None)[0]


def project_feasible(alpha: np.ndarray, C: float) -> np.ndarray:
    """Clip OSQP's solution (feasible to its tolerance) onto alpha >= 0, sum alpha <= C exactly."""
    alpha = np.maximum(alpha, 0.0)
    total = alpha.sum()
    if total > C:
        alpha *= C / total
    return alpha
