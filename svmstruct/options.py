"""The syntax of numbers in options, files and models (svm_light's), the checks options declare, and the limits
every room shares; it imports nothing of the package (svmstruct.spec.Option parses with these).
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable

MAX_ITERATIONS = 100000  # the default iteration limit of a training run (-#)

# svm_light's number syntax (what strtod reads completely): no underscores, no non-ASCII digits, no spaces; the
# spellings of what float() reads but is not finite; an integer. The patterns of options, files and models.
NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
NON_FINITE = r"[+-]?(?:nan|inf|infinity)\Z"
INTEGER = r"[+-]?[0-9]+\Z"
_NUMBER = re.compile(NUMBER + r"\Z")
_INTEGER = re.compile(INTEGER)
SCORE_FORMATS = ("scores", "trec")  # what classify writes for a model that scores (spec.Loss.formats)
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
