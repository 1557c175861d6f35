"""Hooks into the cutting-plane loop (train.loop.optimise calls them): Callback, and Progress (learn's lines);
checkpoint.Writer and the users' own are Callbacks too."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from svmstruct.train.loop_state import LoopState


class Callback:
    """A hook into the loop; subclass it and override what you need (tests/test_train.py records |w|)."""

    def iteration(self, row: dict, state: LoopState) -> bool | None:
        """After every iteration's step: row has iteration, gap (divided by C), primal, dual, constraints,
        seconds; state.w_best is the current best point. Return True to stop the run there (status "stopped"; the
        model is w_best)."""

    def resumable(self, state: LoopState, seconds: float) -> None:
        """Where the run could stop and be resumed from state (the end of an iteration, the iteration limit):
        checkpoints are written here (state.to_arrays(seconds))."""


class Progress(Callback):
    """Every iteration's row to a function (learn's progress lines)."""

    def __init__(self, show):
        self.show = show

    def iteration(self, row: dict, state: LoopState) -> None:
        self.show(row)
