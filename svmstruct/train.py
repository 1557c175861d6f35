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

from svmstruct import qp
from svmstruct.errors import NumericalError
from svmstruct.evaluator import Evaluation, LocalEvaluator
from svmstruct.problem import TrainingProblem

# svm_struct drops constraints that stayed inactive this long (remove_inactive_constraints(..., 50)).
INACTIVE_LIMIT = 50
# OCAS: a cutting plane goes in at w_b + MU (w_t - w_b). Franc & Sonnenburg 2009 use 0.1; with the second
# plane at w_t, 0.05 took fewer iterations on every case of `make bench-engine` (corn errorrate 181 -> 143).
MU = 0.05
LINE_SEARCH_CALLS = 16  # oracle calls of one line search at most
LINE_SEARCH_TOLERANCE = 1e-9  # relative distance of the best point found to the lower model
# outer (CCCP) steps of a latent-target problem
MAX_OUTER = 100
OUTER_TOLERANCE = 1e-6
# iterations in a row without progress (see train) before giving up
STALL_LIMIT = 10
# a run whose objective is less than this fraction below the objective at w = 0 did not learn (TrainResult.learned)
MIN_GAIN = 0.01


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
    status: str = "converged"  # converged | iteration limit | stalled | precision limit
    zero_objective: float = float("nan")  # the objective at w = 0, C times the slack there (the loop's start)

    @property
    def gain(self) -> float:
        """How far training went below the objective at w = 0, relative to it (nan when that is 0)."""
        return (self.zero_objective - self.primal) / self.zero_objective if self.zero_objective > 0 else float("nan")

    @property
    def learned(self) -> bool:
        """False when training gained less than MIN_GAIN over w = 0: the model is w = 0 or close to it."""
        return not self.gain < MIN_GAIN


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


@dataclass
class Outline:
    """What the loop needs to know of a problem; the data, the scores and the oracle stay with its
    evaluator (svmstruct.evaluator)."""
    n: int  # number of examples: the 1/n of the 1-slack constraint
    dim: int  # length of w
    epsilon_scale: float = 1.0  # see TrainingProblem
    exact: bool = True  # the oracle finds the most violated output
    latent: bool = False  # the problem has a latent target (CCCP)

    @classmethod
    def of(cls, problem: TrainingProblem) -> Outline:
        return cls(problem.n, problem.X.shape[1], problem.epsilon_scale, problem.exact,
                   problem.latent_target is not None)


def train(problem: TrainingProblem, C: float, epsilon: float, max_iterations: int = 100000,
          **options) -> TrainResult:
    """Train w for `problem` with regularisation C; epsilon in the loss's units (times problem.epsilon_scale).
    In this process: optimise with a LocalEvaluator; `options` are optimise's (progress, line_search, ...)."""
    return optimise(LocalEvaluator(problem), Outline.of(problem), C, epsilon, max_iterations, **options)


