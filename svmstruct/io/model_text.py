"""The text of model files read exactly, with the file and line of what is wrong: integers, numbers and the weight
lines of svmstruct's format (a million weights read at once in numba, a few line by line without it)."""
from __future__ import annotations

import re

import numpy as np

from svmstruct.errors import InputError
from svmstruct.options import INTEGER, NUMBER

_INTEGER = re.compile(INTEGER)
_DECIMAL = re.compile(NUMBER + r"\Z")
_INTEGER_BYTES = re.compile(INTEGER.encode())
_DECIMAL_BYTES = re.compile(NUMBER.encode() + rb"\Z")
_BLANK_TEXT = " \t\n\r\x0b\x0c"  # the characters of a blank line
_BLANK_BYTES = _BLANK_TEXT.encode()
_BLANK = np.frombuffer(_BLANK_TEXT.encode(), dtype=np.uint8)
TWIN_LINES = 100_000  # a model of up to this many weight lines is read line by line, without numba


def weights_text(ids: np.ndarray, weights: np.ndarray) -> str:
    """The `index value` lines of 1-based IDS and their WEIGHTS, as f"{j} {v!r}" writes them (joined by newlines):
    by io.float_text's kernel where that pays (compute.paths), else by repr itself."""
    from svmstruct.compute import paths

    if paths.compiled(len(ids), TWIN_LINES, "svmstruct.io.float_text"):
        from svmstruct.io import float_text

        return float_text.id_value_lines(ids, weights)
    return "\n".join(f"{j} {v!r}" for j, v in zip(np.asarray(ids).tolist(), np.asarray(weights, dtype=float).tolist()))


def id_values(pairs: list) -> tuple | None:
    """(ids, values) of `index value` strings as int() and float() read them, or None when one has another form or
    is not ASCII (the caller reads it by itself to say why): io.float_text's kernel where that pays."""
    from svmstruct.compute import paths

    if paths.compiled(len(pairs), TWIN_LINES, "svmstruct.io.float_text"):
        from svmstruct.io import float_text

        return float_text.read_id_value_lines(pairs)
    if not all(pair.isascii() for pair in pairs):
        return None
    split = [pair.split() for pair in pairs]
    if not all(len(parts) == 2 and _INTEGER.match(parts[0]) and _DECIMAL.match(parts[1]) for parts in split):
        return None
    return np.array([int(i) for i, _ in split], dtype=np.int64), np.array([float(v) for _, v in split])


def weight_lines(lines, count: int, n_features: int, path: str) -> tuple:
    """(0-based ids, weights) of the COUNT `index value` lines that follow in LINES (io.lines.Lines), and nothing
    after them but blank lines: read from the file's bytes at once in numba (io.float_text) where that pays
    (compute.paths), else, and wherever the kernel finds a line it does not take, one line at a time."""
    from svmstruct.compute import paths

    if paths.compiled(count, TWIN_LINES, "svmstruct.io.float_text"):
        read = _weight_block(lines, count, n_features)
        if read is not None:
            return read
    return _weight_rows(lines, count, n_features, path)


def _weight_block(lines, count: int, n_features: int) -> tuple | None:
    """_weight_lines by the kernel, or None when a line is not the kernel's `index value` form, an id is outside
    1..n_features, a weight not finite, a line missing or more than blank lines after them (_weight_rows says which)."""
    from svmstruct.io import float_text

    buf = lines.buffer()
    ids, weights, bad, end = float_text.read_id_value_block(buf, count)
    if bad >= 0 or not np.isin(buf[end:], _BLANK).all():
        return None
    if np.any((ids < 1) | (ids > n_features)) or not np.all(np.isfinite(weights)):
        return None
    ids -= 1
    return ids, weights


def _weight_rows(lines, count: int, n_features: int, path: str) -> tuple:
    """_weight_lines without numba: all lines split and converted at once where every one is right (_weight_bulk),
    else one line at a time (each decoded alone): the first line that is wrong says why."""
    found = _weight_bulk(lines, count, n_features)
    if found is not None:
        return found
    body = lines.number
    ids, weights = np.empty(count, dtype=np.int64), np.empty(count)
    for k in range(count):
        if lines.done():
            raise InputError(f"expected {count} weight lines, found {k}", path, lines.count())
        ids[k], weights[k] = _weight_line(lines.next(), n_features, path, body + 1 + k)
    while not lines.done():
        if lines.next().strip(_BLANK_TEXT):
            total = lines.count()
            raise InputError(f"expected {count} weight lines, found {total - body}", path, total)
    return ids, weights


def _weight_bulk(lines, count: int, n_features: int) -> tuple | None:
    """(0-based ids, weights) of the COUNT weight lines of LINES when every one is two ASCII tokens, an integer in
    1..n_features and a finite decimal, and only blank lines follow (what the line-by-line reader takes, read as
    it reads them); else None. Nothing of LINES is consumed."""
    raw = lines.blob[lines.at:]
    if not raw.isascii():
        return None
    rows = raw.split(b"\n")
    if rows and rows[-1] == b"":
        rows.pop()
    if len(rows) < count or any(row.strip(_BLANK_BYTES) for row in rows[count:]):
        return None
    pairs = [row.split() for row in rows[:count]]
    if any(len(pair) != 2 for pair in pairs):
        return None
    keys, texts = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    if not (all(map(_INTEGER_BYTES.match, keys)) and all(map(_DECIMAL_BYTES.match, texts))):
        return None
    try:
        ids = np.array([int(key) for key in keys], dtype=np.int64)
    except OverflowError:
        return None
    weights = np.array([float(text) for text in texts], dtype=np.float64)
    if np.any((ids < 1) | (ids > n_features)) or not np.all(np.isfinite(weights)):
        return None
    ids -= 1
    return ids, weights


def _weight_line(text: str, n_features: int, path: str, lineno: int) -> tuple:
    """(0-based id, weight) of one `index value` line; InputError at LINENO says what is wrong with it."""
    parts = text.split()
    if len(parts) != 2:
        raise InputError(f"malformed weight line '{text}'", path, lineno)
    return integer(parts[0], path, lineno, 1, n_features) - 1, number(parts[1], path, lineno)


def integer(text: str, path: str, line: int, low: int = -(2**62), high: int = 2**62) -> int:
    if not _INTEGER.match(text.strip(" \t")):  # (str.strip would also take control characters such as \x1c)
        raise InputError(f"expected an integer, found '{text}'", path, line)
    value = int(text.strip(" \t"))
    if not low <= value <= high:
        raise InputError(f"{value} is outside {low}..{high}", path, line)
    return value


def number(text: str, path: str, line: int) -> float:
    if not _DECIMAL.match(text.strip(" \t")):
        raise InputError(f"expected a number, found '{text}'", path, line)
    v = float(text.strip(" \t"))
    if not np.isfinite(v):
        raise InputError(f"value is not finite: '{text}'", path, line)
    return v
