"""Typed options of the losses: each declares its keyword, command-line flags, type, constraint, default
and help once; the CLI's loss options, their --help and the Python API's keyword arguments are all
generated from these declarations (losses/base.py attaches them to the losses that take them).

A value is checked when it is parsed, before any data is read: `-c inf`, `--beta nan` or `-k 0` are
usage errors, not NaN models.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any, Callable

from svmstruct.errors import UsageError

MAX_ITERATIONS = 100000  # the default iteration limit of a training run (-#)

# svm_light's number syntax (what strtod reads completely): no underscores, no non-ASCII digits, no spaces; the
# spellings of what float() reads but is not finite; an integer. The patterns of options, files and models.
NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
NON_FINITE = r"[+-]?(?:nan|inf|infinity)\Z"
INTEGER = r"[+-]?[0-9]+\Z"
_NUMBER = re.compile(NUMBER + r"\Z")
_INTEGER = re.compile(INTEGER)
SCORE_FORMATS = ("scores", "trec")  # what classify writes for a model that scores (losses.base.Loss.formats)
LARGEST_INTEGER = 2**31 - 1  # integer options (k) and feature indices (stored 0-based in int32) are at most this
LARGEST_SCALE = 1e6  # scale-like options (--b, --p, --beta, ERU's alpha and neutral vote) stay within this


def parse_number(value: Any) -> float:
    """A number in svm_light's syntax (or a Python int/float), finite: ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, (int, float)):
        parsed = float(value)
    elif isinstance(value, str) and _NUMBER.match(value):
        parsed = float(value)
    else:
        raise ValueError(value)
    if not math.isfinite(parsed):
        raise ValueError(value)
    return parsed


def parse_integer(value: Any) -> int:
    """A decimal integer (or a Python int, or an integral float) of at most LARGEST_INTEGER in magnitude."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(value)
        parsed = int(value)
    elif isinstance(value, int):
        parsed = value
    elif isinstance(value, str) and _INTEGER.match(value):
        parsed = int(value)
    else:
        raise ValueError(value)
    if abs(parsed) > LARGEST_INTEGER:
        raise OverflowError(value)
    return parsed


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
                parsed: Any = parse_number(value)
            elif self.kind == "int":
                parsed = parse_integer(value)
            elif self.kind == "flag":
                parsed = bool(value)
            else:
                parsed = str(value)
        except OverflowError:
            raise UsageError(f"{self.flag} must be at most {LARGEST_INTEGER} in magnitude, got '{value}'") from None
        except (TypeError, ValueError):
            raise UsageError(f"{self.flag} takes {'an integer' if self.kind == 'int' else 'a finite number'}, "
                             f"got '{value}'") from None
        problem = self.check(parsed) if self.check else None
        if problem:
            raise UsageError(f"{self.flag} {problem}, got '{value}'")
        return parsed


def at_least(low: float) -> Callable[[Any], str | None]:
    return lambda v: None if v >= low else f"must be at least {low:g}"


def above(low: float) -> Callable[[Any], str | None]:
    return lambda v: None if v > low else f"must be greater than {low:g}"


def above_at_most(low: float, high: float) -> Callable[[Any], str | None]:
    return lambda v: None if low < v <= high else f"must be above {low:g} and at most {high:g}"


def between(low: float, high: float) -> Callable[[Any], str | None]:
    return lambda v: None if low <= v <= high else f"must be between {low:g} and {high:g}"


def positive_int(v: Any) -> str | None:
    return None if v >= 1 else "must be at least 1"


# ---- options shared by several loss families

REL_THRESHOLD = Option("rel_threshold", ("--rel-threshold",), "float",
                       "a label above this is positive / relevant", default=0.0, metavar="T")
K = Option("k", ("-k",), "int", "the cut-off k", check=positive_int, metavar="K")  # at most LARGEST_INTEGER
