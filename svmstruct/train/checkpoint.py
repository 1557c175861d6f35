"""`learn --checkpoint FILE [--resume]`: the cutting-plane loop's state (loop_state.LoopState.to_arrays: the
working set, the QP's multipliers, w_b, w_t, the counters), written atomically as a NumPy .npz file by the
loop's Writer callback, and read back to continue an interrupted run (api.Settings.resume). The file also
records what run it belongs to (loss, options, C, epsilon, normalisation, training files): resuming
another run is an InputError. Every field
is checked on reading (present, of its shape, finite); that the training data is the same is checked by
the loop itself (train.optimise recomputes the oracle's values at w_b and w_t, which the state records)."""
from __future__ import annotations

import json
import os
import tempfile
import time
import zipfile

import numpy as np

from svmstruct.errors import InputError, OutputError
from svmstruct.train import loop
from svmstruct.train.loop_state import FIELDS, OPTIONAL

FORMAT = 2  # 2: the state holds value_zero and value_t (the slacks at w = 0 and at w_t)
COUNTS = ("n", "dim", "iteration", "added", "stalled", "outer")  # non-negative integers
MAY_BE_INFINITE = ("outer_primal",)  # +inf until the first outer step of a latent target


def save(path: str, state: dict, signature: dict) -> None:
    """Write the state through a temporary file in the same directory and a rename (never half a file)."""
    arrays = {key: np.asarray(value) for key, value in state.items() if value is not None}
    arrays["signature"] = np.asarray(json.dumps({"format": FORMAT, **signature}, sort_keys=True, default=str))
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".svmstruct-checkpoint-", suffix=".npz", dir=directory)
    except OSError as e:
        raise OutputError(f"cannot write the checkpoint: {e.strerror}", path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OutputError(f"cannot write the checkpoint: {e.strerror}", path) from None
        raise


NOT_OURS = "not a checkpoint written by svmstruct learn --checkpoint"


def _read(path: str) -> tuple:
    """(the arrays of the .npz file at PATH, its signature record): InputError when it is not a checkpoint of
    ours (FileNotFoundError when there is no file)."""
    try:
        saved = np.load(path, allow_pickle=False)
        if not isinstance(saved, np.lib.npyio.NpzFile):  # a .npy file: one array
            raise ValueError
        with saved:
            state = {key: saved[key] for key in saved.files}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        raise InputError(NOT_OURS, path) from None
    try:
        theirs = json.loads(str(state.pop("signature")))
    except (KeyError, ValueError):
        raise InputError(NOT_OURS, path) from None
    if not isinstance(theirs, dict) or "format" not in theirs:
        raise InputError(f"{NOT_OURS} (its signature is not a record)", path)
    return state, theirs


def check_replaceable(path: str) -> None:
    """A file that --checkpoint would write over must be a checkpoint of ours, or not exist: anything else is
    refused, never replaced (UsageError)."""
    from svmstruct.errors import UsageError

    try:
        _read(path)
    except FileNotFoundError:
        return
    except InputError:
        raise UsageError(f"--checkpoint '{path}' exists and is {NOT_OURS}: it is not replaced (remove it or name "
                         "another file)") from None


def load(path: str, signature: dict) -> dict:
    """The state saved at `path` by a run with this signature (InputError otherwise)."""
    try:
        state, theirs = _read(path)
    except FileNotFoundError:
        raise InputError("no checkpoint to resume from (the file does not exist)", path) from None
    ours = {"format": FORMAT, **json.loads(json.dumps(signature, default=str))}
    if theirs.get("format") != FORMAT:
        raise InputError(f"the checkpoint was written by another version of svmstruct (format {theirs.get('format')}, "
                         f"this one reads {FORMAT}): start without --resume", path)
    if theirs != ours:
        differ = sorted(key for key in set(theirs) | set(ours) if theirs.get(key) != ours.get(key))
        raise InputError(f"the checkpoint belongs to another run ({', '.join(differ)} differ): resume with the "
                         "same loss, options, -c, -e, --normalize, precision (--float64) and training files, or start "
                         "without --resume",
                         path)
    for key in OPTIONAL:
        state.setdefault(key, None)
    problem = _invalid_field(state)
    if problem:
        raise InputError(f"the checkpoint is damaged ({problem}): start without --resume", path)
    return state


def _invalid_field(state: dict) -> str | None:
    """What is wrong with the state's fields (FIELDS), or None."""
    unknown = sorted(set(state) - set(FIELDS))
    if unknown:
        return f"unknown field {unknown[0]}"
    missing = sorted(key for key in FIELDS if key not in state)
    if missing:
        return f"field {missing[0]} is missing"
    for key in FIELDS:
        if state[key] is not None and not (isinstance(state[key], np.ndarray) and state[key].dtype.kind in "biuf"):
            return f"field {key} is not numeric"
    if state["A"].ndim != 2:
        return "field A is not a matrix"
    sizes = {"m": state["A"].shape[0], "d": state["A"].shape[1]}
    for key, shape in FIELDS.items():
        value = state[key]
        if value is None or shape == "*":
            continue
        expected = () if shape == "" else tuple(sizes["m"] + 1 if part == "m+1" else sizes[part]
                                                 for part in shape.split(","))
        if value.shape != expected:
            return f"field {key} has shape {value.shape}, not {expected}"
        finite = np.isfinite(value) | (np.isposinf(value) if key in MAY_BE_INFINITE else False)
        if not np.all(finite):
            return f"field {key} is not finite"
    if state["cuts"].ndim != 1 or not np.all((state["cuts"] >= 0) & (state["cuts"] <= 1)):
        return "field cuts is not a list of steps in [0, 1]"
    for key in COUNTS:
        if state[key] < 0 or state[key] != int(state[key]):
            return f"field {key} is not a count"
    if int(state["dim"]) != sizes["d"] or state["C"] <= 0 or state["epsilon"] <= 0 or state["n"] < 1:
        return "fields n, dim, C, epsilon do not fit the working set"
    if np.any(state["alpha"] < 0) or np.any(state["idle"] < 0):
        return "negative multipliers"
    return None


class Writer(loop.Callback):
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
