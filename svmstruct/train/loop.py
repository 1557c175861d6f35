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

import numpy as np

from svmstruct.errors import InputError, NumericalError
from svmstruct.options import MAX_ITERATIONS
from svmstruct.train import line_search as ocas
from svmstruct.train.callbacks import Callback, Progress  # noqa: F401 - loop.Callback, loop.Progress
from svmstruct.train.loop_state import LoopState
from svmstruct.train.problem import Outline

# svm_struct drops constraints that stayed inactive this long (remove_inactive_constraints(..., 50)).
INACTIVE_LIMIT = 50
# outer (CCCP) steps of a latent-target problem
MAX_OUTER = 100
OUTER_TOLERANCE = 1e-6
# cuts of the problem's kept outputs between two oracle calls at most (_cuts_from_kept)
KEPT_ROUNDS = 20
# iterations in a row without progress (see optimise) before giving up
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
    status: str = "converged"  # converged | iteration limit | stalled | precision limit | stopped
    zero_objective: float = float("nan")  # the objective at w = 0, C times the slack there (the loop's start)
    # (the loss's measure of the model on its training data, of w = 0, of the ideal scores): training.judge_learning
    measured: tuple | None = None

    @property
    def gain(self) -> float:
        """How far training went below the objective at w = 0, relative to it (nan when that is 0)."""
        return (self.zero_objective - self.primal) / self.zero_objective if self.zero_objective > 0 else float("nan")

    @property
    def measure_gain(self) -> float:
        """How much of the room between w = 0 and the ideal the model's training measure took (nan unmeasured;
        for a measure whose best value is the smallest, the ideal is below w = 0's and the ratio is positive too)."""
        if self.measured is None:
            return float("nan")
        value, zero, ideal = self.measured
        return (value - zero) / (ideal - zero) if ideal != zero else 1.0

    @property
    def learned(self) -> bool:
        """False when the model ranks about as w = 0 does: its loss's measure on the training data took less than
        MIN_GAIN of the room between w = 0's (every score tied, broken as `eval` breaks them) and the ideal's;
        unmeasured (on a cluster, or a measure that cannot be taken), when training gained less than MIN_GAIN
        of the objective at w = 0. (The objective alone flags models that rank well at a small C.)"""
        if self.measured is not None:
            return not self.measure_gain < MIN_GAIN
        return not self.gain < MIN_GAIN


