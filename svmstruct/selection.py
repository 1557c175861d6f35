"""Training runs as the CLI and the experiment scripts use them: one model, or the best of a C grid
chosen by a measure on validation data (RankLib's -validate; svm_struct users script it by hand)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmstruct import evaluate, model, train
from svmstruct.errors import InputError

LOWER_IS_BETTER = {"error"}


def parse_grid(text: str) -> list:
    """`1`, `0.01,0.1,1` -> sorted list of positive floats."""
    try:
        values = sorted({float(v) for v in str(text).split(",") if v.strip()})
    except ValueError:
        raise InputError(f"-c takes a number or a comma-separated list of numbers, got '{text}'") from None
    if not values or min(values) <= 0:
        raise InputError(f"-c values must be positive, got '{text}'")
    return values


def fit(loss, opts: dict, dataset, C: float, epsilon: float, max_iterations: int = 100000, progress=None):
    """Train one model: returns (Model, TrainResult)."""
    problem = loss.build(dataset, opts)
    result = train.train(problem, C, epsilon, max_iterations, progress)
    return model.from_training(loss, opts, dataset, problem, result, C, epsilon), result


@dataclass
class GridPoint:
    C: float
    value: float
    result: train.TrainResult
    model: model.Model


def select_C(loss, opts: dict, dataset, validation, measure: str, grid: list, epsilon: float,
             max_iterations: int = 100000, log=None) -> tuple:
    """Train for every C of the grid; keep the model with the best mean `measure` on `validation`
    (ties: the smaller C). Returns (best GridPoint, all GridPoints)."""
    points = []
    for C in grid:
        trained, result = fit(loss, opts, dataset, C, epsilon, max_iterations)
        value = evaluate.measure_table(validation, model.score(trained, validation), [measure],
                                       float(opts.get("rel_threshold") or 0.0))[measure]["all"]
        points.append(GridPoint(C, value, result, trained))
        if log:
            log(f"C {C:<10g} validation {measure} {value:.4f}  iterations {result.iterations}  pval {result.primal:.5f}")
    best = best_of(points, measure)
    best.model.header.update(selected_by=measure, validation_value=float(best.value),
                             grid=",".join(f"{p.C:g}" for p in points))
    return best, points


def best_of(points, measure: str):
    """The point with the best value of `measure` (ties: the smaller C)."""
    sign = -1.0 if measure in LOWER_IS_BETTER else 1.0
    return max(points, key=lambda p: (sign * p.value, -p.C))
