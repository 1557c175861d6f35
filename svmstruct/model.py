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

A kernel model (learn -t) has `kernel rbf` and its parameters `kernel.degree`, `kernel.gamma`,
`kernel.coef_lin`, `kernel.coef_const` before n_features, and instead of the weights `basis m` and one line
per basis vector, `beta index:value ...` (increasing indices): scores sum_j beta_j k(b_j, x) - threshold.
A structured problem's model over a kernel map (learn --problem ... -t) has the same `kernel*` lines, then
`map.basis m` and one `index:value ...` line per basis vector of the map phi(x) = L^-1 [k(b_j, x)]_j (L the
Cholesky factor of the basis's Gram matrix, recomputed on reading), then its weights of phi's features.

Floats are written with repr(), which round-trips exactly. svm_light / svm_perf / svm_rank linear
models (`SVM-light Version V6.20`) are read as w = sum of alpha_y * support vector, scores w.x - b,
and can be written for the originals' classify programs.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from svmstruct.errors import InputError, UsageError
from svmstruct.io.model_files import integer, number, weight_lines, weights_text
from svmstruct.kernels.table import TYPES, Kernel
from svmstruct.options import LARGEST_INTEGER

MAGIC = "svmstruct-model"
VERSION = 1
MAX_INDEX = LARGEST_INTEGER  # the largest feature index (as the reader)
DENSE_LIMIT = 1 << 24  # a model whose feature ids go beyond this keeps its weights sparse (`columns`)


@dataclass
class Model:
    w: np.ndarray  # float64 weights: of feature index j+1 at position j, or of index columns[j]+1
    threshold: float = 0.0  # b: scores are X @ w - b
    loss: str = "errorrate"
    options: dict = field(default_factory=dict)  # loss options (strings), e.g. {"k": "10"}
    header: dict = field(default_factory=dict)  # C, epsilon, bias, statistics (strings or numbers)
    format: str = "svmstruct"  # or "svmlight", "svm_multiclass", "svm_hmm" for a model read from the originals
    result: Any = field(default=None, repr=False, compare=False)  # the TrainResult of a model just trained
    summary: Any = field(default=None, repr=False, compare=False)  # and its problem.TrainingSummary
    columns: np.ndarray | None = None  # sorted 0-based feature ids of the entries of w (hashed ids); None: dense
    kernel: Any = None  # a kernels.KernelExpansion: svm_light's kernel models score sum_j coef_j k(b_j, x) - b
    feature_map: Any = None  # a problem's nystroem.KernelMap (learn --problem ... -t): w weighs phi(x), not x
    lines: dict = field(default_factory=dict, repr=False, compare=False)  # header key -> its line in the file read

    # the header read through typed fields (its lines are written and read back as text)
    @property
    def C(self) -> float | None:
        return _header_float(self.header, "C")

    @property
    def epsilon(self) -> float | None:
        return _header_float(self.header, "epsilon")

    @property
    def normalize(self) -> str:
        """How features are transformed before scoring: none, query (applied by score) or global (folded)."""
        return str(self.header.get("normalize", "none"))

    @property
    def scores(self) -> bool:
        """classify writes w.x - b for it (svm_light models, and ours whose loss has no output of its own)."""
        return self.format == "svmlight" or self.header.get("output") == "scores"

    @property
    def highest_index(self) -> int:
        """svm_light's highest feature index (the bias feature counted where svm_perf counts it)."""
        return int(self.header.get("highest_index", self.n_features))

    @property
    def precision(self) -> str:
        """How learn stored the training features, and so how classify reads test features: float32 (the
        default, as svm_light) or float64 (learn --float64, header `precision float64`)."""
        return str(self.header.get("precision", "float32"))

    def trained_in_double_precision(self) -> None:
        """Record that learn stored the features in double precision (--float64)."""
        self.header["precision"] = "float64"

    def select(self, measure: str, value: float, grid: list) -> None:
        """Record that this model won a C grid (learn --validate): the measure, its value, the grid."""
        self.header.update(selected_by=measure, validation_value=float(value), grid=",".join(f"{C:g}" for C in grid))

    @property
    def n_features(self) -> int:
        """The highest feature index the model knows."""
        if self.columns is None:
            return len(self.w)
        return int(self.columns[-1]) + 1 if len(self.columns) else 0

    def entries(self) -> tuple[np.ndarray, np.ndarray]:
        """(0-based feature ids, weights) of the stored weights: the nonzero ones and any -0.0."""
        keep = np.flatnonzero((self.w != 0) | np.signbit(self.w))
        ids = keep if self.columns is None else self.columns[keep]
        return ids.astype(np.int64), self.w[keep]

    def set_learned(self, learned: bool) -> None:
        """The did_not_learn header line (after objective_at_zero) when the model did not learn, none when it did."""
        if learned or "did_not_learn" in self.header:
            if learned:
                self.header.pop("did_not_learn", None)
            return
        items = list(self.header.items())
        at = next((i + 1 for i, (key, _) in enumerate(items) if key == "objective_at_zero"), len(items))
        self.header = dict(items[:at] + [("did_not_learn", 1)] + items[at:])

    def set_kernel(self, expansion) -> None:
        """Make this model (trained on a kernel map's features) the kernel expansion: scores
        sum_j beta_j k(b_j, x) - b over raw features, the weights of the mapped features dropped."""
        self.kernel = expansion
        self.w, self.columns = np.zeros(expansion.basis.highest_index), None
        self.header.pop("highest_index", None)  # the bias counted as a mapped feature

    def set_feature_map(self, mapping) -> None:
        """Keep the kernel map a problem's weights were trained over (learn --problem ... -t): the map a model file
        holds, its factor recomputed from the kept basis (the same one where no vector was dropped), so that the
        model predicts alike before and after a round trip."""
        from svmstruct.kernels.nystroem import KernelMap

        self.feature_map = KernelMap.over(mapping.kernel, mapping.basis) if mapping.dropped else mapping

    def predict(self, dataset) -> np.ndarray:
        """Scores w.x - b, one per row of the dataset."""
        return score(self, dataset)

    def save(self, path, fmt: str = "svmstruct") -> None:
        save_model(self, path, fmt)


def _header_float(header: dict, key: str) -> float | None:
    value = header.get(key)
    return None if value is None else float(value)


def _number(value) -> str:
    """A header value as one line: floats with repr (exact), text as is unless a reader could not get it back
    (line breaks, other unprintable characters, surrounding spaces, a leading quote): then JSON-quoted."""
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if text and text.isprintable() and text == text.strip() and not text.startswith('"'):
        return text
    return json.dumps(text)


def _text(value: str) -> str:
    """A header value as written by _number."""
    if value.startswith('"'):
        try:
            decoded = json.loads(value)
            if isinstance(decoded, str):
                return decoded
        except ValueError:
            pass
    return value


# header keys the format gives a meaning of its own, and the prefixes of its own keys
RESERVED_KEYS = ("loss", "n_features", "threshold", "weights", "basis", "kernel", "map.basis")
RESERVED_PREFIXES = ("kernel.", "option.", "map.")


def _check_key(key, where: str) -> str:
    """A header or option key as one token a reader gets back as itself (a programming error otherwise)."""
    text = str(key)
    if not text or not text.isprintable() or " " in text or (where == "header" and (
            text in RESERVED_KEYS or text.startswith(RESERVED_PREFIXES))):
        raise ValueError(f"model {where} key {text!r} cannot be written (a reserved or not a one-word key)")
    return text


def format_model(model: Model) -> str:
    lines = [f"{MAGIC} {VERSION}", f"loss {_number(model.loss)}"]
    for key, value in model.options.items():
        lines.append(f"option.{_check_key(key, 'option')} {_number(value)}")
    for key, value in model.header.items():
        lines.append(f"{_check_key(key, 'header')} {_number(value)}")
    if model.kernel is not None:
        lines.extend(_kernel_lines(model.kernel))
    if model.feature_map is not None:
        lines.extend(_kernel_lines(model.feature_map))
        lines.extend([f"map.basis {model.feature_map.size}", *_basis_lines(model.feature_map.basis)])
    lines.append(f"n_features {model.n_features}")
    lines.append(f"threshold {float(model.threshold)!r}")
    if model.kernel is not None:
        basis = _basis_lines(model.kernel.basis, model.kernel.coef)
        return "\n".join([*lines, f"basis {model.kernel.size}", *basis]) + "\n"
    ids, weights = model.entries()
    lines.append(f"weights {len(ids)}")
    if len(ids):
        lines.append(weights_text(np.asarray(ids) + 1, np.asarray(weights, dtype=float)))
    return "\n".join(lines) + "\n"


KERNEL_PARAMETERS = ("degree", "gamma", "coef_lin", "coef_const")


def _kernel_lines(expansion) -> list:
    k = expansion.kernel
    return [f"kernel {TYPES[k.kind].name}", f"kernel.degree {k.degree}",
            *(f"kernel.{name} {float(getattr(k, name))!r}" for name in KERNEL_PARAMETERS[1:])]


def _basis_lines(b, coef: np.ndarray | None = None) -> list:
    """`beta index:value ...` per basis vector, or `index:value ...` without coefficients (numbers with repr:
    exact)."""
    lines = []
    for j in range(b.size):
        lo, hi = b.indptr[j], b.indptr[j + 1]
        features = " ".join(f"{i + 1}:{float(v)!r}" for i, v in zip(b.indices[lo:hi], b.values[lo:hi]))
        lines.append(features if coef is None else f"{float(coef[j])!r} {features}".rstrip())
    return lines


def save_model(model: Model, path, fmt: str = "svmstruct") -> None:
    """Write the model to `path` (`-`: stdout) atomically, in svmstruct's format, svm_light's, or for a model of
    SVM-multiclass or SVM-hmm the original's (svm_multiclass, svm_hmm)."""
    import os

    from svmstruct.io import files, model_files

    path = os.fspath(path)
    if fmt in model_files.FORMATS:
        kind = model_files.FORMATS[fmt]
        if model.loss != model_files.PROBLEMS[kind]:
            raise UsageError(f"--format {fmt} writes models of --problem {kind}, not of {model.loss}")
        text = model_files.format(kind, model.options, model.w, int(model.header.get("documents", 0)))
    else:
        text = format_svmlight(model) if fmt == "svmlight" else format_model(model)
    files.write_output(path, text)


def load_model(path) -> Model:
    """Read a model in svmstruct's format, svm_light's (linear or kernel), svm_multiclass's or svm_hmm's (detected
    from the first line). svmstruct's weight lines are read from the file's bytes: a model costs about 1.5 times its
    file's size to read."""
    import os

    from svmstruct.io import files
    from svmstruct.io.lines import Lines

    path = os.fspath(path)
    lines = Lines.of(path, "model")
    path = files.display_name(path)
    if lines.done():
        raise InputError("empty model file", path, 1)
    first = lines.next()
    if first.split(" ")[0] == MAGIC:
        return _parse_svmstruct(first, lines, path)
    rows = [first, *lines.rest()]
    if first.startswith("SVM-light Version"):
        return _parse_svmlight(rows, path)
    from svmstruct.io import model_files

    original = model_files.kind_of(first)
    if original:
        _weights_by_kernel_for(model_files.PROBLEMS[original])
        kind, options, w, at = model_files.read(rows, path)
        return Model(w=w, loss=model_files.PROBLEMS[kind], options={k: str(v) for k, v in options.items()},
                     format=f"svm_{kind}", lines={f"option.{key}": line for key, line in at.items()})
    raise InputError(f"not a model file (first line '{first[:40]}')", path, 1)


def _parse_svmstruct(first: str, lines, path: str) -> Model:
    """svmstruct's format: FIRST the format line, LINES (io.lines.Lines) the rest."""
    parts = first.split(" ")
    if len(parts) != 2 or parts[1] != str(VERSION):
        raise InputError(f"unsupported model version '{first}'", path, 1)
    model = Model(w=np.zeros(0))
    n_features = n_weights = body = threshold = None
    kernel: dict = {}  # `kernel` and `kernel.*` header lines: (value, line number)
    mapped = None  # the basis of a problem's kernel map (map.basis)
    key = ""
    while not lines.done():
        text = lines.next()
        lineno = lines.number
        key, _, value = text.partition(" ")
        if not key or not value:
            raise InputError(f"malformed header line '{text}'", path, lineno)
        model.lines[key] = lineno
        if key == "loss":
            model.loss = _text(value)
        elif key.startswith("option."):
            model.options[key[len("option."):]] = _text(value)
        elif key == "n_features":
            n_features = integer(value, path, lineno, 0, MAX_INDEX)
        elif key == "threshold":
            model.threshold = threshold = number(value, path, lineno)
        elif key in ("weights", "basis"):
            n_weights = integer(value, path, lineno, 0, MAX_INDEX)
            body = lineno
            break
        elif key == "kernel" or key.startswith("kernel."):
            kernel[key] = (value, lineno)
        elif key == "map.basis":
            size = integer(value, path, lineno, 1, MAX_INDEX)
            rows = [lines.next() for _ in range(size) if not lines.done()]
            mapped = _basis_of(rows, size, MAX_INDEX, path, lineno, coefficients=False)[0]
        else:
            model.header[key] = _text(value)
    if n_features is None or n_weights is None or body is None or threshold is None:
        raise InputError("model header lacks 'n_features', 'threshold' or 'weights'", path, lines.number)
    if mapped is not None:
        if "kernel" not in kernel or key != "weights":
            raise InputError("a model over a kernel map needs a 'kernel' line and 'weights' lines", path, body)
        model.feature_map = _kernel_map(_kernel_of(kernel, path, body), mapped, path, model.lines["map.basis"])
    elif kernel or key == "basis":
        if key != "basis" or "kernel" not in kernel:
            raise InputError("a kernel model needs both a 'kernel' line and 'basis' lines", path, body)
        model.kernel = _parse_kernel(kernel, lines.rest(), n_weights, n_features, path, body)
        model.w = np.zeros(n_features)
        return model
    _weights_by_kernel_for(model.loss)
    ids, weights = weight_lines(lines, n_weights, n_features, path)
    if np.any(ids[1:] <= ids[:-1]):  # our writer writes them in order: sorted only when they are not
        order = np.argsort(ids, kind="stable")
        ids, weights = ids[order], weights[order]
        repeated = np.flatnonzero(ids[1:] == ids[:-1])
        if len(repeated):
            where = body + 1 + int(order[repeated[0] + 1])
            raise InputError(f"weight index {ids[repeated[0]] + 1} appears twice", path, where)
    model.w, model.columns = _weight_vector(ids, weights, n_features)
    return model


def _weights_by_kernel_for(loss: str) -> None:
    """Load io.float_text (weight_lines then takes its kernel: compute.paths) when LOSS is a registered problem whose
    predictions run numba kernels whatever their size (StructuredProblem.kernel_predictions): classify pays numba's
    start-up for them anyway. A problem's name is MODULE:CLASS; a loss's has no colon (no registry loaded for it)."""
    from svmstruct import registry

    found = registry.PROBLEMS.get(loss) if ":" in loss else None
    if found and found.problem.kernel_predictions:
        import svmstruct.io.float_text  # noqa: F401


def _parse_kernel(fields: dict, rows: list, size: int, n_features: int, path: str, body: int):
    """The KernelExpansion of a kernel model's `kernel*` header fields and its `basis` lines."""
    from svmstruct.kernels import kernel_functions

    kernel = _kernel_of(fields, path, body)
    basis, coef = _basis_of(rows, size, n_features, path, body, coefficients=True)
    return kernel_functions.KernelExpansion(kernel, basis, coef)


def _kernel_map(kernel: Kernel, basis, path: str, line: int):
    """The kernel map of a problem's model over its basis (the factor recomputed: every vector was kept)."""
    from svmstruct.kernels.nystroem import KernelMap

    found = KernelMap.over(kernel, basis)
    if found.dropped:
        raise InputError(f"{found.dropped} of the map's {basis.size} basis vectors are dependent: not the basis learn "
                         "kept (an edited or damaged model?)", path, line)
    return found


def _kernel_of(fields: dict, path: str, body: int) -> Kernel:
    """The Kernel of a model's `kernel` and `kernel.*` header fields."""
    names = {t.name: kind for kind, t in TYPES.items()}
    name, line = fields.pop("kernel")
    if name not in names:
        raise InputError(f"unknown kernel '{name}' (one of {', '.join(names)})", path, line)
    parameters: dict = {}
    for key, (value, line) in fields.items():
        parameter = key[len("kernel."):]
        if parameter not in KERNEL_PARAMETERS:
            raise InputError(f"unknown kernel parameter '{key}'", path, line)
        parameters[parameter] = integer(value, path, line, 1, 10**6) if parameter == "degree" else \
            number(value, path, line)
    if len(parameters) != len(KERNEL_PARAMETERS):
        missing = [p for p in KERNEL_PARAMETERS if p not in parameters]
        raise InputError(f"kernel model lacks 'kernel.{missing[0]}'", path, body)
    return Kernel(names[name], **parameters)


def _basis_of(rows: list, size: int, n_features: int, path: str, body: int, coefficients: bool) -> tuple:
    """(Basis, coefficients or None) of SIZE basis lines after line BODY: `coef index:value ...` or (not
    COEFFICIENTS) `index:value ...`, increasing indices up to n_features."""
    from svmstruct.kernels import kernel_functions

    if len(rows) != size or any(not text.strip() for text in rows):
        raise InputError(f"expected {size} basis lines, found {len(rows)}", path, body + len(rows))
    coef = np.empty(size)
    indptr = np.zeros(size + 1, dtype=np.int64)
    indices: list = []
    values: list = []
    for j, text in enumerate(rows):
        lineno = body + 1 + j
        tokens = text.split()
        if coefficients:
            coef[j] = number(tokens[0], path, lineno)
        previous = 0
        for token in tokens[1:] if coefficients else tokens:
            index, sep, value = token.partition(":")
            if not sep:
                raise InputError(f"malformed token '{token}'", path, lineno)
            index_value = integer(index, path, lineno, 1, n_features)
            if index_value <= previous:
                raise InputError(f"feature index {index_value} is not above the one before it", path, lineno)
            previous = index_value
            indices.append(index_value - 1)
            values.append(number(value, path, lineno))
        indptr[j + 1] = len(indices)
    basis = kernel_functions.Basis(indptr, np.array(indices, dtype=np.int32), np.array(values, dtype=np.float64))
    return basis, (coef if coefficients else None)


def _weight_vector(ids: np.ndarray, weights: np.ndarray, n_features: int):
    """(w, columns): dense over 0..n_features-1 when that is small enough, else sparse."""
    if n_features <= DENSE_LIMIT:
        w = np.zeros(n_features)
        w[ids] = weights
        return w, None
    return weights, ids


def _parse_svmlight(lines: list, path: str) -> Model:
    """svm_light V6 model: 10 header lines `value # label`, threshold b on line 11, then SV lines. A linear
    model (kernel type 0) becomes its weight vector; a kernel model (1 polynomial, 2 RBF, 3 sigmoid) keeps its
    support vectors (svmstruct.kernels.kernel_functions)."""
    if len(lines) < 11:
        raise InputError("truncated svm_light model header", path, len(lines))

    def value(lineno: int) -> str:
        return lines[lineno - 1].split("#")[0].strip()

    kind = integer(value(2), path, 2, 0, 2**31 - 1)
    if kind == 4:
        raise InputError("user-defined kernels (kernel type 4) are not supported: svmstruct cannot run the "
                         "kernel function compiled into the original programs", path, 2)
    if kind and (kind not in TYPES or not TYPES[kind].svm_light):
        svm_lights = ", ".join(f"{t.code} {t.name}" for t in TYPES.values() if t.svm_light)
        raise InputError(f"unknown kernel type '{value(2)}' (0 linear, {svm_lights})", path, 2)
    highest = integer(value(8), path, 8, 0, MAX_INDEX + 1)  # + 1: svm_perf counts its bias feature
    n_sv = integer(value(10), path, 10, 1, MAX_INDEX) - 1
    threshold = number(value(11), path, 11)
    sv_lines = lines[11:]
    if len(sv_lines) < n_sv:
        raise InputError(f"expected {n_sv} support vector lines, found {len(sv_lines)}", path, len(lines))
    alphas, rows = _support_vectors(sv_lines[:n_sv], highest, path)
    if kind:
        return _kernel_model(kind, [value(k) for k in (3, 4, 5, 6)], alphas, rows, threshold, highest, path)
    ids, contributions = [], []
    for lineno, (alpha, (row_ids, row_values)) in enumerate(zip(alphas, rows), 12):
        contribution = alpha * row_values.astype(np.float64)
        if not np.all(np.isfinite(contribution)):
            raise InputError(f"weight {alpha!r} * a feature value is beyond double (or, for the value, single) "
                             "precision", path, lineno)
        ids.append(row_ids)
        contributions.append(contribution)
    all_ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    unique, where = np.unique(all_ids, return_inverse=True)
    summed = np.zeros(len(unique))
    np.add.at(summed, where, np.concatenate(contributions) if contributions else np.zeros(0))
    if not np.all(np.isfinite(summed)):
        raise InputError("the weights sum beyond double precision", path, 12)
    w, columns = _weight_vector(unique, summed, highest)
    return Model(w=w, threshold=threshold, loss="svmlight", format="svmlight", columns=columns)


def _support_vectors(sv_lines: list, highest: int, path: str) -> tuple:
    """(alpha*y of every SV line, its (0-based feature ids, float32 values)): svm_light reads FVAL = float."""
    alphas, rows = [], []
    for lineno, text in enumerate(sv_lines, 12):
        tokens = text.split("#")[0].split()
        if not tokens:
            raise InputError("empty support vector line", path, lineno)
        alphas.append(number(tokens[0], path, lineno))
        ids, values = [], []
        for tok in tokens[1:]:
            idx, sep, val = tok.partition(":")
            if not sep:
                raise InputError(f"malformed token '{tok}'", path, lineno)
            ids.append(integer(idx, path, lineno, 1, min(highest, MAX_INDEX)) - 1)
            with np.errstate(over="ignore"):
                values.append(np.float32(number(val, path, lineno)))
            if not np.isfinite(values[-1]):
                raise InputError(f"feature value {val} is beyond single precision (svm_light's float)", path, lineno)
        order = np.argsort(np.array(ids, dtype=np.int64), kind="stable")
        row_ids = np.array(ids, dtype=np.int64)[order]
        if len(row_ids) > 1 and np.any(np.diff(row_ids) == 0):
            raise InputError("a feature index appears twice in a support vector", path, lineno)
        rows.append((row_ids, np.array(values, dtype=np.float32)[order]))
    return alphas, rows


def _kernel_model(kind: int, parameters: list, alphas: list, rows: list, threshold: float, highest: int,
                  path: str) -> Model:
    """An svm_light kernel model (svmstruct.kernels.KernelExpansion) from its header parameters and SVs."""
    from svmstruct.kernels import kernel_functions

    degree = integer(parameters[0], path, 3, -(2**31), 2**31 - 1)
    gamma, coef_lin, coef_const = (number(text, path, line) for text, line in zip(parameters[1:], (4, 5, 6)))
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(ids) for ids, _ in rows], out=indptr[1:])
    indices = np.concatenate([ids for ids, _ in rows]).astype(np.int32) if rows else np.zeros(0, dtype=np.int32)
    values = np.concatenate([vals for _, vals in rows]) if rows else np.zeros(0, dtype=np.float32)
    expansion = kernel_functions.KernelExpansion(Kernel(kind, degree, gamma, coef_lin, coef_const),
                                        kernel_functions.Basis(indptr, indices, values.astype(np.float32)),
                                        np.array(alphas, dtype=np.float64))
    return Model(w=np.zeros(highest), threshold=threshold, loss="svmlight", format="svmlight", kernel=expansion)