def optimise(evaluator, outline: Outline, C: float, epsilon: float, max_iterations: int = MAX_ITERATIONS,
             line_search: bool | None = None, start: LoopState | None = None, callbacks=()) -> TrainResult:
    """The cutting-plane loop on a problem whose scores and oracle answers the evaluator keeps (a
    LocalEvaluator, or svmstruct.train.distributed's over the shards of a cluster).

    With line_search this is the optimized cutting-plane algorithm (OCAS, Franc & Sonnenburg 2009,
    Algorithm 2) on the 1-slack problem: besides the QP's solution w_t it keeps the best point w_b found
    so far; each iteration moves w_b to the best point of the segment [w_b, w_t] (svmstruct.train.line_search)
    and adds the cutting planes at w_c = w_b + MU (w_t - w_b) and at w_t (the second one is free: the line
    search evaluated it). Without, it is the plain cutting-plane loop (svm_struct's; the cutting plane at
    w_t, w_b = w_t). The default is line_search for exact oracles without a latent target: a greedy oracle
    (SVM-div) costs more per call than OCAS saves in iterations (`make bench-engine`), and for a latent
    target the line search's branch decisions on round-off would let the CCCP imputation, hence the model,
    depend on the order of the documents. Either way the run is `converged` when the certified gap, the
    objective at w_b minus the dual of the QP, is at most C * epsilon, and w_b is returned. When
    STALL_LIMIT iterations in a row raise neither the dual nor lower the objective at w_b (round-off on
    badly scaled data or a huge C): `stalled`. A latent target is re-imputed when the loop has converged
    for it (_reimpute, the concave-convex procedure).
    `start` is a LoopState to go on from: a checkpoint's (from_arrays: the run continues as if it had not
    stopped, after checking the data is the checkpoint's). `callbacks` (Callback) see every iteration and every
    resumable point.
    The loop never returns a point whose objective is above that at w = 0, its start: a run that ends
    there (a latent target's CCCP steps, or the plain loop's w_t, are certified only to C * epsilon)
    returns w = 0 with that objective, and TrainResult.learned says whether training gained at least MIN_GAIN.
    Raises NumericalError when a constraint or the QP cannot be represented in floating point.
    """
    eps = epsilon * outline.epsilon_scale
    tolerance = C * eps * (1 + 1e-6)
    line_search = outline.exact and not outline.latent if line_search is None else line_search
    search = ocas.Stop(outline.search_calls, ocas.FRACTION_OF_EPSILON * C * eps) if line_search else None
    s = _started(evaluator, outline, C, eps, start)
    clock = time.perf_counter() - s.seconds
    history: list = []
    status = "iteration limit"
    while True:
        previous_dual, previous_primal = s.dual, s.primal
        _cut_and_solve(s, evaluator)
        if outline.cached:
            _cuts_from_kept(s, evaluator, eps)
        s.iteration += 1
        step = _move(s, evaluator, search)
        # progress: the dual (lower bound) rose or the objective at w_b (upper bound) fell
        improved = s.dual > previous_dual + 1e-12 * abs(previous_dual) or s.primal < previous_primal - 1e-12 * abs(
            s.primal)
        s.stalled = 0 if improved else s.stalled + 1
        row = dict(iteration=s.iteration, gap=(s.primal - s.dual) / C, primal=s.primal, dual=s.dual,
                   constraints=s.working_set.m, seconds=time.perf_counter() - clock, step=step,
                   xi=max(0.0, s.value_best), norm=float(np.linalg.norm(s.w_best)))
        history.append(row)
        if [callback for callback in callbacks if callback.iteration(row, s)]:  # every callback sees the row
            status = "stopped"
            break
        if s.primal - s.dual <= tolerance + 1e-12 * abs(s.primal):  # closed, to C * epsilon or to round-off
            # below round-off of the objective a gap above C * epsilon is not certified: not `converged`
            done = "converged" if s.primal - s.dual <= tolerance else "precision limit"
            if not outline.latent or s.outer >= MAX_OUTER or s.outer_primal - s.primal <= OUTER_TOLERANCE * C * eps:
                status = done
                break
            if s.iteration >= max_iterations:  # no iteration left for the new target (a resumed run re-imputes)
                s.cuts = []
                for callback in callbacks:
                    callback.resumable(s, time.perf_counter() - clock)
                break
            if not _reimpute(s, evaluator):
                status = done
                break
            continue
        if s.stalled >= STALL_LIMIT:
            status = "stalled"
            break
        s.cuts = _next_cuts(evaluator, step, line_search, outline.cached)
        s.kept = evaluator.kept() if outline.cached and callbacks else None
        for callback in callbacks:
            callback.resumable(s, time.perf_counter() - clock)
        if s.iteration >= max_iterations:
            break
    s.cuts = []
    return _result(s, status, history, time.perf_counter() - clock)


def _next_cuts(evaluator, step: float, line_search: bool, cached: bool) -> list:
    """The steps of the segment whose cutting planes the next iteration adds. OCAS's: at w_c = w_b + MU (w_t - w_b),
    just past w_b towards w_t (an oracle call), and at w_t (known) when the search stopped short of w_t; else at w_b,
    which is w_t. For a problem that keeps its outputs no oracle call: the answers the search has (at the new w_b and
    at w_t) and the kept outputs' cuts (_cuts_from_kept) take w_c's place; measured on svm_hmm's OCR letters (`make
    bench-problems`), a third of the oracle calls for as many iterations."""
    if not line_search or step == 1.0:
        return [0.0]
    if cached:
        return [0.0, 1.0] if step > 0.0 else [1.0]
    evaluator.evaluate(ocas.MU)
    return [ocas.MU, 1.0]


