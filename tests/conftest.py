import os
import sys
from pathlib import Path

import pytest

# every command of the suite runs in its own process: the resident worker (svmstruct.resident) has its own tests,
# which turn it on for their commands
os.environ["SVMSTRUCT_RESIDENT"] = "0"

# tests use the reference-case helpers of scripts/reference.py (scripts never import tests)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SVMSTRUCT_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
DATA = SHARED / "data"
REFERENCE = SHARED / "reference"


def need_shared():
    if not REFERENCE.is_dir() or not DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED} (set SVMSTRUCT_SHARED)")


@pytest.fixture
def shared():
    need_shared()
    return SHARED


class Result:
    """What a command run gave: exit code, stdout, stderr (as subprocess.CompletedProcess names them)."""

    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def invoke(*args, stdin=None):
    """`svmstruct ARGS` run in this process (svmstruct.cli.main), stdin from a string; for the tests whose
    point is not the process itself (start-up, signals, the numba cache have their own subprocess tests)."""
    import contextlib
    import io

    from svmstruct import cli

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main([str(a) for a in args])
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
    finally:
        sys.stdin = saved
    return Result(code, out.getvalue(), err.getvalue())