def format_svmlight(model: Model) -> str:
    """The model as an svm_light V6.20 model, readable by svm_perf_classify / svm_rank_classify: a linear
    model as one SV line (its weights), a kernel model with its basis vectors as SV lines (alpha*y = beta)."""
    if model.kernel is None:
        ids, weights = model.entries()
        kind, parameters, vectors = 0, ("3", "1", "1", "1"), [
            "1 " + " ".join(f"{j + 1}:{float(v):.8g}" for j, v in zip(ids, weights)) + " #"]
        threshold = f"{float(model.threshold):.8g}"
    else:
        k = model.kernel.kernel
        if not TYPES[k.kind].svm_light:
            raise UsageError(f"--format svmlight: svm_light has no {TYPES[k.kind].name} kernel; write the svmstruct "
                             "format")
        kind, parameters = k.kind, (str(k.degree), repr(k.gamma), repr(k.coef_lin), repr(k.coef_const))
        vectors = [f"{line} #" for line in _basis_lines(model.kernel.basis, model.kernel.coef)]
        threshold = repr(float(model.threshold))
    header = [
        "SVM-light Version V6.20",
        f"{kind} # kernel type",
        *(f"{value} # kernel parameter -{flag} " for value, flag in zip(parameters, "dgsr")),
        "empty# kernel parameter -u ",
        f"{model.highest_index} # highest feature index ",
        "1 # number of training documents ",
        f"{len(vectors) + 1} # number of support vectors plus 1 ",
        f"{threshold} # threshold b, each following line is a SV (starting with alpha*y)",
    ]
    return "\n".join(header + vectors) + "\n"


