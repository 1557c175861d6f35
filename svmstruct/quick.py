"""Small plain files without numba or scipy (their import and the kernels' cache cost about half a second; a
Makefile that trains, scores and evaluates many small files pays it every time): `classify TEST MODEL
[OUTPUT]`, `eval`'s reading of labels, qids and docids, and `learn`'s reading of a training file it stores
dense, each up to its size in svmstruct.small.

It applies only where its answer is the full path's, to the bit: a regular, uncompressed file whose every
line is plain (`target [qid:N] index:value ...`, indices increasing, values plain decimals, an optional
`# comment`); for classify a model that scores w.x - b (an svm_light model, or ours whose header says
`output scores`) without query normalisation or compacted feature ids. The lines' features are converted
all at once by numpy's text parser (correctly rounded, as float()); each score is summed in the order of
the line's features, as the numba kernel does (tests/test_quick.py, tests/test_small_inputs.py and the
fuzzer compare both paths). For anything else it returns None and the full path runs, errors and all.
"""
from __future__ import annotations

import os
import re

from svmstruct import small

_DECIMAL = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_PLAIN = re.compile(rb"[ \t!-~]*\Z")  # printable ASCII, spaces and tabs: no byte the full reader treats otherwise
HIGHEST_INDEX = (1 << 31) - 1
FLOAT32_MAX = 3.4028234663852886e38  # features are stored in single precision: beyond, the full reader's error
QID_DIGITS = 18  # the full reader's limit (svmlight_parser: at most 18 digits; _FEATURES: indices alike)


def classify(test_path: str, model_path: str) -> str | None:
    """The text `classify --format scores` writes, or None when the full path must run."""
    content = _small_plain_bytes(test_path, small.CLASSIFY_BYTES)
    if content is None or model_path == "-" or not _small_regular(model_path, 1 << 26):
        return None
    features = plain_features(content)
    if features is None:
        return None
    import numpy as np

    from svmstruct import model as models
    from svmstruct.errors import SvmStructError

    per_row, indices, values = features
    try:
        trained = models.load_model(model_path)
    except SvmStructError:
        return None
    if (not trained.scores or trained.columns is not None or trained.normalize != "none" or trained.kernel is not None
            or trained.precision != "float32"):
        return None
    # features in single precision, as the full path reads them (and the originals' classify programs); a
    # feature the model does not know weighs 0 (and still adds 0 x value)
    known = len(trained.w)
    weights = np.append(trained.w, 0.0)[np.where(indices <= known, indices - 1, known)]
    products = values.astype(np.float32).astype(np.float64) * weights
    return "".join(f"{total - trained.threshold:.8f}\n" for total in _row_sums(products, per_row).tolist())


def plain_features(content: bytes):
    """(features per line, indices, values) of every data line of a plain file whose values are within
    single precision's range (classify reads them as float), or None: the full path decides."""
    import numpy as np

    rows = _scan_labels(content)
    features = None if rows is None else _feature_arrays(rows[4])
    if features is None or np.any(np.abs(features[2]) > FLOAT32_MAX):
        return None  # the full reader reads it, or names the line
    return features


def _row_sums(products, per_row):
    """Each line's products added left to right from 0.0, as the kernels do: the lines side by side as
    rows padded with -0.0 (x + -0.0 is x, also for x = 0.0 and -0.0), added column by column."""
    import numpy as np

    longest = int(per_row.max(initial=0))
    padded = np.full((len(per_row), longest), -0.0)
    row = np.repeat(np.arange(len(per_row)), per_row)
    padded[row, np.arange(len(row)) - np.repeat(np.cumsum(per_row) - per_row, per_row)] = products
    total = np.zeros(len(per_row))
    for k in range(longest):
        total += padded[:, k]
    return total


def _small_plain_bytes(path: str, limit: int) -> bytes | None:
    """The bytes of a regular, uncompressed file of at most `limit` bytes (not stdin), else None."""
    if path == "-" or not _small_regular(path, limit):
        return None
    with open(path, "rb") as f:
        content = f.read(limit + 1)
    return None if len(content) > limit or content[:2] == b"\x1f\x8b" else content


def _small_regular(path: str, limit: int) -> bool:
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


