"""The resident worker (svmstruct.resident): commands through it give what their own processes give — outputs,
files, exit statuses, errors —, signals reach them, a killed caller ends its command, callers run side by side,
and it is off when asked or when it cannot be used. The rest of the suite runs with it off (conftest)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from svmstruct import resident

from test_robustness import files_in, slow_training_set

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "data" / "mq2008-small"


@pytest.fixture
def place():
    """A private socket directory (short: a Unix socket's path has at most 107 bytes); its server is stopped
    afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="svmr"))
    yield folder
    for pid in resident.stop_servers(str(folder)):
        assert _gone(pid)
    shutil.rmtree(folder, ignore_errors=True)


def _server_pids(folder: Path) -> list:
    return [int(m) for log in folder.glob("*.log") for m in re.findall(r"^pid (\d+):", log.read_text(), re.M)]


def _env(folder: Path, **extra) -> dict:
    return {**os.environ, "SVMSTRUCT_RESIDENT": "1", "SVMSTRUCT_RESIDENT_DIR": str(folder),
            "SVMSTRUCT_RESIDENT_IDLE": "60", **extra}


def svm(folder, *args, stdin=None, resident=True, cwd=None, **extra):
    env = _env(folder, **extra) if resident else {**os.environ, "SVMSTRUCT_RESIDENT": "0"}
    return subprocess.run([sys.executable, "-m", "svmstruct", *map(str, args)], input=stdin, capture_output=True,
                          text=True, env=env, cwd=cwd or ROOT)


def served(folder: Path) -> int:
    """How many commands the folder's servers have taken."""
    return sum(log.read_text().count("running: pid") for log in folder.glob("*.log"))


def running_server(folder: Path) -> None:
    """Start the folder's server with a first command (run by its own process) and wait until it listens."""
    first = svm(folder, "--version")
    assert first.returncode == 0
    deadline = time.monotonic() + 60
    while not list(folder.glob("*.sock")):
        assert time.monotonic() < deadline, "the server did not start: " + " ".join(
            log.read_text() for log in folder.glob("*.log"))
        time.sleep(0.05)


def test_commands_through_the_worker_give_what_their_own_processes_give(place, tmp_path):
    running_server(place)
    for through in (False, True):
        out = tmp_path / str(through)
        out.mkdir()
        model = out / "m"
        assert svm(place, "learn", "-l", "map", "-c", "10", "-v", "0", SMALL / "train.txt", model,
                   resident=through).returncode == 0
        scores = svm(place, "classify", SMALL / "test.txt", model, resident=through)
        piped = svm(place, "classify", "-", model, stdin=(SMALL / "test.txt").read_text(), resident=through)
        relative = svm(place, "eval", "-m", "map", "-m", "ndcg@10", SMALL.relative_to(ROOT) / "test.txt", "-",
                       stdin=scores.stdout, resident=through)
        verbose = svm(place, "learn", "-l", "pairs", "-v", "1", SMALL / "train.txt", out / "p", resident=through)
        assert scores.returncode == piped.returncode == relative.returncode == verbose.returncode == 0
        if not through:
            expected = (model.read_bytes(), scores.stdout, piped.stdout, relative.stdout)
            progress = verbose.stderr.count("\n")
            before = served(place)
        else:
            assert (model.read_bytes(), scores.stdout, piped.stdout, relative.stdout) == expected
            assert verbose.stderr.count("\n") == progress and "iter" in verbose.stderr
            assert served(place) == before + 5


def test_errors_and_exit_statuses_are_the_commands(place, tmp_path):
    running_server(place)
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:0.5\n0 qid:1 1:zero\n")
    cases = [("learn", "-v", "0", bad, tmp_path / "m"), ("learn", "--threads", "0", bad, "-"),
             ("classify", SMALL / "test.txt", tmp_path / "missing.model"), ("nonsense",), ("--help",)]
    for args in cases:
        own, through = svm(place, *args, resident=False), svm(place, *args)
        assert (through.returncode, through.stdout, through.stderr) == (own.returncode, own.stdout, own.stderr)
    assert served(place) == len(cases)
    assert files_in(tmp_path) == ["bad.txt"]


def test_a_broken_pipe_and_a_closed_stdout_end_as_in_their_own_process(place, tmp_path):
    """`classify | head -1` (the reader goes away: exit 141, quiet) and `classify >&-` (no stdout: the command
    runs in its own process, which reports it)."""
    running_server(place)
    model = tmp_path / "m"
    assert svm(place, "learn", "-v", "0", SMALL / "train.txt", model).returncode == 0
    big = tmp_path / "big.txt"
    big.write_text(re.sub(r" qid:\d+", "", (SMALL / "test.txt").read_text()) * 40)  # large enough to fill a pipe
    command = f"{sys.executable} -m svmstruct classify {big} {model} | head -1; echo $" + "{PIPESTATUS[0]}"
    for through in (False, True):
        env = _env(place) if through else {**os.environ, "SVMSTRUCT_RESIDENT": "0"}
        piped = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, cwd=ROOT)
        assert piped.stdout.splitlines()[-1] == "141" and piped.stderr == "", piped.stderr
        closed = subprocess.run(["bash", "-c", f"{sys.executable} -m svmstruct classify {big} {model} >&-"],
                                capture_output=True, text=True, env=env, cwd=ROOT)
        assert closed.returncode == 4 and "standard output" in closed.stderr, closed.stderr
    assert served(place) == 2  # the learn and the piped classify; the closed stdout ran in its own process


