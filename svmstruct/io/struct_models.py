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

import itertools

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


def read(lines: list, path: str) -> tuple:
    """(problem: 'multiclass' | 'hmm', its options, w in svmstruct's layout) of an original's model file."""
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
    else:
        highest, D, K, t, e, loss, count = (value(i) for i in (7, 8, 9, 10, 11, 12, 13))
        count -= 1
        if not (0 <= e <= t <= 3):
            raise InputError(f"orders of transitions {t} and emissions {e}: svm_hmm's are 0 <= --e <= --t <= 3", path,
                             11)
        options = {"tags": K, "features": D, "transitions": t, "emissions": e, "loss_function": loss}
    if min(K, D) < 1 or highest > 1 << 31 or count < 0:
        raise InputError("the model's classes, features or support vectors are not counts", path, 2)
    original = np.zeros(highest + 1)
    rows = lines[heads:heads + count]
    if len(rows) != count:
        raise InputError(f"expected {count} support vector lines, found {len(rows)}", path, len(lines))
    for number, row in enumerate(rows, heads + 1):
        tokens = row.split("#")[0].split()
        try:
            alpha = float(tokens[0])
            for token in tokens[1:]:
                if token.startswith("qid:"):
                    continue
                index, _, text = token.partition(":")
                original[int(index)] += alpha * float(text)
        except (ValueError, IndexError):
            raise InputError(f"malformed support vector line '{row[:60]}'", path, number) from None
    if not np.all(np.isfinite(original)):
        raise InputError("the weights are not finite", path, heads + 1)
    mapping = multiclass_indices(K, D) if kind == "multiclass" else hmm_indices(K, D, options["transitions"],
                                                                                options["emissions"])
    if mapping.max(initial=0) > highest:
        raise InputError(f"the model's highest feature index {highest} is below its layout's {mapping.max()}", path, 11)
    return kind, options, original[mapping]


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


def multiclass_indices(K: int, D: int) -> np.ndarray:
    """svm_multiclass's index of every weight of svmstruct's layout (class-major blocks of D)."""
    return (np.arange(K)[:, None] * D + np.arange(1, D + 1)[None, :]).ravel()


def hmm_indices(K: int, D: int, t: int, e: int) -> np.ndarray:
    """svm_hmm's index of every weight of svmstruct's layout (module docstring)."""
    base = sum(K ** (o + 1) for o in range(t + 1)) + 1
    features = np.arange(1, D + 1)
    parts = [(base + D * np.arange(1, K + 1)[:, None] + features[None, :]).ravel()]
    for o in range(1, t + 1):
        parts.append(np.array([sum(tag * K ** (o - j) for j, tag in enumerate(tags))
                               for tags in itertools.product(range(1, K + 1), repeat=o + 1)], dtype=np.int64))
    if e:
        pairs = np.array([b + a * K for a in range(1, K + 1) for b in range(1, K + 1)], dtype=np.int64)
        parts.append((base + D * pairs[:, None] + features[None, :]).ravel())
    return np.concatenate(parts).astype(np.int64)
