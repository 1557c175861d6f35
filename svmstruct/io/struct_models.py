"""The model files of svm_multiclass V2.20 and svm_hmm V3.10, read into and written from the weights of
svmstruct's SVM-multiclass and SVM-hmm problems (svmstruct.problems.multiclass, .hmm), so that a model moves either
way: `classify` reads theirs, `learn --format svm_multiclass | svm_hmm` writes one their classify programs read.

Both are svm_light files of one linear support vector whose weights are indexed by svm_struct's Psi:
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

import numpy as np

from svmstruct.errors import InputError

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
    model file. The header
    is checked before anything is allocated: its highest feature index must be its layout's (K D + 1 for
    svm_multiclass, the hmm layout's largest index + 1, as both originals and our writer write it), and a layout far
    larger than the weights the file holds is refused (a few edited bytes must not cost gigabytes)."""
    kind = kind_of(lines[0])
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
    from svmstruct.io.model_text import id_values

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
