"""Typed options of the losses: each declares its keyword, command-line flags, type, constraint, default
and help once; the CLI's loss options, their --help and the Python API's keyword arguments are all
generated from these declarations (losses/base.py attaches them to the losses that take them).

A value is checked when it is parsed, before any data is read: `-c inf`, `--beta nan` or `-k 0` are
usage errors, not NaN models.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable

from svmstruct.errors import InputError


class UsageError(InputError):
    """An option that is malformed, out of range or does not apply (the CLI exits 2)."""

    exit_code = 2


@dataclass(frozen=True)
class Option:
    name: str  # keyword in opts dicts and the Python API, e.g. "beta"
    flags: tuple  # command-line spellings, e.g. ("--beta",)
    kind: str  # "float", "int", "str" or "flag"
    help: str
    default: Any = None  # None: not set (the loss decides, or the option is off)
    check: Callable[[Any], str | None] | None = None  # an error message for a bad (parsed) value, or None
    metavar: str | None = None
    required: bool = False  # the loss cannot train without it (e.g. div's --subtopics)

    @property
    def flag(self) -> str:
        return self.flags[-1] if self.flags[-1].startswith("--") else self.flags[0]

    def but(self, **changes) -> "Option":
        """The same option with another default or help (a loss that takes it differently)."""
        return replace(self, **changes)

    def parse(self, value: Any) -> Any:
        """The value converted to the option's type and checked; UsageError names the flag."""
        if value is None:
            return None
        try:
            if self.kind == "float":
                parsed: Any = float(value)
            elif self.kind == "int":
                parsed = _integer(value)
            elif self.kind == "flag":
                parsed = bool(value)
            else:
                parsed = str(value)
        except (TypeError, ValueError):
            raise UsageError(f"{self.flag} takes {'an integer' if self.kind == 'int' else 'a number'}, "
                             f"got '{value}'") from None
        if self.kind == "float" and not math.isfinite(parsed):
            raise UsageError(f"{self.flag} must be a finite number, got '{value}'")
        problem = self.check(parsed) if self.check else None
        if problem:
            raise UsageError(f"{self.flag} {problem}, got '{value}'")
        return parsed


def _integer(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(value)
        return int(value)
    return int(str(value).strip())


def at_least(low: float) -> Callable[[Any], str | None]:
    return lambda v: None if v >= low else f"must be at least {low:g}"


def above(low: float) -> Callable[[Any], str | None]:
    return lambda v: None if v > low else f"must be greater than {low:g}"


def between(low: float, high: float) -> Callable[[Any], str | None]:
    return lambda v: None if low <= v <= high else f"must be between {low:g} and {high:g}"


def positive_int(v: Any) -> str | None:
    return None if v >= 1 else "must be at least 1"


# ---- options shared by several loss families

REL_THRESHOLD = Option("rel_threshold", ("--rel-threshold",), "float",
                       "a label above this is positive / relevant", default=0.0, metavar="T")
K = Option("k", ("-k",), "int", "the cut-off k", check=positive_int, metavar="K")
