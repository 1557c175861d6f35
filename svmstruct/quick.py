"""`classify TEST MODEL [OUTPUT]` on a small file, and `eval`'s reading of labels, qids and docids from a
file of up to LABELS bytes, without loading numba or scipy (their import and the kernels' cache cost
about half a second; a Makefile that scores and evaluates many small files pays it every time).

It applies only where its answer is the full path's, to the bit: a regular, uncompressed TEST of at most
SMALL bytes whose every line is plain (`target [qid:N] index:value ...`, indices increasing, values plain
decimals, an optional `# comment`), a model that scores w.x - b (an svm_light model, or ours whose header
says `output scores`) without query normalisation or compacted feature ids. Each score is summed in the
order of the line's features, as the numba kernel does (tests/test_quick.py compares both paths). For
anything else it returns None and the full path runs, errors and all.
"""
from __future__ import annotations

import os
import re

SMALL = 1 << 21  # bytes: classify scores files up to this size here (MQ2008 S5, 1.8 MB: 0.33 s against 0.81 s)
LABELS = 1 << 22  # bytes: eval reads files up to this size here (~20 µs a LETOR line)
TRAINING = 1 << 23  # bytes: learn reads files up to this size here (MQ2008 S1, 1.8 MB: 0.06 s; numba's 0.4 s)
_DECIMAL = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_PAIR = re.compile(rb"([0-9]+):(\S+)\Z")
_PLAIN = re.compile(rb"[ \t!-~]*\Z")  # printable ASCII, spaces and tabs: no byte the full reader treats otherwise
HIGHEST_INDEX = (1 << 31) - 1
FLOAT32_MAX = 3.4028234663852886e38  # features are stored in single precision: beyond, the full reader's error
QID_DIGITS = INDEX_DIGITS = 18  # the full reader's limits (svmlight_parser: at most 18 digits)


def classify(test_path: str, model_path: str) -> str | None:
    """The text `classify --format scores` writes, or None when the full path must run."""
    content = _small_plain_bytes(test_path, SMALL)
    if content is None or model_path == "-" or not _small_regular(model_path, 1 << 26):
        return None
    rows = _parse(content)
    if not rows:
        return None
    import numpy as np

    from svmstruct import model as models
    from svmstruct.errors import SvmStructError

    try:
        trained = models.load_model(model_path)
    except SvmStructError:
        return None
    if (not trained.scores or trained.columns is not None or trained.normalize != "none" or trained.kernel is not None
            or trained.precision != "float32"):
        return None
    w = trained.w.tolist()
    # features in single precision, as the full path reads them (and the originals' classify programs)
    lines = []
    for features in rows:
        total = 0.0
        for index, value in features:  # a feature the model does not know weighs 0 (and still adds 0 x value)
            total += float(np.float32(value)) * (w[index - 1] if index <= len(w) else 0.0)
        lines.append(f"{total - trained.threshold:.8f}\n")
    return "".join(lines)


def _small_plain_bytes(path: str, limit: int) -> bytes | None:
    """The bytes of a regular, uncompressed file of at most `limit` bytes (not stdin), else None."""
    if path == "-" or not _small_regular(path, limit):
        return None
    with open(path, "rb") as f:
        content = f.read(limit + 1)
    return None if len(content) > limit or content[:2] == b"\x1f\x8b" else content


def _small_regular(path: str, limit: int = SMALL) -> bool:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return os.path.isfile(path) and st.st_size <= limit


class _NotPlain(Exception):
    """A line the quick paths leave to the full reader."""


def _plain_lines(content: bytes):
    """(line number, target token, qid or 0, the text of the features, the comment) of every data line, as
    the full reader reads them; _NotPlain at the first line that is not plain (non-ASCII or control bytes
    before a comment, a malformed target or qid, a qid that comes back after another, mixed qids)."""
    seen: set = set()
    previous = with_qid = None
    for number, raw in enumerate(content.split(b"\n"), 1):
        line = raw[:-1] if raw.endswith(b"\r") else raw
        data, hash_, comment = line.partition(b"#")
        if not _PLAIN.match(data):
            raise _NotPlain
        head = data.split(None, 2)
        if not head:
            if line and not line.startswith(b"#"):
                raise _NotPlain
            continue
        if not _DECIMAL.match(head[0]) or not _finite(head[0]):
            raise _NotPlain
        has_qid = len(head) > 1 and head[1].startswith(b"qid:")
        if with_qid is None:
            with_qid = has_qid
        if has_qid != with_qid:
            raise _NotPlain
        qid = 0
        if has_qid:
            digits = head[1][4:]
            if not (digits.isdigit() and len(digits) <= QID_DIGITS and int(digits) > 0):
                raise _NotPlain
            qid = int(digits)
            if qid != previous:
                if qid in seen:
                    raise _NotPlain
                seen.add(qid)
                previous = qid
        last = head[1] if has_qid else head[0]
        yield number, head[0], qid, data[data.index(last) + len(last):], comment if hash_ else b""


def _parse(content: bytes) -> list | None:
    """Every data line's (index, value) pairs, or None at the first line that is not plain (or with none)."""
    rows = []
    try:
        for _, _, _, text, _ in _plain_lines(content):
            features = []
            last = 0
            for token in text.split():
                match = _PAIR.match(token)
                if not match or len(match.group(1)) > INDEX_DIGITS or not _DECIMAL.match(match.group(2)):
                    return None
                index = int(match.group(1))
                value = float(match.group(2))
                if not last < index <= HIGHEST_INDEX or not abs(value) <= FLOAT32_MAX:  # the full path reports it
                    return None
                features.append((index, value))
                last = index
            rows.append(features)
    except _NotPlain:
        return None
    return rows or None  # no data line: the full reader says so