def _started(evaluator, outline: Outline, C: float, eps: float, start: LoopState | None) -> LoopState:
    """The state the loop starts from: w = 0 with the oracle's first answer there, or `start` with the
    evaluator brought to its w_b, w_t (and the data checked against a checkpoint's)."""
    if start is None:
        value_zero = _slack_at_best(evaluator, outline.n)
        return LoopState.at_zero(outline.n, outline.dim, C, eps, value_zero)
    evaluator.restore(start.w_best, start.w_t, start.w_imputed)
    if start.resumed:
        _check_same_data(evaluator, outline.n, start.value_best, start.value_t)
    if start.kept is not None:  # after the check: its oracle calls gave answers the state kept already
        evaluator.restore_kept(start.kept)
    return start


def _slack_at_best(evaluator, n: int) -> float:
    """The oracle afresh at w_b (the start, a new latent target): its slack value."""
    found = evaluator.evaluate(0.0)
    evaluator.accept(0.0)
    return found.delta / n - found.margin / n


def _cut_and_solve(s: LoopState, evaluator) -> None:
    """Add the cutting planes of the steps s.cuts to the working set, re-solve the dual QP (warm-started) and
    drop the constraints that stayed inactive INACTIVE_LIMIT iterations (svm_struct's rule)."""
    ws, n = s.working_set, s.n
    for step in s.cuts:
        a, delta = evaluator.cut(step)
        a, b = a / n, delta / n
        _check_finite(a, b)
        ws.add(a, b)
    s.added += len(s.cuts)
    _solve(s)
    # inactive: no weight relative to the largest (a scale-free test: on data scaled by 1e6 every alpha is ~1e-12)
    alpha = s.qp.alpha
    ws.idle = np.where(alpha > 1e-12 * float(alpha.max(initial=0.0)), 0, ws.idle + 1)
    if (s.iteration + 1) % INACTIVE_LIMIT == 0 and np.any(ws.idle >= INACTIVE_LIMIT):
        keep = ws.idle < INACTIVE_LIMIT
        ws.keep(keep)
        s.qp.keep(keep)
        _take_multipliers(s)


def _cuts_from_kept(s: LoopState, evaluator, eps: float) -> None:
    """svm_struct's constraint cache (Joachims, Finley & Yu 2009, sec. 4.2): while the cut of the outputs the problem
    kept from earlier oracle calls, each example's most violated at w_t, is violated at w_t by more than epsilon beyond
    the working set's slack there, add it and re-solve, up to KEPT_ROUNDS times, without calling the oracle. Only the
    dual moves: w_b, its objective and the stopping rule stay the oracle's."""
    for _ in range(KEPT_ROUNDS):
        found = evaluator.cached_cut(s.w_t)
        if found is None:
            return
        a, b = found[0] / s.n, found[1] / s.n
        _check_finite(a, b)
        if b - float(a @ s.w_t) <= s.working_set.slack(s.w_t) + eps:
            return
        s.working_set.add(a, b)
        s.added += 1
        _solve(s)


def _solve(s: LoopState) -> None:
    """The dual QP of the working set, warm-started by its last solution (qp.DualQP)."""
    s.qp.solve(s.working_set.G, s.working_set.b, s.C)
    _take_multipliers(s)


def _take_multipliers(s: LoopState) -> None:
    """w_t and the dual objective of the QP's multipliers."""
    alpha, ws = s.qp.alpha, s.working_set
    s.w_t = ws.combination(alpha)
    s.dual = float(alpha @ ws.b) - 0.5 * float(s.w_t @ s.w_t)


