"""Model files: svmstruct's plain-text format (exact round trip, atomic write) and svm_light's linear models.

svmstruct format::

    svmstruct-model 1
    loss rocarea
    option.k 10                 # the loss's options, one per line
    C 1.0
    ...                         # more `key value` header lines (training statistics)
    threshold 0.25              # scores are w.x - threshold
    weights 3                   # then one `index value` line per nonzero weight (index >= 1)
    1 0.5
    ...

Floats are written with repr(), which round-trips exactly. svm_light / svm_perf / svm_rank linear
models (`SVM-light Version V6.20`) are read as w = sum of alpha_y * support vector, scores w.x - b,
and can be written for the originals' classify programs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from svmstruct.errors import InputError

MAGIC = "svmstruct-model"
VERSION = 1


@dataclass
class Model:
    w: np.ndarray  # float64 weight of feature index j+1 at position j
    threshold: float = 0.0  # b: scores are X @ w - b
    loss: str = "errorrate"
    options: dict = field(default_factory=dict)  # loss options (strings), e.g. {"k": "10"}
    header: dict = field(default_factory=dict)  # C, epsilon, bias, statistics (strings or numbers)
    format: str = "svmstruct"  # or "svmlight" for a model read from the originals
    result: Any = field(default=None, repr=False, compare=False)  # the TrainResult of a model just trained

    @property
    def n_features(self) -> int:
        return len(self.w)

    def predict(self, dataset) -> np.ndarray:
        """Scores w.x - b, one per row of the dataset."""
        return score(self, dataset)

    def save(self, path: str, fmt: str = "svmstruct") -> None:
        save_model(self, path, fmt)


def _number(text: str) -> str:
    return repr(float(text)) if isinstance(text, float) else str(text)


def format_model(model: Model) -> str:
    lines = [f"{MAGIC} {VERSION}", f"loss {model.loss}"]
    for key, value in model.options.items():
        lines.append(f"option.{key} {_number(value)}")
    for key, value in model.header.items():
        lines.append(f"{key} {_number(value)}")
    lines.append(f"n_features {model.n_features}")
    lines.append(f"threshold {float(model.threshold)!r}")
    nz = np.flatnonzero(model.w)
    lines.append(f"weights {len(nz)}")
    lines.extend(f"{j + 1} {float(model.w[j])!r}" for j in nz)
    return "\n".join(lines) + "\n"


def save_model(model: Model, path: str, fmt: str = "svmstruct") -> None:
    """Write the model to `path` (`-`: stdout) atomically, in svmstruct's format or svm_light's."""
    from svmstruct import io

    io.write_output(path, format_svmlight(model) if fmt == "svmlight" else format_model(model))


def load_model(path: str) -> Model:
    """Read a model in svmstruct's format or svm_light's linear format (detected from the first line)."""
    from svmstruct import io

    with io.open_text(path, "model") as f:
        try:
            lines = f.read().splitlines()
        except OSError as e:
            raise InputError(f"cannot read model: {e.strerror}", path) from None
    path = io.display_name(path)
    if not lines:
        raise InputError("empty model file", path, 1)
    if lines[0].startswith(MAGIC):
        return _parse_svmstruct(lines, path)
    if lines[0].startswith("SVM-light Version"):
        return _parse_svmlight(lines, path)
    raise InputError(f"not a model file (first line '{lines[0][:40]}')", path, 1)


def _parse_svmstruct(lines: list, path: str) -> Model:
    parts = lines[0].split()
    if len(parts) != 2 or parts[1] != str(VERSION):
        raise InputError(f"unsupported model version '{lines[0]}'", path, 1)
    model = Model(w=np.zeros(0))
    n_features = n_weights = None
    body = None
    for lineno, text in enumerate(lines[1:], 2):
        key, _, value = text.partition(" ")
        if not key or not value:
            raise InputError(f"malformed header line '{text}'", path, lineno)
        if key == "loss":
            model.loss = value
        elif key.startswith("option."):
            model.options[key[len("option."):]] = value
        elif key == "n_features":
            n_features = _int(value, path, lineno)
        elif key == "threshold":
            model.threshold = _float(value, path, lineno)
        elif key == "weights":
            n_weights = _int(value, path, lineno)
            body = lineno
            break
        else:
            model.header[key] = value
    if n_features is None or n_weights is None or body is None:
        raise InputError("model header lacks 'n_features' or 'weights'", path, len(lines))
    rows = lines[body: body + n_weights]
    if len(rows) != n_weights or any(l.strip() for l in lines[body + n_weights:]):
        raise InputError(f"expected {n_weights} weight lines, found {len(lines) - body}", path, len(lines))
    w = np.zeros(n_features)
    for lineno, text in enumerate(rows, body + 1):
        parts = text.split()
        if len(parts) != 2:
            raise InputError(f"malformed weight line '{text}'", path, lineno)
        index = _int(parts[0], path, lineno)
        if not 1 <= index <= n_features:
            raise InputError(f"weight index {index} outside 1..{n_features}", path, lineno)
        w[index - 1] = _float(parts[1], path, lineno)
    model.w = w
    return model


def _parse_svmlight(lines: list, path: str) -> Model:
    """svm_light V6 model: 10 header lines `value # label`, threshold b on line 11, then SV lines."""
    if len(lines) < 11:
        raise InputError("truncated svm_light model header", path, len(lines))

    def value(lineno: int) -> str:
        return lines[lineno - 1].split("#")[0].strip()

    if value(2) != "0":
        raise InputError(f"only linear svm_light models (kernel type 0) are supported, not '{value(2)}'", path, 2)
    highest = _int(value(8), path, 8)
    n_sv = _int(value(10), path, 10) - 1
    threshold = _float(value(11), path, 11)
    w = np.zeros(highest)
    sv_lines = lines[11:]
    if len(sv_lines) < n_sv:
        raise InputError(f"expected {n_sv} support vector lines, found {len(sv_lines)}", path, len(lines))
    for lineno, text in enumerate(sv_lines[:n_sv], 12):
        tokens = text.split("#")[0].split()
        if not tokens:
            raise InputError("empty support vector line", path, lineno)
        alpha = _float(tokens[0], path, lineno)
        for tok in tokens[1:]:
            idx, sep, val = tok.partition(":")
            if not sep:
                raise InputError(f"malformed token '{tok}'", path, lineno)
            j = _int(idx, path, lineno)
            if not 1 <= j <= highest:
                raise InputError(f"feature index {j} outside 1..{highest}", path, lineno)
            w[j - 1] += alpha * float(np.float32(_float(val, path, lineno)))  # svm_light reads FVAL = float
    return Model(w=w, threshold=threshold, loss="svmlight", format="svmlight")


def format_svmlight(model: Model) -> str:
    """The model as an svm_light V6.20 linear model, readable by svm_perf_classify / svm_rank_classify."""
    nz = np.flatnonzero(model.w)
    highest = int(model.header.get("highest_index", model.n_features))
    weights = " ".join(f"{j + 1}:{float(model.w[j]):.8g}" for j in nz)
    header = [
        "SVM-light Version V6.20",
        "0 # kernel type",
        "3 # kernel parameter -d ",
        "1 # kernel parameter -g ",
        "1 # kernel parameter -s ",
        "1 # kernel parameter -r ",
        "empty# kernel parameter -u ",
        f"{highest} # highest feature index ",
        "1 # number of training documents ",
        "2 # number of support vectors plus 1 ",
        f"{float(model.threshold):.8g} # threshold b, each following line is a SV (starting with alpha*y)",
        f"1 {weights} #",
    ]
    return "\n".join(header) + "\n"


def _int(text: str, path: str, line: int) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"expected an integer, found '{text}'", path, line) from None


def _float(text: str, path: str, line: int) -> float:
    try:
        v = float(text)
    except ValueError:
        raise InputError(f"expected a number, found '{text}'", path, line) from None
    if not np.isfinite(v):
        raise InputError(f"value is not finite: '{text}'", path, line)
    return v


def from_training(loss, opts: dict, dataset, problem, result, C: float, epsilon: float) -> Model:
    """The model of a finished training run; the bias column's weight becomes the threshold."""
    w = np.asarray(result.w, dtype=float)
    threshold = 0.0
    header = {"C": float(C), "epsilon": float(epsilon)}
    if problem.bias:
        header["bias"] = float(problem.bias)
        header["bias_weight"] = float(w[-1])
        header["highest_index"] = len(w)  # svm_perf counts the bias feature
        threshold = -float(problem.bias) * float(w[-1])
        w = w[:-1]
    header.update(
        train_file=dataset.path,
        documents=dataset.n_docs,
        examples=problem.n,
        skipped_examples=problem.skipped,
        iterations=result.iterations,
        constraints=result.constraints,
        converged=int(result.converged),
        status=result.status.replace(" ", "-"),
        gap=float(result.primal - result.dual),
        primal=float(result.primal),
        dual=float(result.dual),
        xi=float(result.xi),
    )
    options = {k: v for k, v in sorted(opts.items()) if v is not None and v is not False and k != "bias"}
    return Model(w=w, threshold=threshold, loss=loss.name, options=options, header=header, result=result)


def score(model: Model, dataset) -> np.ndarray:
    """w.x - b for every row; features beyond the model's width are ignored (as svm_light does).

    A model of the originals is applied as their classify programs do, to single-precision feature
    values (svm_light's FVAL is a float), so their predictions are reproduced to the last printed digit.
    """
    import scipy.sparse as sp

    from svmstruct import sparse_ops

    w = np.zeros(dataset.n_features)
    common = min(len(w), model.n_features)
    w[:common] = model.w[:common]
    X = dataset.X
    if model.format == "svmlight" and X.dtype != np.float32:
        if isinstance(X, np.ndarray):
            X = X.astype(np.float32)
        else:
            X = sp.csr_matrix((X.data.astype(np.float32), X.indices, X.indptr), shape=X.shape)
    return sparse_ops.matvec(X, w) - model.threshold
