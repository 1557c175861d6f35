"""Loss families and the registry: the one extension point (DESIGN.md section 2).

A loss family is a module that turns a Dataset into a svmstruct.problem.TrainingProblem (the design
matrix, the number of examples and the most-violated-constraint oracle).

Adding a loss = one module with a build function + one line in REGISTRY below.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from svmstruct.errors import InputError
from svmstruct.problem import TrainingProblem  # noqa: F401  (re-exported for the loss modules)


@dataclass(frozen=True)
class Loss:
    name: str  # canonical name written to the model file
    aliases: tuple  # other accepted spellings, e.g. svm_perf's numeric -l code
    family: str  # perf | rank | map | dorm | div
    summary: str  # one line for --help and the README
    build: Callable  # build(data: Dataset, opts: dict) -> TrainingProblem
    default_epsilon: float


def _registry() -> dict:
    from svmstruct.losses import div, dorm, perf, rank

    losses = [*perf.LOSSES, *rank.LOSSES, *dorm.LOSSES, *div.LOSSES]
    return {loss.name: loss for loss in losses}


REGISTRY: dict = _registry()


def lookup(name: str) -> tuple[Loss, dict]:
    """The loss called `name` (canonical name or alias, case-insensitive) and the options its name sets.

    A name like ``prec@10`` or ``ndcg@5`` selects the loss registered as ``prec@k`` / ``ndcg@k`` with k set.
    """
    key = name.strip().lower()
    for loss in REGISTRY.values():
        if key == loss.name or key in loss.aliases:
            return loss, {}
    base, at, k = key.partition("@")
    if at and k.isdigit() and int(k) > 0:
        for loss in REGISTRY.values():
            if base + "@k" == loss.name or base + "@k" in loss.aliases:
                return loss, {"k": int(k)}
    known = ", ".join(f"{l.name} ({'/'.join(l.aliases)})" if l.aliases else l.name for l in REGISTRY.values())
    raise InputError(f"unknown loss '{name}'; known losses: {known}")
