"""`learn --checkpoint FILE [--resume]`: the cutting-plane loop's state (loop_state.LoopState.to_arrays: the
working set, the QP's multipliers alpha, w_b, w_t, the counters), written atomically as a NumPy .npz file by the
loop's Writer callback, and read back to continue an interrupted run (api.Settings.resume). The file also
records what run it belongs to (loss, options, C, epsilon, normalisation, training files): resuming
another run is an InputError. A file is read as the state it describes and nothing more: only uncompressed
arrays of numbers whose declared shapes are the bytes the file holds (no pickles, no compressed bombs), its run
record first, its working set's size checked against the training data before anything is allocated, then every
field (present, of its shape, finite); that the training data is the same is checked by the loop itself
(train.optimise recomputes the oracle's values at w_b and w_t, which the state records)."""
from __future__ import annotations

import json
import math
import os
import time
import zipfile

import numpy as np

from svmstruct.errors import InputError
from svmstruct.train.callbacks import Callback
from svmstruct.train.loop_state import FIELDS, OPTIONAL

FORMAT = 3  # 2: the state holds value_zero and value_t (the slacks at w = 0 and at w_t); 3: the QP's multipliers
#            alpha only, the warm start it needs (not OSQP's own multipliers: a change of solver keeps the files)
COUNTS = ("n", "dim", "iteration", "added", "stalled", "outer")  # non-negative integers
MAY_BE_INFINITE = ("outer_primal",)  # +inf until the first outer step of a latent target


def save(path: str, state: dict, signature: dict) -> None:
    """Write the state through an unnamed file in the same directory, linked in place (never half a file)."""
    from svmstruct.io import files

    arrays = {key: np.asarray(value) for key, value in state.items() if value is not None}
    arrays["signature"] = np.asarray(json.dumps({"format": FORMAT, **signature}, sort_keys=True, default=str))
    files.atomic_save(path, lambda f: np.savez(f, **arrays), "the checkpoint")  # type: ignore[arg-type]


NOT_OURS = "not a checkpoint written by svmstruct learn --checkpoint"
MAX_SIGNATURE_BYTES = 1 << 20  # the run's record: a few hundred bytes
SPARE_CONSTRAINTS = 4096  # beyond the width of w + 1 (the active constraints' bound): the working sets the loop holds


class Saved:
    """A checkpoint file of ours whose layout was checked (every array stored uncompressed, its declared shape the
    bytes the file holds: reading it costs no more memory than the file's size) and whose run record matched;
    arrays(n, dim) reads the state once the training data says what it must be."""

    def __init__(self, path: str, archive: zipfile.ZipFile, headers: dict):
        self.path, self.archive, self.headers = path, archive, headers

    def arrays(self, n: int, dim: int) -> dict:
        """The state's arrays for a problem of n examples and width dim (InputError when it cannot be): the
        working set's declared size is checked before anything is allocated."""
        shape: tuple = self.headers["A"][1] if "A" in self.headers else ()
        if len(shape) == 2 and shape[1] != dim:
            raise InputError(f"the checkpoint is of another training problem (its constraints have {shape[1]} weights, "
                             f"this data's {dim})", self.path)
        if len(shape) == 2 and shape[0] > dim + 1 + SPARE_CONSTRAINTS:
            raise InputError(f"the checkpoint is damaged (a working set of {shape[0]} constraints, more than a run "
                             f"over {dim} weights holds: {dim + 1 + SPARE_CONSTRAINTS}): start without --resume",
                             self.path)
        try:
            with self.archive:
                state: dict = {name: np.lib.format.read_array(self.archive.open(info), allow_pickle=False)
                         for name, (info, _, _) in self.headers.items() if name != "signature"}
        except (OSError, ValueError, zipfile.BadZipFile, EOFError):
            raise InputError(NOT_OURS, self.path) from None
        for key in OPTIONAL:
            state.setdefault(key, None)
        problem = _invalid_field(state)
        if problem:
            raise InputError(f"the checkpoint is damaged ({problem}): start without --resume", self.path)
        return state


def _open(path: str) -> tuple:
    """(the archive at PATH, {field: (its member, declared shape, dtype)}, its run record): InputError when it is
    not a checkpoint of ours (FileNotFoundError when there is no file). Only the run record is read."""
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        raise InputError(NOT_OURS, path) from None
    try:
        headers = {}
        for info in archive.infolist():
            headers[info.filename[:-len(".npy")]] = (info, *_header(archive, info))
        if sum(info.file_size for info, _, _ in headers.values()) > os.path.getsize(path):
            raise ValueError("members larger than the file")
        info, shape, dtype = headers.get("signature", (None, None, None))
        if info is None or shape != () or dtype.kind != "U" or dtype.itemsize > MAX_SIGNATURE_BYTES:
            raise ValueError("no run record")
        theirs = json.loads(str(np.lib.format.read_array(archive.open(info), allow_pickle=False)))
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, RecursionError):
        archive.close()
        raise InputError(NOT_OURS, path) from None
    if not isinstance(theirs, dict) or "format" not in theirs:
        archive.close()
        raise InputError(f"{NOT_OURS} (its signature is not a record)", path)
    return archive, headers, theirs


