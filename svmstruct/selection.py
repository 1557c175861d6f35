"""The best of a C grid chosen by a measure on validation data (learn --validate, api.select_C; RankLib's
-validate; svm_struct users script it by hand)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from svmstruct import model
from svmstruct.errors import UsageError
from svmstruct.evaluation import measures, tables
from svmstruct.options import parse_number


def parse_grid(text: str) -> list:
    """`1`, `0.01,0.1,1` -> sorted list of positive floats (svm_light's number syntax)."""
    try:
        values = sorted({parse_number(v.strip()) for v in str(text).split(",") if v.strip()})
    except ValueError:
        raise UsageError(f"-c takes a number or a comma-separated list of numbers, got '{text}'") from None
    if not values or min(values) <= 0 or not all(math.isfinite(v) for v in values):
        raise UsageError(f"-c values must be finite and positive, got '{text}'")
    return values


def check_measure(name: str) -> None:
    """UsageError for a measure `eval` does not know (checked before any training)."""
    try:
        measures.lookup(name)
    except KeyError as e:
        raise UsageError(e.args[0]) from None


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
        value = tables.measure_table(validation, model.score(trained, validation), [measure],
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
