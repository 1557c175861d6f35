"""OCAS's line search (Franc & Sonnenburg 2009, Algorithm 2, step 3) on the 1-slack problem: the best point
of the segment [w_b, w_t] of the true objective, found with the oracle's answers along it (an oracle call
per point, never a product with X: svmstruct.train.evaluator computes the scores s_b + l (s_t - s_b)).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from svmstruct.train.evaluator import Evaluation

# OCAS: a cutting plane goes in at w_b + MU (w_t - w_b). Franc & Sonnenburg 2009 use 0.1; with the second
# plane at w_t, 0.05 took fewer iterations on every case of `make bench-engine` (corn errorrate 181 -> 143).
MU = 0.05
CALLS = 16  # oracle calls of one line search at most
TOLERANCE = 1e-9  # relative distance of the best point found to the lower model
# the loop's own tolerance (C epsilon) times this is close enough: the certified gap closes to C epsilon, and
# a point nearer the segment's best costs oracle calls that save no iteration. Measured (make bench-engine and
# small runs): 0.03 halves the oracle calls (MQ2008 S1 pairs 162 -> 91, training 0.069 -> 0.049 s); 0.1 costs
# iterations where the QPs dominate (corn errorrate -c 10000: 144 -> 169); 0 is the exact search.
FRACTION_OF_EPSILON = 0.03


@dataclass(frozen=True)
class Stop:
    """When a line search stops: after `calls` oracle calls at most (the two ends included), or when the best point
    found is within close_enough (absolute) of the model's minimum."""

    calls: int = CALLS
    close_enough: float = 0.0


def best_on_segment(evaluate: Callable[[float], Evaluation], C: float, n: int, w_b, w_t, at_b: tuple,
                    at_t: Evaluation, stop: Stop = Stop()) -> tuple[float, float, float]:
    """The best point of the segment w(l) = w_b + l (w_t - w_b), l in [0, 1], of the true objective
    f(l) = 1/2 |w(l)|^2 + C xi(l). f is the maximum of quadratics of curvature |d|^2 (d = w_t - w_b), one
    per output of the oracle (and xi = 0), each a lower bound of f everywhere. evaluate(l) is the oracle
    at the scores s_b + l (s_t - s_b) (svmstruct.train.evaluator): one oracle call, no product with X.
    A one-dimensional cutting-plane search: the pieces found at the two ends of the bracket (slope < 0
    on the left, >= 0 on the right) give a model max(q_lo, q_hi) <= f; the model's minimiser is evaluated
    next and replaces the end on its side, until f there is within round-off of the model's minimum, or within
    stop.close_enough (absolute) of it, or stop.calls are spent. at_b = (slack value at w_b, dcoef_b . (s_t - s_b));
    at_t the evaluation at w_t. Returns (step, f(step), the slack value at step)."""
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

    close_enough = stop.close_enough
    for _ in range(stop.calls - 2):
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
        if best[0] - lower <= max(TOLERANCE * abs(best[0]), close_enough) or not lo < step < hi:
            break
        f, slope, value = evaluated(step, evaluate(step))
        if f < best[0]:
            best = (f, step, value)
        if f - lower <= max(TOLERANCE * abs(f), close_enough):
            break
        if slope >= 0:
            hi, f_hi, slope_hi = step, f, slope
        else:
            lo, f_lo, slope_lo = step, f, slope
    return best[1], best[0], best[2]
