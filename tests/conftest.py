import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# Commands run as a user's shell runs them: the installed `svmstruct` command, each in its own process (outside make
# the resident worker does not serve: svmstruct.worker.resident). The suite's own environment is a shell's, not
# make's, even under `make test`. A test that means the worker says so (invoke(worker=True): SVMSTRUCT_RESIDENT=1),
# served by a server of the suite's own in a private socket directory, stopped when the suite ends;
# tests/test_resident.py has servers of its own. invoke_here runs cli.main in the test's process, for the tests
# that replace a function of the package.
SUITE_TMP = Path(tempfile.mkdtemp(prefix="svmsuite"))  # removed at the end: the worker's sockets, Dask's scratch
WORKER_DIR = SUITE_TMP / "worker"
WORKER_DIR.mkdir(mode=0o700)
os.environ.setdefault("DASK_TEMPORARY_DIRECTORY", str(SUITE_TMP / "dask"))
# numba's thread pool has at least two threads, also on a one-core runner, so that the tests of the parallel
# kernels (--threads 2, test_threads.py) run them on two threads rather than passing on one (set before numba loads)
if int(os.environ.get("NUMBA_NUM_THREADS") or 0) < 2:
    os.environ["NUMBA_NUM_THREADS"] = str(max(2, os.cpu_count() or 1))  # numba's own default, at least 2
for _name in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "SVMSTRUCT_RESIDENT"):
    os.environ.pop(_name, None)
os.environ.update(SVMSTRUCT_RESIDENT_DIR=str(WORKER_DIR), SVMSTRUCT_RESIDENT_IDLE="900")
_SCRIPT = Path(sys.executable).parent / "svmstruct"
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "svmstruct"]
_THROUGH_THE_WORKER: set = set()  # the tests that had a command served by the suite's servers


def _served() -> int:
    return sum(log.read_text(errors="replace").count("running: pid") for log in WORKER_DIR.glob("*.log"))


@pytest.fixture(autouse=True)
def _count_served(request):
    before = _served()
    yield
    if _served() > before:
        _THROUGH_THE_WORKER.add(request.node.nodeid)


def _counts() -> tuple:
    """(commands served, tests that had one served, servers) of this process's suite servers."""
    return _served(), len(_THROUGH_THE_WORKER), len(list(WORKER_DIR.glob("*.sock")))


_FROM_PYTEST_WORKERS: list = []  # under pytest-xdist each of its workers has servers of its own: their _counts()


def pytest_sessionfinish(session):
    if hasattr(session.config, "workeroutput"):  # a pytest-xdist worker: its counts go to the controller
        session.config.workeroutput["served"] = _counts()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _FROM_PYTEST_WORKERS.append(getattr(node, "workeroutput", {}).get("served", (0, 0, 0)))


def pytest_terminal_summary(terminalreporter):
    served, tests, servers = (sum(c) for c in zip(_counts(), *_FROM_PYTEST_WORKERS))
    terminalreporter.write_line(f"resident worker: {served} commands of {tests} tests served by {servers} server(s) "
                                "of the suite (tests/test_resident.py has its own)")


def pytest_unconfigure(config):
    from svmstruct.worker import control

    control.stop_servers(str(WORKER_DIR), every=True)
    shutil.rmtree(SUITE_TMP, ignore_errors=True)

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


THROUGH_THE_WORKER = os.environ.get("SVMSTRUCT_TEST_OWN") != "1"  # the suite's default way (below)


def invoke(*args, stdin=None, worker=None, env=None):
    """`svmstruct ARGS` as a Makefile's recipe runs it: through the resident worker, which gives what a command's
    own process gives (tests/test_resident.py compares both ways) in a tenth of the time; worker=False: the installed
    command in its own process, as a shell runs it (worker=None: the suite's default, own processes throughout with
    SVMSTRUCT_TEST_OWN=1). stdin from a string; ENV: variables added to this process's environment."""
    worker = THROUGH_THE_WORKER if worker is None else worker
    environment = {**os.environ, **(env or {}), **({"SVMSTRUCT_RESIDENT": "1"} if worker else {})}
    if worker:
        suite_server(environment)
    run = subprocess.run([*COMMAND, *map(str, args)], input=(stdin or "").encode(), capture_output=True,
                         env=environment)
    return Result(run.returncode, run.stdout.decode(errors="replace"), run.stderr.decode(errors="replace"))


_LISTENING: set = set()  # the keys of the suite's servers known to be listening (worker.resident.key's environment)


def suite_server(environment: dict) -> None:
    """The suite's server of ENVIRONMENT's key listening, so that the next command is served: a first command
    starts it (and runs in its own process), or is served by it; once known to listen, not asked again."""
    import time

    from svmstruct.worker.resident import _KEY_PREFIXES

    known = tuple(sorted((k, v) for k, v in environment.items() if k.startswith(_KEY_PREFIXES)))
    if known in _LISTENING and list(WORKER_DIR.glob("*.sock")):
        return
    _LISTENING.add(known)
    before, sockets = _served(), set(WORKER_DIR.glob("*.sock"))
    subprocess.run([*COMMAND, "--version"], capture_output=True, env=environment, check=True)
    deadline = time.monotonic() + 120
    while _served() == before and not set(WORKER_DIR.glob("*.sock")) - sockets:
        assert time.monotonic() < deadline, "the suite's resident server did not start"
        time.sleep(0.05)


def invoke_here(*args, stdin=None):
    """`svmstruct ARGS` run in this process (svmstruct.cli.main), stdin from a string: for the tests that replace
    a function of the package (monkeypatch) before the command runs."""
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