def optimise(
    evaluator,
    outline: Outline,
    C: float,
    epsilon: float,
    max_iterations: int = 100000,
    progress: Callable[[dict], None] | None = None,
    line_search: bool | None = None,
    checkpoint: Callable[[dict], None] | None = None,
    resume: dict | None = None,
    warm_start: dict | None = None,
    finished: Callable[[dict], None] | None = None,
) -> TrainResult:
    """The cutting-plane loop on a problem whose scores and oracle answers the evaluator keeps (a
    LocalEvaluator, or svmstruct.distributed's over the shards of a cluster).

    With line_search this is the optimized cutting-plane algorithm (OCAS, Franc & Sonnenburg 2009,
    Algorithm 2) on the 1-slack problem: besides the QP's solution w_t it keeps the best point w_b found
    so far; each iteration moves w_b to the best point of the segment [w_b, w_t] (a line search of the
    true objective, see _line_search) and adds the cutting planes at w_c = w_b + MU (w_t - w_b) and at
    w_t (the second one is free: the line search evaluated it). Without, it is the plain cutting-plane
    loop (svm_struct's; the cutting plane at w_t, w_b = w_t). The default is line_search for exact
    oracles without a latent target: a greedy oracle (SVM-div) costs more per call than OCAS saves in
    iterations (`make bench-engine`), and for a latent target the line search's branch decisions on
    round-off would let the CCCP imputation, hence the model, depend on the order of the documents.
    Either way the run is `converged` when the certified gap, the objective at w_b minus the dual of the
    QP, is at most C * epsilon, and w_b is returned. When STALL_LIMIT iterations in a row raise neither
    the dual nor lower the objective at w_b (round-off on badly scaled data or a huge C): `stalled`.
    checkpoint(state) is called at the end of every iteration with the loop's state (the working set, the
    QP's multipliers, w_b, w_t, counters: svmstruct.checkpoint writes it); `resume` is such a state, from
    which the loop continues as if it had not stopped (the evaluator is restored from w_b and w_t).
    `finished(state)` gets the final state; as `warm_start` of a run with another C (a C grid) it starts
    from that run's working set and best point: cutting planes do not depend on C, the multipliers are
    scaled to the new C, and the stop test is the same certified gap. Ignored for a latent target (the
    CCCP path would depend on the grid) and for an approximate oracle (SVM-div's greedy one: its gap is
    not a certificate: warm-started exp-div runs stopped at objectives up to 6 % higher, measured at stop 19).
    The loop never returns a point whose objective is above that at w = 0, its start: a run that ends
    there (a latent target's CCCP steps, or the plain loop's w_t, are certified only to C * epsilon)
    returns w = 0 with that objective, and TrainResult.learned says whether training gained at least MIN_GAIN.
    Raises NumericalError when a constraint or the QP cannot be represented in floating point.
    """
    start = time.perf_counter() - (float(resume["seconds"]) if resume is not None else 0.0)
    n = outline.n
    eps = epsilon * outline.epsilon_scale
    tolerance = C * eps * (1 + 1e-6)
    if line_search is None:  # see the docstring: off for an approximate oracle and for a latent target
        line_search = outline.exact and not outline.latent
    dim = outline.dim
    ws = _WorkingSet(dim)
    alpha = np.zeros(0)
    duals = None
    dual = -np.inf
    added = 0
    history = []
    status = "iteration limit"
    stalled = 0
    outer, outer_primal = 0, np.inf

    def solve(alpha0, y0):
        sol = qp.solve_dual(ws.G, ws.b, C, alpha0, y0)
        w = sol.alpha @ ws.A
        return sol.alpha, sol.y, float(sol.alpha @ ws.b) - 0.5 * float(w @ w), w

    def state(cuts: list) -> dict:
        """What `resume` needs to go on from the end of this iteration."""
        return dict(n=n, dim=dim, C=C, epsilon=eps, A=ws.A, b=ws.b, idle=ws.idle, alpha=alpha, duals=duals,
                    dual=dual, w_best=w_best, w_t=w_t, w_imputed=w_imputed, value_best=value_best,
                    value_t=value_t, value_zero=value_zero, primal=primal,
                    cuts=np.asarray(cuts, dtype=float), iteration=iteration, added=added, stalled=stalled, outer=outer,
                    outer_primal=outer_primal, seconds=time.perf_counter() - start)

    def start_at_best() -> float:
        """The oracle afresh at w_b (the start, a new latent target): its slack value."""
        found = evaluator.evaluate(0.0)
        evaluator.accept(0.0)
        return found.delta / n - found.margin / n

    w_imputed = None  # w_b at the last re-imputation of a latent target
    if resume is not None:
        _check_resumable(resume, outline, C, eps)
        for a, b in zip(resume["A"], resume["b"]):
            ws.add(a, float(b))
        ws.idle = np.asarray(resume["idle"], dtype=np.int64)
        alpha, duals, dual = resume["alpha"], resume["duals"], float(resume["dual"])
        w_best, w_t, w_imputed = resume["w_best"], resume["w_t"], resume["w_imputed"]
        value_best, primal = float(resume["value_best"]), float(resume["primal"])
        cuts = [float(step) for step in resume["cuts"]]
        iteration, added, stalled = int(resume["iteration"]), int(resume["added"]), int(resume["stalled"])
        outer, outer_primal = int(resume["outer"]), float(resume["outer_primal"])
        value_zero, value_t = float(resume["value_zero"]), float(resume["value_t"])
        evaluator.restore(w_best, w_t, w_imputed)
        _check_same_data(evaluator, n, value_best, value_t)
    elif warm_start is not None and outline.exact and not outline.latent:
        for a, b in zip(warm_start["A"], warm_start["b"]):
            ws.add(a, float(b))
        ws.idle = np.zeros(ws.m, dtype=np.int64)
        alpha = np.asarray(warm_start["alpha"]) * (C / float(warm_start["C"]))  # feasible: sum <= C
        w_best, w_t = warm_start["w_best"], warm_start["w_t"]
        value_best = float(warm_start["value_best"])  # the slack at w_b does not depend on C
        value_zero, value_t = float(warm_start["value_zero"]), float(warm_start["value_t"])  # nor those at 0, w_t
        primal = 0.5 * float(w_best @ w_best) + C * max(0.0, value_best)
        cuts, iteration = [], 0
        evaluator.restore(w_best, w_t, None)
    else:  # w_b = 0: its objective, and the first cutting plane there
        w_best = np.zeros(dim)
        value_best = value_zero = value_t = start_at_best()
        primal = C * max(0.0, value_best)
        cuts = [0.0]  # steps of the segment whose answers become cutting planes
        iteration = 0
    while True:
        for step in cuts:
            a, delta = evaluator.cut(step)
            a, b = a / n, delta / n
            _check_finite(a, b)
            ws.add(a, b)
        added += len(cuts)
        alpha0 = np.append(alpha, np.zeros(len(cuts)))
        y0: np.ndarray | None = None if duals is None else np.concatenate([duals[:-1], np.zeros(len(cuts)), duals[-1:]])
        previous_dual, previous_primal = dual, primal
        alpha, duals, dual, w_t = solve(alpha0, y0)
        # inactive: no weight relative to the largest (a scale-free test: on data scaled by 1e6 every alpha is ~1e-12)
        ws.idle = np.where(alpha > 1e-12 * float(alpha.max(initial=0.0)), 0, ws.idle + 1)
        if (iteration + 1) % INACTIVE_LIMIT == 0 and np.any(ws.idle >= INACTIVE_LIMIT):
            keep = ws.idle < INACTIVE_LIMIT
            ws.keep(keep)
            alpha = alpha[keep]
            duals = np.concatenate([duals[:-1][keep], duals[-1:]])
            w_t = alpha @ ws.A
            dual = float(alpha @ ws.b) - 0.5 * float(w_t @ w_t)

        iteration += 1
        slope_best, at_t = evaluator.point(w_t)
        value_t = at_t.delta / n - at_t.margin / n
        if line_search:
            step, primal, value_best = _line_search(evaluator.evaluate, C, n, w_best, w_t, (value_best, slope_best),
                                                    at_t)
        else:
            step, value_best = 1.0, at_t.delta / n - at_t.margin / n
            primal = 0.5 * float(w_t @ w_t) + C * max(0.0, value_best)
        evaluator.accept(step)
        if step == 1.0:
            w_best = w_t.copy()
        elif step > 0:
            w_best = w_best + step * (w_t - w_best)
        # progress: the dual (lower bound) rose or the objective at w_b (upper bound) fell
        improved = dual > previous_dual + 1e-12 * abs(previous_dual) or primal < previous_primal - 1e-12 * abs(primal)
        stalled = 0 if improved else stalled + 1
        row = dict(iteration=iteration, gap=(primal - dual) / C, primal=primal, dual=dual,
                   constraints=len(ws.b), seconds=time.perf_counter() - start)
        history.append(row)
        if progress:
            progress(row)
        if primal - dual <= tolerance + 1e-12 * abs(primal):  # closed, to C * epsilon or to round-off
            # below round-off of the objective a gap above C * epsilon is not certified: not `converged`
            done = "converged" if primal - dual <= tolerance else "precision limit"
            if not outline.latent or outer >= MAX_OUTER or outer_primal - primal <= OUTER_TOLERANCE * C * eps:
                status = done
                break
            if iteration >= max_iterations:  # no iteration left for the new target (a resumed run re-imputes)
                if checkpoint:
                    checkpoint(state([]))
                break
            moved = evaluator.reimpute()
            if moved is None:
                status = done
                break
            outer += 1
            outer_primal = primal
            w_imputed = w_best.copy()
            ws.shift(moved / n)
            alpha, duals, dual, w_t = solve(alpha, duals)
            value_best = start_at_best()  # w_b's objective under the new target (no higher)
            primal = 0.5 * float(w_best @ w_best) + C * max(0.0, value_best)
            cuts = [0.0]
            stalled = 0
            dual = -np.inf  # a new target is a new QP: the next solve sets its dual afresh
            continue
        if stalled >= STALL_LIMIT:
            status = "stalled"
            break
        if line_search and step < 1.0:  # the cutting plane at w_c, just past w_b towards w_t (else w_c = w_t)
            evaluator.evaluate(MU)
            cuts = [MU, 1.0]
        else:
            cuts = [0.0]
        if checkpoint:
            checkpoint(state(cuts))
        if iteration >= max_iterations:
            break
    if finished:
        finished(state([]))
    zero_objective = C * max(0.0, value_zero)
    if primal > zero_objective:  # never worse than the start
        w_best, primal = np.zeros(dim), zero_objective
    xi = max(0.0, (primal - 0.5 * float(w_best @ w_best)) / C)
    return TrainResult(
        w=w_best,
        primal=primal,
        dual=dual,
        xi=xi,
        iterations=iteration,
        constraints=len(ws.b),
        total_constraints=added,
        converged=status == "converged",
        seconds=time.perf_counter() - start,
        history=history,
        outer_steps=outer,
        status=status,
        zero_objective=zero_objective,
    )