def score(model: Model, dataset) -> np.ndarray:
    """w.x - b for every row; features beyond the model's width are ignored (as svm_light does).

    A model of the originals is applied as their classify programs do, to single-precision feature
    values (svm_light's FVAL is a float), so their predictions are reproduced to the last printed digit.
    A score that is not finite (weights near the largest double times the data overflow) is a NumericalError at
    the line of its document.
    """
    scores = _scores(model, dataset)
    bad = np.flatnonzero(~np.isfinite(scores))
    if len(bad):
        from svmstruct.errors import NumericalError

        raise NumericalError(f"the score of this document is not finite ({len(bad)} of {len(scores)} are not): the "
                             "model's weights times its features overflow double precision (a damaged model?)",
                             dataset.path, int(dataset.line[bad[0]]))
    return scores


def _scores(model: Model, dataset) -> np.ndarray:
    import scipy.sparse as sp

    from svmstruct.compute import products

    if model.kernel is not None:  # svm_light's kernel model: its expansion over the support vectors
        return model.kernel.scores(dataset) - model.threshold
    if model.normalize == "query":  # trained on query-normalised features (svmstruct.dataset.normalize)
        from svmstruct.dataset import normalize

        dataset = normalize.query_level(dataset)
    w = weights_for(model, dataset)
    X = dataset.X
    if model.format == "svmlight" and X.dtype != np.float32:
        if isinstance(X, np.ndarray):
            X = X.astype(np.float32)
        else:
            X = sp.csr_matrix((X.data.astype(np.float32), X.indices, X.indptr), shape=X.shape)
    return products.matvec(X, w) - model.threshold


def weights_for(model: Model, dataset) -> np.ndarray:
    """The model's weights over the dataset's columns (features it does not know weigh 0)."""
    out = np.zeros(dataset.n_features)
    data_ids = getattr(dataset, "columns", None)
    model_ids, weights = (np.arange(len(model.w)), model.w) if model.columns is None else (model.columns, model.w)
    if data_ids is None:
        inside = model_ids < len(out)
        out[model_ids[inside]] = weights[inside]
    elif len(model_ids):
        at = np.minimum(np.searchsorted(model_ids, data_ids), len(model_ids) - 1)
        hit = model_ids[at] == data_ids
        out[hit] = weights[at[hit]]
    return out
