"""Model files' text, read exactly and written as the readers read it: the weight lines of svmstruct's format (a
million weights read and written at once in numba, a few line by line without it), its integers and numbers with the
file and line of what is wrong, and the model files of svm_multiclass V2.20 and svm_hmm V3.10.

The originals' files are read into and written from the weights of svmstruct's SVM-multiclass and SVM-hmm problems
(svmstruct.problems.multiclass, .hmm), so that a model moves either way: `classify` reads theirs, `learn --format
svm_multiclass | svm_hmm` writes one their classify programs read. Both are svm_light files of one linear support
vector whose weights are indexed by svm_struct's Psi:
- svm_multiclass: 14 header lines (version, classes K, features D, loss function, kernel type and its five
  parameters, highest feature index, training documents, support vectors + 1, threshold), then `alpha qid:0
  index:value ...`; class c (1-based), feature f at (c - 1) D + f.
- svm_hmm: 15 header lines (version, kernel type and its five parameters, highest feature index, features D, tags
  K, transition order t, emission order e, loss function, support vectors + 1, threshold), then `alpha
  index:value ...`. Tags are 1-based and an n-gram of tags a, ..., c is the number a...c in base K (tags as
  digits): transitions of order o at that number, emissions at E + D x + f, E = K + K^2 + ... + K^(t+1) + 1, x the
  tag (order 0) or the pair's number (order 1).
svmstruct's layout: multiclass the same blocks; hmm emissions of order 0 (K blocks of D), transitions of orders
1..t (0-based tags, the earliest most significant), emissions of order 1 (K^2 blocks of D).
"""
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


MULTICLASS, HMM = "SVM-multiclass Version", "SVM-HMM Version"
PROBLEMS = {"multiclass": "svmstruct.problems.multiclass:Multiclass",  # the problem of each original's models
            "hmm": "svmstruct.problems.hmm:HMM"}
FORMATS = {"svm_multiclass": "multiclass", "svm_hmm": "hmm"}  # learn --format: the original it writes for
_KERNEL = ("0 # kernel type", "3 # kernel parameter -d ", "1 # kernel parameter -g ", "1 # kernel parameter -s ",
           "1 # kernel parameter -r ", "empty# kernel parameter -u ")


def kind_of(first_line: str) -> str | None:
    """'multiclass', 'hmm' or None for the first line of a model file."""
    return "multiclass" if first_line.startswith(MULTICLASS) else "hmm" if first_line.startswith(HMM) else None


LAYOUT_FLOOR = 1 << 24  # a layout of up to this many weights is read whatever the file holds (128 MB of doubles)
LAYOUT_PER_WEIGHT = 16  # beyond it, at most this many weights of the layout per weight the file writes


def read(lines: list, path: str) -> tuple:
    """(problem: 'multiclass' | 'hmm', its options, w in svmstruct's layout, each option's line) of an original's
    model file. The header is checked before anything is allocated: its highest feature index must be its layout's
    (K D + 1 for svm_multiclass, the hmm layout's largest index + 1, as both originals and our writer write it),
    and a layout far larger than the weights the file holds is refused (a few edited bytes must not cost
    gigabytes)."""
    kind = kind_of(lines[0]) or ""
    if not kind:
        raise InputError("not a model of svm_multiclass or svm_hmm", path, 1)
    heads = 14 if kind == "multiclass" else 15
    if len(lines) < heads:
        raise InputError(f"the {kind} model's header is cut short ({len(lines)} lines)", path, len(lines))

    def value(i: int) -> int:
        text = lines[i].split("#")[0].strip()
        try:
            return int(text)
        except ValueError:
            raise InputError(f"expected an integer, found '{text}'", path, i + 1) from None

    kernel = 4 if kind == "multiclass" else 1
    if value(kernel) != 0:
        raise InputError("only linear models (kernel type 0) of the originals are read", path, kernel + 1)
    if kind == "multiclass":
        K, D, loss, highest, count = value(1), value(2), value(3), value(10), value(12) - 1
        options = {"classes": K, "features": D, "loss_function": loss}
        at = {"classes": 2, "features": 3, "loss_function": 4}
        at_highest = 11
    else:
        highest, D, K, t, e, loss, count = (value(i) for i in (7, 8, 9, 10, 11, 12, 13))
        count -= 1
        if not (0 <= e <= t <= 3):
            raise InputError(f"orders of transitions {t} and emissions {e}: svm_hmm's are 0 <= --e <= --t <= 3", path,
                             11)
        options = {"tags": K, "features": D, "transitions": t, "emissions": e, "loss_function": loss}
        at = {"features": 9, "tags": 10, "transitions": 11, "emissions": 12, "loss_function": 13}
        at_highest = 8
    if min(K, D) < 1 or count < 0:
        raise InputError("the model's classes, features or support vectors are not counts", path, 2)
    expected = layout_highest(kind, K, D, options) + 1
    if highest != expected:
        described = f"{K} classes x {D} features + 1" if kind == "multiclass" else \
            f"{K} tags, {D} features, transitions of order {options['transitions']}, emissions of order {e}"
        raise InputError(f"the highest feature index {highest} is not the layout's {expected} ({described}): the "
                         "header does not fit the model (an edited or damaged file?)", path, at_highest)
    rows = lines[heads:heads + count]
    if len(rows) != count:
        raise InputError(f"expected {count} support vector lines, found {len(rows)}", path, len(lines))
    size = layout_size(kind, K, D, options)
    written = sum(row.count(":") for row in rows)
    if size > max(LAYOUT_FLOOR, LAYOUT_PER_WEIGHT * written):
        raise InputError(f"the header's layout has {size} weights and the file writes {written}: refusing to allocate "
                         f"{8 * size / 2**30:.1f} GB for it (an edited or damaged file?)", path, at_highest)
    ids, weights = _support_vectors(rows, heads + 1, highest, path)
    mapping = multiclass_indices(K, D) if kind == "multiclass" else hmm_indices(K, D, options["transitions"], e)
    w = np.zeros(len(mapping))
    if len(ids):
        found = np.minimum(np.searchsorted(ids, mapping), len(ids) - 1)
        hit = ids[found] == mapping
        w[hit] = weights[found[hit]]
    return kind, options, w, at