def _move(s: LoopState, evaluator, search: ocas.Stop | None) -> float:
    """Make w_t the evaluator's new point and move w_b: to the best point of [w_b, w_t] (OCAS, searched until
    `search` says stop) or, without a search, to w_t. Updates the slacks and the objective at w_b; returns the step
    taken along the segment."""
    n, C = s.n, s.C
    slope_best, at_t = evaluator.point(s.w_t)
    s.value_t = at_t.delta / n - at_t.margin / n
    if search is not None:
        step, s.primal, s.value_best = ocas.best_on_segment(
            evaluator.evaluate, C, n, s.w_best, s.w_t, (s.value_best, slope_best), at_t, search)
    else:
        step, s.value_best = 1.0, at_t.delta / n - at_t.margin / n
        s.primal = 0.5 * float(s.w_t @ s.w_t) + C * max(0.0, s.value_best)
    evaluator.accept(step)
    if step == 1.0:
        s.w_best = s.w_t.copy()
    elif step > 0:
        s.w_best = s.w_best + step * (s.w_t - s.w_best)
    return step


def _reimpute(s: LoopState, evaluator) -> bool:
    """One outer step of the concave-convex procedure (Yu & Joachims 2009): the latent target re-imputed at
    w_b; if it moved, every constraint shifts by the same vector (a constraint is Psi(target) - Psi(ybar)),
    the QP is re-solved and the loop goes on from w_b under the new target (no higher objective).
    False when the imputation did not change."""
    moved = evaluator.reimpute()
    if moved is None:
        return False
    s.outer += 1
    s.outer_primal = s.primal
    s.w_imputed = s.w_best.copy()
    s.working_set.shift(moved / s.n)
    _solve(s)
    s.value_best = _slack_at_best(evaluator, s.n)  # w_b's objective under the new target (no higher)
    s.primal = 0.5 * float(s.w_best @ s.w_best) + s.C * max(0.0, s.value_best)
    s.cuts = [0.0]
    s.stalled = 0
    s.dual = -np.inf  # a new target is a new QP: the next solve sets its dual afresh
    return True


def _result(s: LoopState, status: str, history: list, seconds: float) -> TrainResult:
    """The TrainResult of the final state, never worse than w = 0 (the loop's start)."""
    zero_objective = s.C * max(0.0, s.value_zero)
    w, primal = s.w_best, s.primal
    if primal > zero_objective:
        w, primal = np.zeros(s.dim), zero_objective
    xi = max(0.0, (primal - 0.5 * float(w @ w)) / s.C)
    return TrainResult(w=w, primal=primal, dual=s.dual, xi=xi, iterations=s.iteration, constraints=s.working_set.m,
                       total_constraints=s.added, converged=status == "converged", seconds=seconds, history=history,
                       outer_steps=s.outer, status=status, zero_objective=zero_objective)


def _check_same_data(evaluator, n: int, value_best: float, value_t: float) -> None:
    """A resumed run's data is the checkpoint's: the oracle's slack at w_b and at w_t, recomputed on the data
    at hand, equal the values the state recorded (the oracles are deterministic and their results do not
    depend on the thread count). Labels permuted or feature values changed move them: InputError."""
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
    if result.measured is not None:
        value, zero, ideal = result.measured
        what = (f"on the training data the model's measure is {value:.4g}, w = 0's (every score tied) {zero:.4g}, "
                f"the ideal {ideal:.4g}: the model does about as well as w = 0")
    else:
        what = (f"training gained {100 * max(result.gain, 0.0):.2g} % over w = 0 (objective {result.primal:.6g}, at "
                f"w = 0 {result.zero_objective:.6g}): the model is w = 0 or close to it")
    return (f"{what}; try another -c, or another loss or feature map (docs/learn.md: 'When a model does not "
            "learn')")


STATUS_TEXT = {
    "converged": "converged",
    "iteration limit": "stopped at the iteration limit (not converged)",
    "stalled": "stopped without progress: the QP lost precision (feature values or C too large for double "
               "precision; not converged)",
    "precision limit": "stopped at the precision of double arithmetic: the gap cannot be certified below C * "
                       "epsilon (epsilon too small for this objective; not converged)",
    "stopped": "stopped by a callback (not converged)",
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
