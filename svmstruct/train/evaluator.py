"""The scores and the oracle's answers of the cutting-plane loop (train.py) for one training problem.

The loop moves two points in weight space: w_b, the best point so far, and w_t, the QP's solution. It
asks for the most violated output at points of the segment between them, whose scores are
s_b + step (s_t - s_b) (step 1 is w_t itself), and for the cutting planes of some of those answers. It
never sees a score or a dcoef: an evaluator keeps them, so the same loop runs in one process
(LocalEvaluator) or over the shards of a cluster (svmstruct.train.distributed, which sums the shards' answers),
where per call only w or a step goes out and a few numbers (a d-vector for a cutting plane) come back.

Every answer is a sum over examples: `delta` the sum of Delta(y_i, ybar_i), `margin` dcoef . scores and
`slope` dcoef . (s_t - s_b) (with dcoef the per-row coefficients of Psi(x, y) - Psi(x, ybar), see
svmstruct.train.problem); the loop divides by n.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from svmstruct.compute import products
from svmstruct.train.problem import TrainingProblem


class Evaluation(NamedTuple):
    delta: float  # sum over the examples of Delta(y_i, ybar_i)
    margin: float  # dcoef . scores at the point
    slope: float  # dcoef . (s_t - s_b): the derivative of -margin along the segment


def combine(parts) -> Evaluation:
    """The sum of the shards' evaluations (in shard order, so every run adds them alike)."""
    delta = margin = slope = 0.0
    for part in parts:
        delta += part[0]
        margin += part[1]
        slope += part[2]
    return Evaluation(delta, margin, slope)


class LocalEvaluator:
    """The scores of w_b and w_t and the oracle's answers at the best point (step 0), at w_t (step 1) and
    at the latest step asked for; any other answer is recomputed when needed (the oracles are
    deterministic), so memory stays at a few vectors of the number of rows."""

    def __init__(self, problem: TrainingProblem):
        self.problem = problem
        rows = problem.X.shape[0]
        self._segment(np.zeros(rows), np.zeros(rows))
        self.shift = np.zeros(rows) if problem.latent_target is not None else None
        self._best: tuple | None = None  # (dcoef, delta) at s_b
        self._at_t: tuple | None = None  # at s_t
        self._latest: tuple | None = None  # (step, dcoef, delta)

    def _segment(self, s_b: np.ndarray, s_t: np.ndarray) -> None:
        """The scores of w_b and w_t, and their difference (used by every evaluation along the segment)."""
        self.s_b, self.s_t = s_b, s_t
        self.ds = s_t - s_b

    def _scores(self, step: float) -> np.ndarray:
        if step == 1.0:
            return self.s_t
        if step == 0.0:
            return self.s_b
        return self.s_b + step * self.ds

    def _oracle(self, scores: np.ndarray) -> tuple:
        dcoef, delta = self.problem.most_violated(scores)
        if self.shift is not None:
            dcoef = dcoef + self.shift
        return dcoef, float(delta)

    def _evaluation(self, found: tuple, scores: np.ndarray) -> Evaluation:
        dcoef, delta = found
        return Evaluation(delta, float(dcoef @ scores), float(dcoef @ self.ds))

    def _found(self, step: float) -> tuple:
        """The oracle's (dcoef, Delta) at a step of the current segment, kept or recomputed."""
        if self._latest is not None and self._latest[0] == step:
            return self._latest[1:]
        if step == 0.0 and self._best is not None:
            return self._best
        if step == 1.0 and self._at_t is not None:
            return self._at_t
        found = self._oracle(self._scores(step))
        if step == 0.0:
            self._best = found
        elif step == 1.0:
            self._at_t = found
        return found

    def evaluate(self, step: float) -> Evaluation:
        """The oracle at s_b + step (s_t - s_b) (fresh at step 0 after `reimpute`)."""
        found = self._found(step)
        if step not in (0.0, 1.0):
            self._latest = (step, *found)
        return self._evaluation(found, self._scores(step))

    def point(self, w: np.ndarray) -> tuple[float, Evaluation]:
        """Make w the new w_t: its scores, and (the best point's answer's slope along the new segment,
        the evaluation at w_t)."""
        self._segment(self.s_b, products.matvec(self.problem.X, w))
        self._at_t = self._latest = None
        return float(self._found(0.0)[0] @ self.ds), self.evaluate(1.0)

    def accept(self, step: float) -> None:
        """Move w_b to the step (0: stay); its answer becomes the best point's."""
        found = self._found(step)
        if step != 0.0:
            self._segment(self.s_t.copy() if step == 1.0 else self._scores(step), self.s_t)
        self._best = found
        self._latest = None

    def cut(self, step: float) -> tuple[np.ndarray, float]:
        """The cutting plane of the answer at the step: (X' dcoef, Delta sum), both unscaled by n."""
        dcoef, delta = self._found(step)
        return products.rmatvec(self.problem.X, dcoef), delta

    def cached_cut(self, w: np.ndarray) -> tuple[np.ndarray, float] | None:
        """The cutting plane (as cut's) at w of the problem's kept outputs (TrainingProblem.cached), or None."""
        if self.problem.cached is None:
            return None
        found = self.problem.cached(products.matvec(self.problem.X, w))
        if found is None:
            return None
        dcoef, delta = found
        if self.shift is not None:
            dcoef = dcoef + self.shift
        return products.rmatvec(self.problem.X, dcoef), float(delta)

    def kept(self) -> np.ndarray | None:
        """The outputs the problem kept from the oracle's answers, one array (TrainingProblem.kept_state), or None."""
        return self.problem.kept_state() if self.problem.kept_state is not None else None

    def restore_kept(self, state: np.ndarray) -> None:
        """Give the problem back the outputs kept (a checkpoint's: checked by the problem)."""
        if self.problem.restore_kept is not None:
            self.problem.restore_kept(state)

    def reimpute(self) -> np.ndarray | None:
        """Re-impute the latent target at w_b (problem.latent_target): X'(new shift - old shift), or None
        when the imputation is unchanged. Every kept answer is dropped (it holds the old target)."""
        assert self.shift is not None and self.problem.latent_target is not None
        shift = self.problem.latent_target(self.s_b)
        if np.array_equal(shift, self.shift):
            return None
        moved = products.rmatvec(self.problem.X, shift - self.shift)
        self.shift = shift
        self._best = self._at_t = self._latest = None
        return moved

    def restore(self, w_b: np.ndarray, w_t: np.ndarray, w_imputed: np.ndarray | None) -> None:
        """Rebuild the state from the weights alone (a shard reloaded after its worker was lost): the
        scores of w_b and w_t and the latent target imputed at w_imputed (None: never re-imputed)."""
        X = self.problem.X
        if self.shift is not None and w_imputed is not None:
            assert self.problem.latent_target is not None
            self.shift = self.problem.latent_target(products.matvec(X, w_imputed))
        self._segment(products.matvec(X, w_b), products.matvec(X, w_t))
        self._best = self._at_t = self._latest = None