def _header(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple:
    """(shape, dtype) a member declares (ValueError unless it is an uncompressed .npy file of numbers or text whose
    size is exactly what it declares: np.savez's, never a compressed or pickled one)."""
    if not info.filename.endswith(".npy") or info.compress_type != zipfile.ZIP_STORED:
        raise ValueError(f"member {info.filename} is not an uncompressed array")
    with archive.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"member {info.filename}: .npy version {version}")
        start = f.tell()
    if dtype.hasobject or dtype.kind not in "biufU" or start + math.prod(shape) * dtype.itemsize != info.file_size:
        raise ValueError(f"member {info.filename} is not an array of numbers of its declared size")
    return shape, dtype


def check_replaceable(path: str) -> None:
    """A file that --checkpoint would write over must be a checkpoint of ours, or not exist: anything else is
    refused, never replaced (UsageError). Only its run record is read."""
    from svmstruct.errors import UsageError

    try:
        archive, _, _ = _open(path)
        archive.close()
    except FileNotFoundError:
        return
    except InputError:
        raise UsageError(f"--checkpoint '{path}' exists and is {NOT_OURS}: it is not replaced (remove it or name "
                         "another file)") from None


def load(path: str, signature: dict) -> Saved:
    """The checkpoint saved at `path` by a run with this signature (InputError otherwise); its arrays are read by
    Saved.arrays once the training data is known."""
    try:
        archive, headers, theirs = _open(path)
    except FileNotFoundError:
        raise InputError("no checkpoint to resume from (the file does not exist; a run that converged removed its "
                         "checkpoint once its model was written)", path) from None
    ours = {"format": FORMAT, **json.loads(json.dumps(signature, default=str))}
    problem = None
    if theirs.get("format") != FORMAT:
        problem = (f"the checkpoint was written by another version of svmstruct (format {theirs.get('format')}, "
                   f"this one reads {FORMAT}): start without --resume")
    elif theirs != ours:
        differ = sorted(key for key in set(theirs) | set(ours) if theirs.get(key) != ours.get(key))
        problem = (f"the checkpoint belongs to another run ({', '.join(differ)} differ): resume with the same loss, "
                   "options, -c, -e, --normalize, precision (--float64) and training files, or start without --resume")
    else:
        what = _invalid_layout({key: (shape, dtype.kind) for key, (_, shape, dtype) in headers.items()
                                if key != "signature"})
        if what:
            problem = f"the checkpoint is damaged ({what}): start without --resume"
    if problem:
        archive.close()
        raise InputError(problem, path)
    return Saved(path, archive, headers)


def _invalid_layout(kinds: dict) -> str | None:
    """What is wrong with the fields' names, kinds and shapes ({field: (shape, dtype kind)}: the arrays' or the
    headers' that declare them), or None."""
    unknown = sorted(set(kinds) - set(FIELDS))
    if unknown:
        return f"unknown field {unknown[0]}"
    missing = sorted(key for key in FIELDS if key not in kinds and key not in OPTIONAL)
    if missing:
        return f"field {missing[0]} is missing"
    for key, (_, kind) in kinds.items():
        if kind not in "biuf":
            return f"field {key} is not numeric"
    if len(kinds["A"][0]) != 2:
        return "field A is not a matrix"
    sizes = {"m": kinds["A"][0][0], "d": kinds["A"][0][1]}
    for key, shape in FIELDS.items():
        if key not in kinds or shape == "*":
            continue
        expected = () if shape == "" else tuple(sizes["m"] + 1 if part == "m+1" else sizes[part]
                                                 for part in shape.split(","))
        if kinds[key][0] != expected:
            return f"field {key} has shape {kinds[key][0]}, not {expected}"
    return None


def _invalid_field(state: dict) -> str | None:
    """What is wrong with the state's fields (FIELDS), or None."""
    problem = _invalid_layout({key: (value.shape, value.dtype.kind) for key, value in state.items()
                               if value is not None})
    if problem:
        return problem
    for key in FIELDS:
        value = state[key]
        if value is None:
            continue
        finite = np.isfinite(value) | (np.isposinf(value) if key in MAY_BE_INFINITE else False)
        if not np.all(finite):
            return f"field {key} is not finite"
    if state["cuts"].ndim != 1 or not np.all((state["cuts"] >= 0) & (state["cuts"] <= 1)):
        return "field cuts is not a list of steps in [0, 1]"
    for key in COUNTS:
        if state[key] < 0 or state[key] != int(state[key]):
            return f"field {key} is not a count"
    if int(state["dim"]) != state["A"].shape[1] or state["C"] <= 0 or state["epsilon"] <= 0 or state["n"] < 1:
        return "fields n, dim, C, epsilon do not fit the working set"
    if np.any(state["alpha"] < 0) or np.any(state["idle"] < 0):
        return "negative multipliers"
    return None


class Writer(Callback):
    """The loop's resumable states written to `path` (train.Callback): after the first iteration, then at
    most every `every` seconds and at the iteration limit; `written` says whether this run wrote the file."""

    def __init__(self, path: str, signature: dict, max_iterations: int, every: float):
        self.path, self.signature, self.max_iterations, self.every = path, signature, max_iterations, every
        self.last = -np.inf
        self.written = False

    def resumable(self, state, seconds: float) -> None:
        now = time.monotonic()
        if now - self.last >= self.every or state.iteration >= self.max_iterations:
            save(self.path, state.to_arrays(seconds), self.signature)
            self.last = now
            self.written = True