def test_callers_run_side_by_side(place, tmp_path):
    running_server(place)
    env = _env(place)
    children = [subprocess.Popen([sys.executable, "-m", "svmstruct", "learn", "-l", loss, "-v", "0",
                                  SMALL / "train.txt", tmp_path / f"{loss}.model"], env=env, cwd=ROOT)
                for loss in ("pairs", "map", "ndcg@10", "errorrate")]
    assert [child.wait(120) for child in children] == [0, 0, 0, 0]
    assert served(place) == 4
    for loss in ("pairs", "map", "ndcg@10", "errorrate"):
        svm(place, "learn", "-l", loss, "-v", "0", SMALL / "train.txt", tmp_path / "own", resident=False)
        assert (tmp_path / f"{loss}.model").read_bytes() == (tmp_path / "own").read_bytes()


def _started_training(place, tmp_path):
    data = tmp_path / "slow.dat"
    slow_training_set(data)
    running_server(place)
    child = subprocess.Popen([sys.executable, "-m", "svmstruct", "learn", "-l", "ndcg@10", "-c", "10000", "-v", "1",
                              data, tmp_path / "m"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=_env(place), cwd=ROOT)
    seen = child.stderr.readline()
    while not seen.startswith("iter    5") and child.poll() is None:
        seen = child.stderr.readline()
    assert child.poll() is None, "training ended before the signal: the test needs a slower training set"
    assert served(place) == 1
    worker = int(re.findall(r"running: pid (\d+)", " ".join(p.read_text() for p in place.glob("*.log")))[-1])
    return child, worker


def _gone(pid: int, seconds: float = 30) -> bool:
    """The process ended (a zombie has: the server's parent is init, which may reap it seconds later)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            with open(f"/proc/{pid}/status") as f:
                if any(line.startswith("State:") and "Z" in line for line in f):
                    return True
        except FileNotFoundError:
            if os.path.isdir("/proc"):
                return True  # ended between the two calls
        except OSError:
            pass
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_to_the_caller_reaches_the_command(place, tmp_path, sig, code, word):
    child, worker = _started_training(place, tmp_path)
    child.send_signal(sig)
    rest = child.stderr.read()
    assert child.wait(30) == code, rest
    assert [line for line in rest.splitlines() if line.startswith("svmstruct: error")] == [f"svmstruct: error: {word}"]
    assert _gone(worker)
    assert files_in(tmp_path) == ["slow.dat"]


def test_a_killed_caller_ends_its_command(place, tmp_path):
    child, worker = _started_training(place, tmp_path)
    child.kill()
    child.wait(30)
    assert _gone(worker)
    assert files_in(tmp_path) == ["slow.dat"]


def test_off_when_asked_or_when_the_directory_is_not_private(place, tmp_path):
    assert svm(place, "--version", SVMSTRUCT_RESIDENT="off").returncode == 0
    time.sleep(0.5)
    assert not list(place.glob("*"))
    place.chmod(0o755)
    try:
        result = svm(place, "learn", "-v", "0", SMALL / "train.txt", tmp_path / "m")
        assert result.returncode == 0 and (tmp_path / "m").exists()
        time.sleep(0.5)
        assert not list(place.glob("*"))
    finally:
        place.chmod(0o700)


def test_stop_servers_stops_the_running_server(place):
    running_server(place)
    (pid,) = _server_pids(place)
    assert resident.stop_servers(str(place)) == [pid]
    assert _gone(pid)
    assert not list(place.glob("*.sock"))
    assert resident.stop_servers(str(place)) == []


def test_the_server_leaves_when_idle(place):
    first = svm(place, "--version", SVMSTRUCT_RESIDENT_IDLE="1")
    assert first.returncode == 0
    deadline = time.monotonic() + 60
    while not _server_pids(place) and time.monotonic() < deadline:
        time.sleep(0.05)
    (pid,) = _server_pids(place)
    assert _gone(pid, 60)
    assert not list(place.glob("*.sock"))


def test_the_server_can_fork_children_that_run_parallel_kernels():
    """The preload loads kernels without launching numba's OpenMP layer, which would kill every child that runs
    a parallel kernel ('fork() called from a process already using GNU OpenMP')."""
    code = """if True:
        import os, numpy as np
        from svmstruct import resident, threads
        for kernel, signature in resident._preload():
            resident._load(kernel, signature)
        assert resident._safe_to_fork()
        from svmstruct import sparse_kernels
        pid = os.fork()
        if pid == 0:
            import numba
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
            X, w, out = np.ones((64, 8), dtype=np.float32), np.ones(8), np.empty(64)
            sparse_kernels._dense_matvec(X, w, out)
            os._exit(0 if (out == 8).all() else 1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "0", run.stderr


def test_a_server_that_failed_to_start_is_not_restarted_for_a_while(place, monkeypatch):
    monkeypatch.setenv("SVMSTRUCT_RESIDENT_DIR", str(place))
    monkeypatch.setenv("SVMSTRUCT_RESIDENT", "1")
    key = resident._key()
    name = str(place / "w-test")
    log = Path(name + ".log")
    log.write_text("pid 1: loading\nfailed: OSError('no room')\n")
    resident._start_server(name, key)
    time.sleep(1.0)
    assert log.read_text().startswith("pid 1:") and not list(place.glob("*.sock"))
    os.utime(log, (time.time() - 120, time.time() - 120))
    resident._start_server(name, key)
    deadline = time.monotonic() + 60
    while not list(place.glob("*.sock")):
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


def test_a_socket_path_too_long_leaves_the_command_to_its_process(tmp_path, monkeypatch):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True, mode=0o700)
    deep.chmod(0o700)
    monkeypatch.setenv("SVMSTRUCT_RESIDENT_DIR", str(deep))
    monkeypatch.setenv("SVMSTRUCT_RESIDENT", "1")
    assert resident.run(["--version"]) is None
    assert not list(deep.iterdir())