def read_dataset(path: str, n_features: int | None, dtype, layout: str):
    """The Dataset data.read_svmlight gives for a small training file whose every line is plain (the rules
    of read_labels) and that it would store dense (layout dense, or auto where dense is smaller): the same
    arrays to the bit (tests/test_small_inputs.py), without numba or scipy. None: the full reader must read
    it. Values are converted by numpy's text parser (correctly rounded, as float()) and stored in dtype."""
    import numpy as np

    content = _small_plain_bytes(path, small.TRAINING_BYTES)
    rows = None if content is None or layout == "sparse" else _scan_labels(content)
    if rows is None:
        return None
    labels, qid_values, comments, lines, texts = rows
    features = _feature_arrays(texts)
    if features is None:
        return None
    per_row, indices, values = features
    highest = int(indices.max(initial=0))
    width = max(highest, n_features or 0)
    itemsize = np.dtype(dtype).itemsize
    if itemsize == 4 and np.any(np.abs(values) > FLOAT32_MAX):
        return None  # the full reader names the line
    from svmstruct.data import COMPACT_ABOVE

    if width > COMPACT_ABOVE or (layout == "auto" and len(labels) * width * itemsize > len(values) * (itemsize + 4)):
        return None  # sparse: a CSR matrix (scipy), or compacted columns
    X = np.zeros((len(labels), width), dtype=dtype)
    X[np.repeat(np.arange(len(labels)), per_row), indices - 1] = values.astype(dtype)
    return _dataset(X, labels, qid_values, comments, lines, path)


def _feature_arrays(texts: list):
    """(features per line, their indices, their values as float64) of the lines' feature texts (syntax
    checked by _FEATURES), converted by numpy's text parser (correctly rounded, as float()), or None where
    the full reader must decide: an index not above the one before it or beyond the largest, a value that
    is not finite. Every line at once."""
    import numpy as np

    per_row = np.array([text.count(b":") for text in texts], dtype=np.int64)
    text = b" ".join(texts).replace(b":", b" ").strip()  # index value index value ...
    try:
        numbers = np.fromstring(text, sep=" ") if text else np.zeros(0)  # (blank text would give [-1.0])
    except ValueError:  # not expected after _FEATURES: the full reader decides
        return None
    if len(numbers) != 2 * int(per_row.sum()):
        return None
    indices, values = numbers[0::2], numbers[1::2]  # indices: at most 18 digits (checked), whole floats
    follows = np.ones(len(indices), dtype=bool)  # an index after another of its line
    follows[(np.cumsum(per_row) - per_row)[per_row > 0]] = False
    if len(indices) and not (indices.min() >= 1 and indices.max() <= HIGHEST_INDEX
                             and np.all(np.diff(indices)[follows[1:]] > 0) and np.all(np.isfinite(values))):
        return None
    return per_row, indices.astype(np.int64), values


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


def read_labels(path: str):
    """The file's labels, qids and docids as a documents.Dataset without features (X has no columns), or
    None when the full reader must decide: only a regular, uncompressed file of at most small.LABELS_BYTES whose
    every line is plain (as classify's) is read here, so this reads it as the full reader does (which reads no
    feature either: eval needs none)."""
    content = _small_plain_bytes(path, small.LABELS_BYTES)
    rows = None if content is None else _scan_labels(content)
    if rows is None:
        return None
    import numpy as np

    labels, qid_values, comments, lines, _ = rows
    return _dataset(np.zeros((len(labels), 0)), labels, qid_values, comments, lines, path)


def _scan_labels(content: bytes):
    """(labels, qids (0 without), comments, line numbers, the features' texts) of every data line, or None
    at the first line that is not plain (_plain_lines) or whose features are not `index:decimal` tokens;
    the caller checks indices and values (_feature_arrays)."""
    labels: list = []
    qids: list = []
    comments: list = []
    lines: list = []
    texts: list = []
    try:
        for number, target, qid, features, comment in _plain_lines(content):
            if not _FEATURES.match(features):
                return None
            labels.append(float(target))
            qids.append(qid)
            comments.append(comment)
            lines.append(number)
            texts.append(features)
    except _NotPlain:
        return None
    return (labels, qids, comments, lines, texts) if labels else None