def _support_vectors(rows: list, first: int, highest: int, path: str) -> tuple:
    """(sorted original indices, their summed weights alpha x value) of the support vector lines."""
    ids, weights = [], []
    for number, row in enumerate(rows, first):
        tokens = row.split("#")[0].split()
        try:
            alpha = float(tokens[0])
            index, value = _index_values([t.replace(":", " ", 1) for t in tokens[1:] if not t.startswith("qid:")])
        except (ValueError, IndexError, OverflowError):
            raise InputError(f"malformed support vector line '{row[:60]}'", path, number) from None
        if len(index) and (index.min() < 1 or index.max() > highest):
            raise InputError(f"a feature index outside 1..{highest} (the header's highest)", path, number)
        ids.append(index)
        weights.append(alpha * value)
    unique, where = np.unique(np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64), return_inverse=True)
    summed = np.zeros(len(unique))
    np.add.at(summed, where.ravel(), np.concatenate(weights) if weights else np.zeros(0))
    if not np.all(np.isfinite(summed)):
        raise InputError("the weights are not finite", path, first)
    return unique, summed


def _index_values(pairs: list) -> tuple:
    """(indices, values) of 'index value' strings, as int() and float() read them (ValueError if one is not)."""
    read = id_values(pairs)
    if read is not None:
        return read
    split = [pair.split(" ") for pair in pairs]
    if any(len(parts) != 2 for parts in split):
        raise ValueError("not index:value")
    return (np.array([int(i) for i, _ in split], dtype=np.int64), np.array([float(v) for _, v in split]))


def format(kind: str, options: dict, w: np.ndarray, documents: int) -> str:
    """The original's model file of svmstruct's weights w (kind 'multiclass' | 'hmm')."""
    if kind == "multiclass":
        K, D = int(options["classes"]), int(options["features"])
        mapping = multiclass_indices(K, D)
        head = [f"{MULTICLASS} V2.20", f"{K} # number of classes", f"{D} # number of base features",
                f"{int(options.get('loss_function') or 0)} # loss function", *_KERNEL,
                f"{int(mapping.max()) + 1} # highest feature index ", f"{documents} # number of training documents "]
        prefix = "1 qid:0 "
    else:
        K, D = int(options["tags"]), int(options["features"])
        t, e = int(options.get("transitions", 1)), int(options.get("emissions", 0))
        mapping = hmm_indices(K, D, t, e)
        head = [f"{HMM} V3.10", *_KERNEL, f"{int(mapping.max()) + 1} # highest feature index ",
                f"{D} # number of emission features ", f"{K} # number of classes ",
                f"{t} # HMM order of transitions ", f"{e} # HMM order of emissions ",
                f"{int(options.get('loss_function', 1))} # loss function "]
        prefix = "1 "
    order = np.argsort(mapping, kind="stable")
    weights = " ".join(f"{int(mapping[j])}:{float(w[j]):.8g}" for j in order if w[j] != 0)
    return "\n".join([*head, "2 # number of support vectors plus 1 ",
                      "0 # threshold b, each following line is a SV (starting with alpha*y)",
                      f"{prefix}{weights} #"]) + "\n"


def layout_highest(kind: str, K: int, D: int, options: dict) -> int:
    """The original's largest weight index for K classes (tags) and D features (Python integers: no overflow)."""
    if kind == "multiclass":
        return K * D
    t, e = int(options["transitions"]), int(options["emissions"])
    base = sum(K ** (o + 1) for o in range(t + 1)) + 1
    return base + D * (K * (K + 1) + 1 if e else K + 1)


def layout_size(kind: str, K: int, D: int, options: dict) -> int:
    """The number of weights of svmstruct's layout (Python integers: no overflow)."""
    if kind == "multiclass":
        return K * D
    t, e = int(options["transitions"]), int(options["emissions"])
    return K * D + sum(K ** (o + 1) for o in range(1, t + 1)) + (K * K * D if e else 0)


def multiclass_indices(K: int, D: int) -> np.ndarray:
    """svm_multiclass's index of every weight of svmstruct's layout (class-major blocks of D)."""
    return (np.arange(K)[:, None] * D + np.arange(1, D + 1)[None, :]).ravel()


def hmm_indices(K: int, D: int, t: int, e: int) -> np.ndarray:
    """svm_hmm's index of every weight of svmstruct's layout (module docstring). The n-grams of order o in
    lexicographic order (the earliest tag most significant) are the numbers c + sum_j K^j, c = 0 .. K^(o+1) - 1."""
    base = sum(K ** (o + 1) for o in range(t + 1)) + 1
    features = np.arange(1, D + 1, dtype=np.int64)
    parts = [(base + D * np.arange(1, K + 1, dtype=np.int64)[:, None] + features[None, :]).ravel()]
    for o in range(1, t + 1):
        parts.append(np.arange(K ** (o + 1), dtype=np.int64) + sum(K ** j for j in range(o + 1)))
    if e:
        pairs = (np.arange(1, K + 1, dtype=np.int64)[:, None] * K + np.arange(1, K + 1, dtype=np.int64)).ravel()
        parts.append((base + D * pairs[:, None] + features[None, :]).ravel())
    return np.concatenate(parts)
