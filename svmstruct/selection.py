"""The best of a C grid chosen by a measure on validation data (learn --validate, api.select_C; RankLib's
-validate; svm_struct users script it by hand)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from svmstruct import model
from svmstruct.evaluation import measures


@dataclass
class GridPoint:
    C: float
    value: float
    result: Any  # train.TrainResult
    model: model.Model


def select_model(models, validation, measure: str, rel_threshold: float = 0.0, log=None, after=None) -> tuple:
    """The model of a C grid (each with its TrainResult, as training.train_grid yields them) with the best mean
    `measure` on `validation` (after(result): called after each C's training). Returns (best GridPoint, all
    GridPoints)."""
    points = []
    for trained in models:
        C, result = float(trained.C or 0.0), trained.result
        if after:
            after(result)
        value = measures.measure_table(validation, model.score(trained, validation), [measure],
                                       rel_threshold)[measure]["all"]
        points.append(GridPoint(C, value, result, trained))
        if log:
            log(f"C {C:<10g} validation {measure} {value:.4f}  iterations {result.iterations}  "
                f"pval {result.primal:.5f}" + ("" if result.learned else "  (did not learn: w ~ 0)"))
    best = best_of(points, measure)
    best.model.select(measure, best.value, [p.C for p in points])
    return best, points


def best_of(points, measure: str):
    """The point with the best value of `measure` (ties: the smaller C)."""
    sign = -1.0 if measure in measures.LOWER_IS_BETTER else 1.0
    return max(points, key=lambda p: (sign * p.value, -p.C))