def read_dataset(path: str, n_features: int | None, dtype, layout: str):
    """The Dataset data.read_svmlight gives for a small training file whose every line is plain (the rules
    of read_labels) and that it would store dense (layout dense, or auto where dense is smaller): the same
    arrays to the bit (tests/test_small_inputs.py), without numba or scipy. None: the full reader must read
    it. Values are converted by numpy's text parser (correctly rounded, as float()) and stored in dtype."""
    import numpy as np

    content = _small_plain_bytes(path, TRAINING)
    rows = None if content is None or layout == "sparse" else _scan_labels(content, keep_features=True)
    if rows is None:
        return None
    labels, qid_values, comments, lines, texts = rows
    per_row = np.array([text.count(b":") for text in texts], dtype=np.int64)
    numbers = np.fromstring(b" ".join(texts).replace(b":", b" "), sep=" ")  # index, value, index, value, ...
    if len(numbers) != 2 * int(per_row.sum()):
        return None
    indices, values = numbers[0::2], numbers[1::2]  # indices: at most 18 digits (checked), whole floats
    follows = np.ones(len(indices), dtype=bool)  # an index after another of its line, for all lines at once
    follows[(np.cumsum(per_row) - per_row)[per_row > 0]] = False
    if len(indices) and not (indices.min() >= 1 and indices.max() <= HIGHEST_INDEX
                             and np.all(np.diff(indices)[follows[1:]] > 0)):
        return None  # the full reader names the line
    indices = indices.astype(np.int64)
    highest = int(indices.max(initial=0))
    width = max(highest, n_features or 0)
    itemsize = np.dtype(dtype).itemsize
    if not np.all(np.isfinite(values)) or (itemsize == 4 and np.any(np.abs(values) > FLOAT32_MAX)):
        return None  # the full reader names the line
    from svmstruct.data import COMPACT_ABOVE

    if width > COMPACT_ABOVE or (layout == "auto" and len(labels) * width * itemsize > len(values) * (itemsize + 4)):
        return None  # sparse: a CSR matrix (scipy), or compacted columns
    X = np.zeros((len(labels), width), dtype=dtype)
    X[np.repeat(np.arange(len(labels)), per_row), indices - 1] = values.astype(dtype)
    return _dataset(X, labels, qid_values, comments, lines, path)


def _dataset(X, labels: list, qid_values: list, comments: list, lines: list, path: str):
    """A documents.Dataset of what _scan_labels read, its docids and queries as the full reader's."""
    import numpy as np

    from svmstruct import documents

    y = np.array(labels, dtype=np.float64)
    qid = np.array(qid_values, dtype=np.int64)
    line = np.array(lines, dtype=np.int64)
    has_qid = bool(qid_values) and qid_values[0] > 0
    qptr = documents.group_queries(qid, line, path) if has_qid else np.array([0, len(y)], dtype=np.int64)
    docids = documents.Docids()
    docids.extend([(documents.docid_from_comment(c) or f"L{n}").encode() for c, n in zip(comments, lines)])
    return documents.Dataset(X, y, qid, qptr, docids.freeze(), line, path, has_qid)


def _finite(token: bytes) -> bool:
    value = float(token)
    return value not in (float("inf"), float("-inf"))


_FEATURES = re.compile(rb"(?:[ \t]+[0-9]{1,18}:[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)*[ \t]*\Z")
_INDEX = re.compile(rb"[ \t]([0-9]+):")


def read_labels(path: str):
    """The file's labels, qids and docids as a documents.Dataset without features (X has no columns), or
    None when the full reader must decide: only a regular, uncompressed file of at most LABELS bytes whose
    every line is plain (as classify's; features checked for syntax, increasing indices and finite values)
    is read here, so this accepts exactly what the full reader accepts and reads it alike."""
    content = _small_plain_bytes(path, LABELS)
    rows = None if content is None else _scan_labels(content)
    if rows is None:
        return None
    import numpy as np


    labels, qid_values, comments, lines = rows
    return _dataset(np.zeros((len(labels), 0)), labels, qid_values, comments, lines, path)


def _scan_labels(content: bytes, keep_features: bool = False):
    """(labels, qids (0 without), comments, line numbers[, the features' texts]) of every data line, or None
    at the first line that is not plain (classify's _parse's rules, the feature values checked for syntax
    and range only; with keep_features the caller checks the indices and values)."""
    labels: list = []
    qids: list = []
    comments: list = []
    lines: list = []
    texts: list = []
    try:
        for number, target, qid, features, comment in _plain_lines(content):
            if not _FEATURES.match(features) or not (keep_features or _increasing(features)):
                return None
            labels.append(float(target))
            qids.append(qid)
            comments.append(comment)
            lines.append(number)
            if keep_features:
                texts.append(features)
    except _NotPlain:
        return None
    if not labels:
        return None
    return (labels, qids, comments, lines, texts) if keep_features else (labels, qids, comments, lines)


def _increasing(features: bytes) -> bool:
    """Indices strictly increasing from 1 to HIGHEST_INDEX, and every value finite (an exponent can overflow)."""
    indices = [int(i) for i in _INDEX.findall(features)]
    if indices and not (0 < indices[0] and indices[-1] <= HIGHEST_INDEX
                        and all(a < b for a, b in zip(indices, indices[1:]))):
        return False
    if b"e" in features or b"E" in features:
        return all(_finite(token.split(b":", 1)[1]) for token in features.split() if b"e" in token.lower())
    return True