def _line_search(evaluate: Callable[[float], Evaluation], C: float, n: int, w_b, w_t, at_b: tuple,
                 at_t: Evaluation, max_evaluations: int | None = None) -> tuple[float, float, float]:
    """The best point of the segment w(l) = w_b + l (w_t - w_b), l in [0, 1], of the true objective
    f(l) = 1/2 |w(l)|^2 + C xi(l). f is the maximum of quadratics of curvature |d|^2 (d = w_t - w_b), one
    per output of the oracle (and xi = 0), each a lower bound of f everywhere. evaluate(l) is the oracle
    at the scores s_b + l (s_t - s_b) (svmstruct.evaluator): one oracle call, no product with X.
    A one-dimensional cutting-plane search: the pieces found at the two ends of the bracket (slope < 0
    on the left, >= 0 on the right) give a model max(q_lo, q_hi) <= f; the model's minimiser is evaluated
    next and replaces the end on its side, until f there is within round-off of the model's minimum.
    at_b = (slack value at w_b, dcoef_b . (s_t - s_b)); at_t the evaluation at w_t.
    Returns (step, f(step), the slack value at step)."""
    max_evaluations = LINE_SEARCH_CALLS if max_evaluations is None else max_evaluations
    d = w_t - w_b
    dd = float(d @ d)
    half_bb = 0.5 * float(w_b @ w_b)
    wd = float(w_b @ d)

    def at(step, value, slope_dot):
        f = half_bb + step * wd + 0.5 * step * step * dd + C * max(0.0, value)
        slope = wd + step * dd - (C * slope_dot / n if value > 0 else 0.0)
        return f, slope, value

    def evaluated(step, found: Evaluation):
        return at(step, found.delta / n - found.margin / n, found.slope)

    f1, slope1, value1 = evaluated(1.0, at_t)
    if slope1 <= 0 or dd <= 0:
        return 1.0, f1, value1
    f0, slope0, value0 = at(0.0, *at_b)
    best = (f0, 0.0, value0) if f0 <= f1 else (f1, 1.0, value1)
    if slope0 >= 0:
        return 0.0, f0, value0
    lo, f_lo, slope_lo, hi, f_hi, slope_hi = 0.0, f0, slope0, 1.0, f1, slope1

    def piece(at_l, f_l, slope_l, x):  # the quadratic found at at_l, at x
        return f_l + slope_l * (x - at_l) + 0.5 * dd * (x - at_l) ** 2

    for _ in range(max_evaluations - 2):
        left_min = lo - slope_lo / dd  # each piece's own minimiser (> lo, resp. < hi)
        right_min = hi - slope_hi / dd
        if left_min <= hi and piece(lo, f_lo, slope_lo, left_min) >= piece(hi, f_hi, slope_hi, left_min):
            step = left_min
        elif right_min >= lo and piece(hi, f_hi, slope_hi, right_min) >= piece(lo, f_lo, slope_lo, right_min):
            step = right_min
        else:  # the two pieces cross: they differ by a linear function
            gap_lo, gap_hi = f_lo - piece(hi, f_hi, slope_hi, lo), f_hi - piece(lo, f_lo, slope_lo, hi)
            step = lo + (hi - lo) * gap_lo / (gap_lo + gap_hi) if gap_lo + gap_hi > 0 else 0.5 * (lo + hi)
        step = min(max(step, lo), hi)
        lower = max(piece(lo, f_lo, slope_lo, step), piece(hi, f_hi, slope_hi, step))
        if best[0] - lower <= LINE_SEARCH_TOLERANCE * abs(best[0]) or not lo < step < hi:
            break
        f, slope, value = evaluated(step, evaluate(step))
        if f < best[0]:
            best = (f, step, value)
        if f - lower <= LINE_SEARCH_TOLERANCE * abs(f):
            break
        if slope >= 0:
            hi, f_hi, slope_hi = step, f, slope
        else:
            lo, f_lo, slope_lo = step, f, slope
    return best[1], best[0], best[2]


