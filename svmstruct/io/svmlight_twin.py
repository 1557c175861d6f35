"""The plain-Python twin of svmlight_parser.parse_lines, for small files (compute.paths): the same rows, values,
docids and first error, token by token as the kernel's careful path reads them, without numba's start-up.
tests/test_twins.py reads every input class both ways and compares the datasets and the errors."""
from __future__ import annotations

import math
import operator
import re

import numpy as np

from svmstruct.io.svmlight_codes import (
    BAD_INDEX,
    BAD_OPTION,
    BAD_QID,
    INDEX_TOO_LARGE,
    INDEX_TOO_SMALL,
    MALFORMED,
    MAX_INDEX,
    NOT_INCREASING,
    OPTION_MISPLACED,
    QID_MISPLACED,
)
from svmstruct.options import NON_FINITE, NUMBER

_DECIMAL = re.compile(NUMBER.encode() + rb"\Z")
_BLANKS = rb"[ \t\r\x0b\x0c]"
# the common form of a data line, read at once: a target, maybe qid:<digits>, index:value tokens
_PLAIN = re.compile(rb"%s*(%s)(?:%s+qid:([0-9]{1,18}))?((?:%s+[0-9]{1,10}:%s)*)%s*\Z" % (
    _BLANKS, NUMBER.encode(), _BLANKS, _BLANKS, NUMBER.encode(), _BLANKS))
_PAIR = re.compile(rb"([0-9]+):(\S+)")
_NON_FINITE = re.compile(NON_FINITE.encode(), re.IGNORECASE)
_INT = re.compile(rb"[+-]?[0-9]{1,18}\Z")  # svmlight_numbers._parse_int


class Rows:
    """What a parse gives, in the per-row arrays of io.data's readers: targets, qids, lines, the CSR features
    (float64 values, cast by the caller), each row's comment, the highest index and the number of lines."""

    def __init__(self):
        self.y: list = []
        self.qid: list = []
        self.has_qid: list = []
        self.lines: list = []
        self.comments: list = []  # each row's comment (bytes after its first '#'), or None
        self.indptr: list = [0]
        self.indices: list = []
        self.values: list = []
        self.highest = 0
        self.physical = 0


def parse(text: bytes, features: bool = True) -> tuple:
    """(Rows, the first problem (line, message) or None) of SVMlight TEXT (whole lines; a missing final newline
    is taken as there). features False: a line's target, qid, sid and cost are read, the rest up to the comment
    unread (eval, qrels), as the kernel reads them."""
    from svmstruct.io.svmlight_codes import MESSAGES

    rows = Rows()
    pieces = text.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    rows.physical = len(pieces)
    for line, piece in enumerate(pieces, 1):
        data, hash_, comment = piece.partition(b"#")
        plain = _PLAIN.match(data)
        if plain is not None and _plain_row(rows, plain, features):
            rows.lines.append(line)
            rows.comments.append(comment if hash_ else None)
            continue
        tokens = data.split()
        if not tokens:
            continue
        problem = _row(rows, tokens, features)
        if problem is not None:
            code, token, last = problem
            message = code if isinstance(code, str) else \
                MESSAGES[code].format(tok=token.decode("utf-8", "backslashreplace"), last=last)
            return rows, (line, message)
        rows.lines.append(line)
        rows.comments.append(comment if hash_ else None)
    return rows, None


def _plain_row(rows: Rows, plain: re.Match, features: bool) -> bool:
    """Read a line of the common form (_PLAIN) at once into ROWS: False, and nothing read, when one of its numbers is
    not finite or its indices are not increasing within 1..MAX_INDEX (the token-by-token reader says which)."""
    target = float(plain.group(1))
    if not math.isfinite(target):
        return False
    pairs = _PAIR.findall(plain.group(3)) if features else []
    if pairs:
        indices = [int(key) for key, _ in pairs]
        values = [float(value) for _, value in pairs]
        if not (0 < indices[0] and indices[-1] <= MAX_INDEX and all(map(operator.lt, indices, indices[1:]))
                and all(map(math.isfinite, values))):
            return False
        rows.indices.extend([index - 1 for index in indices])
        rows.values.extend(values)
        rows.highest = max(rows.highest, indices[-1])
    rows.y.append(target)
    rows.qid.append(int(plain.group(2)) if plain.group(2) is not None else 0)
    rows.has_qid.append(plain.group(2) is not None)
    if features:
        rows.indptr.append(len(rows.indices))
    return True


