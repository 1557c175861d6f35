"""`learn --checkpoint FILE [--resume]`: the cutting-plane loop's state (train.optimise's `checkpoint`
dict: the working set, the QP's multipliers, w_b, w_t, the counters), written atomically as a NumPy .npz
file, and read back to continue an interrupted run. The file also records what run it belongs to (loss,
options, C, epsilon, normalisation, training files): resuming another run is an InputError."""
from __future__ import annotations

import json
import os
import tempfile
import zipfile

import numpy as np

from svmstruct.errors import InputError, OutputError

FORMAT = 2  # 2: the state holds value_zero (the slack at w = 0)
OPTIONAL = ("w_imputed", "duals")  # None in the state: absent from the file


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


def load(path: str, signature: dict) -> dict:
    """The state saved at `path` by a run with this signature (InputError otherwise)."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            state = {key: saved[key] for key in saved.files}
    except FileNotFoundError:
        raise InputError("no checkpoint to resume from (the file does not exist)", path) from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        raise InputError("not a checkpoint written by svmstruct learn --checkpoint", path) from None
    try:
        theirs = json.loads(str(state.pop("signature")))
    except (KeyError, ValueError):
        raise InputError("not a checkpoint written by svmstruct learn --checkpoint", path) from None
    ours = {"format": FORMAT, **json.loads(json.dumps(signature, default=str))}
    if isinstance(theirs, dict) and theirs.get("format") != FORMAT:
        raise InputError(f"the checkpoint was written by another version of svmstruct (format {theirs.get('format')}, "
                         f"this one reads {FORMAT}): start without --resume", path)
    if theirs != ours:
        differ = sorted(key for key in set(theirs) | set(ours) if theirs.get(key) != ours.get(key))
        raise InputError(f"the checkpoint belongs to another run ({', '.join(differ)} differ): resume with the "
                         "same loss, options, -c, -e, --normalize and training files, or start without --resume",
                         path)
    for key in OPTIONAL:
        state.setdefault(key, None)
    return state