def _check_resumable(state: dict, outline: Outline, C: float, eps: float) -> None:
    """A saved state fits this problem: same n, width, C and epsilon (InputError otherwise)."""
    from svmstruct.errors import InputError

    saved = (int(state["n"]), int(state["dim"]), float(state["C"]), float(state["epsilon"]))
    if saved != (outline.n, outline.dim, float(C), float(eps)):
        raise InputError(f"the checkpoint is of another training problem (n, width, C, epsilon {saved} here "
                         f"{(outline.n, outline.dim, float(C), float(eps))})")


def _check_same_data(evaluator, n: int, value_best: float, value_t: float) -> None:
    """A resumed run's data is the checkpoint's: the oracle's slack at w_b and at w_t, recomputed on the data
    at hand, equal the values the state recorded (the oracles are deterministic and their results do not
    depend on the thread count). Labels permuted or feature values changed move them: InputError."""
    from svmstruct.errors import InputError

    for step, saved in ((0.0, value_best), (1.0, value_t)):
        found = evaluator.evaluate(step)
        value = found.delta / n - found.margin / n
        if not abs(value - saved) <= 1e-9 * max(1.0, abs(saved)):
            raise InputError(f"the checkpoint was made on other training data (the oracle's slack at its "
                             f"{'best point' if step == 0.0 else 'last QP solution'} is {value:.12g} on this data, "
                             f"{saved:.12g} in the checkpoint): resume with the same data, read the same way "
                             "(--float32, --layout), or start without --resume")


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


def not_learned(result: TrainResult) -> str:
    """The one-line warning of a run that did not learn (TrainResult.learned is False)."""
    return (f"training gained {100 * max(result.gain, 0.0):.2g} % over w = 0 (objective {result.primal:.6g}, at w = 0 "
            f"{result.zero_objective:.6g}): the model is w = 0 or close to it and ranks about as well as chance; try "
            "another -c, or another loss or feature map (README: 'When a model does not learn')")


STATUS_TEXT = {
    "converged": "converged",
    "iteration limit": "stopped at the iteration limit (not converged)",
    "stalled": "stopped without progress: the QP lost precision (feature values or C too large for double "
               "precision; not converged)",
    "precision limit": "stopped at the precision of double arithmetic: the gap cannot be certified below C * "
                       "epsilon (epsilon too small for this objective; not converged)",
}


def summary(result: TrainResult) -> str:
    """svm_struct's closing lines (dval, pval, iterations, constraints) for the log."""
    state = STATUS_TEXT[result.status]
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