def _value(raw: bytes, what: str) -> tuple:
    """(value, None) of a number token as float() reads svm_light's syntax, or (None, its problem's message)."""
    value = float(raw) if _DECIMAL.match(raw) else None
    if value is None or not math.isfinite(value):
        problem = "is not finite" if value is not None or _NON_FINITE.match(raw) else "is not a number"
        return None, f"{what} {problem}: '{raw.decode('utf-8', 'backslashreplace')}'"
    return value, None


def _row(rows: Rows, tokens: list, features: bool) -> tuple | None:
    """Read one data line's tokens into ROWS: None, or (code or message, token, last index) of its problem."""
    target, problem = _value(tokens[0], "target")
    if problem is not None:
        return problem, b"", 0
    has_qid, qid, last = False, 0, 0
    indices, values = [], []
    for token in tokens[1:]:
        if not features and token[:1] not in (b"q", b"s", b"c"):
            break  # the features, unread
        colon = token.find(b":")
        if colon <= 0 or colon >= len(token) - 1:
            return MALFORMED, token, last
        key, value = token[:colon], token[colon + 1:]
        if b":" in value:
            return MALFORMED, token, last
        if key == b"qid":
            if has_qid or last > 0:
                return QID_MISPLACED, token, last
            if not _INT.match(value):
                return BAD_QID, value, last
            has_qid, qid = True, int(value)
            continue
        if key in (b"sid", b"cost"):
            if last > 0:
                return OPTION_MISPLACED, token, last
            if not (_INT if key == b"sid" else _DECIMAL).match(value):
                return BAD_OPTION, token, last
            if key == b"cost":
                _, problem = _value(value, "cost")
                if problem is not None:
                    return problem, b"", last
            continue
        ok = _INT.match(key) is not None
        index = int(key) if ok else 0
        if not ok or key[:1] in (b"+", b"-"):
            return (INDEX_TOO_SMALL, token, last) if ok and index < 1 else (BAD_INDEX, key, last)
        if index < 1:
            return INDEX_TOO_SMALL, token, last
        if index > MAX_INDEX:
            return INDEX_TOO_LARGE, key, last
        if index <= last:
            return NOT_INCREASING, token, last
        last = index
        number, problem = _value(value, "feature value")
        if problem is not None:
            return problem, b"", last
        indices.append(index - 1)
        values.append(number)
    rows.y.append(target)
    rows.qid.append(qid)
    rows.has_qid.append(has_qid)
    if features:
        rows.indices.extend(indices)
        rows.values.extend(values)
        rows.indptr.append(len(rows.indices))
        rows.highest = max(rows.highest, last)
    return None


def arrays(rows: Rows, features: bool, dtype) -> dict:
    """The per-row arrays (and CSR features) of ROWS as io.data's readers keep them."""
    with np.errstate(over="ignore"):  # float32 overflow: reported with its line after reading, as the kernel's
        values = np.array(rows.values, dtype=np.float64).astype(dtype)
    return dict(y=np.array(rows.y, dtype=np.float64), qid=np.array(rows.qid, dtype=np.int64),
                has_qid=np.array(rows.has_qid, dtype=np.bool_), lines=np.array(rows.lines, dtype=np.int64),
                indptr=np.array(rows.indptr if features else [0], dtype=np.int64),
                indices=np.array(rows.indices, dtype=np.int32), values=values)
