"""The resident worker (svmstruct.worker.resident, svmstruct.worker.server): commands through it give what their own
processes give — outputs, files, exit statuses, errors, signals, descriptors, rights —, and anything it cannot
do as the own process would is left to the own process. Each test has a private socket directory and stops its
servers; the rest of the suite goes through the suite's own server (conftest)."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers import default_dispositions, files_in, slow_training_set

from svmstruct.worker import control, resident

from conftest import COMMAND

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "data" / "mq2008-small"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
OTHER_UID = 54321  # a user (and group) that owns nothing here


@pytest.fixture
def place():
    """A private socket directory; its servers are stopped afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="svmr"))
    yield folder
    for pid in control.stop_servers(str(folder), every=True):
        assert _gone(pid)
    shutil.rmtree(folder, ignore_errors=True)


def _env(folder: Path, **extra) -> dict:
    return {**os.environ, "SVMSTRUCT_RESIDENT": "1", "SVMSTRUCT_RESIDENT_DIR": str(folder),
            "SVMSTRUCT_RESIDENT_IDLE": "60", **extra}


def svm(folder, *args, stdin=None, resident=True, cwd=None, command=None, **extra):
    """`svmstruct ARGS` through FOLDER's worker (or its own process: resident=False)."""
    env = _env(folder, **extra) if resident else {**os.environ, "SVMSTRUCT_RESIDENT": "0", **extra}
    return subprocess.run([*(command or COMMAND), *map(str, args)], input=stdin, capture_output=True, text=True,
                          env=env, cwd=cwd or ROOT, timeout=600)


def _logs(folder: Path) -> str:
    """What the folder's servers logged."""
    return " ".join(log.read_text() for log in folder.glob("*.log"))


def served(folder: Path) -> int:
    """How many commands the folder's servers have taken."""
    return _logs(folder).count("running: pid")


def served_within(folder: Path, count: int, seconds: float = 10.0) -> int:
    """served(folder) once it reaches COUNT or SECONDS pass: a server logs a command just after forking the child that
    runs it, and the child's answer can reach the caller first."""
    deadline = time.monotonic() + seconds
    while served(folder) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return served(folder)


def taken(folder: Path) -> int:
    """How many commands the folder's servers have run: connections less those whose child the caller left (its own
    process ran the command), once the server has reaped them all."""
    deadline = time.monotonic() + 10
    while any(_children(pid) for pid in server_pids(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    logs = _logs(folder)
    return logs.count("running: pid") - logs.count("was not taken")


def _children(pid: int) -> list:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


def server_pids(folder: Path) -> list:
    return [int(lock.read_text().split()[0]) for lock in folder.glob("*.lock") if lock.read_text()]


def running_server(folder: Path, command=None, **extra) -> str:
    """Start the folder's server with a first command (run by its own process), wait until it listens: its
    socket's name."""
    sockets = set(folder.glob("*.sock"))
    assert svm(folder, "--version", command=command, **extra).returncode == 0
    deadline = time.monotonic() + 60
    while set(folder.glob("*.sock")) == sockets:
        assert time.monotonic() < deadline, "the server did not start: " + " ".join(
            log.read_text() for log in folder.glob("*.log"))
        time.sleep(0.05)
    return (set(folder.glob("*.sock")) - sockets).pop().name[:-len(".sock")]


def _gone(pid: int, seconds: float = 30) -> bool:
    """The process ended (a zombie has: the server's parent is init, which may reap it seconds later)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/status") as f:
                if any(line.startswith("State:") and "Z" in line for line in f):
                    return True
        except (FileNotFoundError, ProcessLookupError):  # (the latter: it ended while its status was read)
            return True
        time.sleep(0.05)
    return False


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/status") as f:
        return next(line.split()[1] for line in f if line.startswith("State:"))


def _last_child(folder: Path) -> int:
    return int(re.findall(r"running: pid (\d+)", _logs(folder))[-1])


# ---- the same results as the own process

@pytest.mark.slow
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


def _ranking_file(path: Path, queries: int = 12, docs: int = 20, features: int = 6) -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    lines = []
    for q in range(queries):
        for d in range(docs):
            x = rng.normal(size=features)
            label = int(np.clip(np.round(x[0] + x[1] + rng.normal()), 0, 2))
            lines.append(f"{label} qid:{q + 1} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x))
                         + f" # d{q}-{d}")
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("args", [["-l", "pairs"], ["-l", "map"], ["-l", "ndcg@10"], ["-l", "errorrate"],
                                  ["-l", "f1"], ["-l", "map", "-t", "2", "--k", "20"], ["div"]],
                         ids=["pairs", "map", "ndcg@10", "errorrate", "f1", "map-rbf", "div"])
@pytest.mark.slow
def test_every_family_on_the_parallel_kernels_writes_the_own_process_model(place, tmp_path, args):
    """With the parallel kernels forced (SVMSTRUCT_PARALLEL_SECONDS=0, two threads), every loss family trains in a
    child of the server (which loaded only the one-thread kernels) to the own process's bytes."""
    running_server(place, SVMSTRUCT_PARALLEL_SECONDS="0")
    if args == ["div"]:
        div = ROOT / "data" / "div" / "small"
        args, train = ["-l", "div", "--subtopics", f"{div}.qrels", "-k", "3"], f"{div}.svm"
    else:
        train = tmp_path / "train.txt"
        _ranking_file(train)
    models = []
    for through in (False, True):
        model = tmp_path / f"{through}.model"
        run = svm(place, "learn", *args, "-c", "10", "-v", "0", "--threads", "2", train, model, resident=through,
                  SVMSTRUCT_PARALLEL_SECONDS="0")
        assert run.returncode == 0, run.stderr
        models.append(model.read_bytes())
    assert models[0] == models[1]
    assert served_within(place, 1) == 1


@pytest.mark.slow
def test_a_kernel_the_server_loaded_can_be_called_by_one_compiled_later(tmp_path):
    """preload.load loads a cached kernel as numba's dispatcher does (registered for the functions that
    call it): a function compiled afterwards, in a forked child, that calls it compiles and runs. (Loading with
    numba's cache alone broke exactly this: 'No definition for lowering'.)"""
    module = tmp_path / "kernels_for_test.py"
    module.write_text("from numba import njit\n\n@njit(cache=True)\ndef inner(x):\n    return x * 2.0 + 1.0\n")
    prime = f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import kernels_for_test as k; k.inner(1.0)"
    assert subprocess.run([sys.executable, "-c", prime], capture_output=True).returncode == 0
    code = f"""if True:
        import os, sys
        sys.path.insert(0, {str(tmp_path)!r})
        import kernels_for_test as k
        from numba import njit
        from svmstruct.worker import preload, server as resident_server
        signatures = preload.cached_signatures(k.inner)
        assert signatures, "nothing cached"
        for signature in signatures:
            preload.load(k.inner, signature)
        assert k.inner.stats.cache_hits and not k.inner.stats.cache_misses
        pid = os.fork()
        if pid == 0:
            outer = njit(lambda x: k.inner(x) + k.inner(2.0 * x))
            os._exit(0 if outer(1.0) == 8.0 else 1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "0", run.stderr


@pytest.mark.slow
def test_a_stale_module_of_an_older_install_does_not_stop_the_preload(tmp_path):
    """`pip install .` over an older checkout can leave modules of the old layout in the package (setuptools keeps
    them in build/): the preload logs the one that fails to import and goes on."""
    import shutil

    shutil.copytree(ROOT / "svmstruct", tmp_path / "svmstruct", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "svmstruct" / "checkpoint.py").write_text("from svmstruct import train\nclass Writer(train.Callback):"
                                                         "\n    pass\n")
    code = "from svmstruct.worker import preload; preload.kernels(); import svmstruct.api; print('preloaded')"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "preloaded", run.stderr
    assert "not preloaded: svmstruct.checkpoint: AttributeError" in run.stderr


@pytest.mark.slow
def test_the_server_can_fork_children_that_run_parallel_kernels():
    """The preload loads kernels without launching numba's OpenMP layer, which would kill every child that runs
    a parallel kernel ('fork() called from a process already using GNU OpenMP')."""
    code = """if True:
        import os, numpy as np
        from svmstruct.worker import preload, server as resident_server
        for kernel, signature in preload.kernels():
            preload.load(kernel, signature)
        assert resident_server._safe_to_fork()
        from svmstruct.compute import matvec
        pid = os.fork()
        if pid == 0:
            import numba
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
            X, w, out = np.ones((64, 8), dtype=np.float32), np.ones(8), np.empty(64)
            matvec._dense_matvec(X, w, out)
            os._exit(0 if (out == 8).all() else 1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "0", run.stderr


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_broken_pipe_and_a_closed_stdout_end_as_in_their_own_process(place, tmp_path):
    """`classify | head -1` (the reader goes away: exit 141, quiet) and `classify >&-` (no stdout: the command
    runs in its own process, which reports it)."""
    running_server(place)
    model = tmp_path / "m"
    assert svm(place, "learn", "-v", "0", SMALL / "train.txt", model).returncode == 0
    big = tmp_path / "big.txt"
    big.write_text(re.sub(r" qid:\d+", "", (SMALL / "test.txt").read_text()) * 40)  # large enough to fill a pipe
    svmstruct = " ".join(COMMAND)
    command = f"{svmstruct} classify {big} {model} | head -1; echo $" + "{PIPESTATUS[0]}"
    for through in (False, True):
        env = _env(place) if through else {**os.environ, "SVMSTRUCT_RESIDENT": "0"}
        piped = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, cwd=ROOT)
        assert piped.stdout.splitlines()[-1] == "141" and piped.stderr == "", piped.stderr
        closed = subprocess.run(["bash", "-c", f"{svmstruct} classify {big} {model} >&-"],
                                capture_output=True, text=True, env=env, cwd=ROOT)
        assert closed.returncode == 4 and "standard output" in closed.stderr, closed.stderr
    assert served(place) == 2  # the learn and the piped classify; the closed stdout ran in its own process


@pytest.mark.slow
def test_descriptor_paths_are_the_callers(place, tmp_path):
    """`classify ... /dev/fd/4 4> out` writes out (not anything of the server), and a process substitution
    `<(...)` is read, through the worker as in the own process: every inherited descriptor is handed over."""
    running_server(place)
    model = tmp_path / "m"
    assert svm(place, "learn", "-l", "map", "-v", "0", SMALL / "train.txt", model).returncode == 0
    svmstruct = " ".join(COMMAND)
    results = []
    for through in (False, True):
        env = _env(place) if through else {**os.environ, "SVMSTRUCT_RESIDENT": "0"}
        out = tmp_path / f"out{through}.pred"
        script = (f"{svmstruct} classify {SMALL}/test.txt {model} /dev/fd/4 4> {out} && "
                  f"{svmstruct} eval -m map <(cat {SMALL}/test.txt) <(cat {out}) && "
                  f"{svmstruct} learn -l map -v 0 <(gzip -c {SMALL}/train.txt) /dev/fd/5 5> {out}.model")
        run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, cwd=ROOT)
        assert run.returncode == 0, run.stderr
        results.append((out.read_bytes(), run.stdout, (tmp_path / f"out{through}.pred.model").read_bytes()))
    assert results[0] == results[1]
    assert results[0][0].count(b"\n") == (SMALL / "test.txt").read_text().count("\n")
    assert served(place) == 4


@pytest.mark.slow
def test_callers_run_side_by_side(place, tmp_path):
    running_server(place)
    env = _env(place)
    children = [subprocess.Popen([*COMMAND, "learn", "-l", loss, "-v", "0", SMALL / "train.txt",
                                  tmp_path / f"{loss}.model"], env=env, cwd=ROOT)
                for loss in ("pairs", "map", "ndcg@10", "errorrate")]
    assert [child.wait(120) for child in children] == [0, 0, 0, 0]
    assert served(place) == 4
    for loss in ("pairs", "map", "ndcg@10", "errorrate"):
        svm(place, "learn", "-l", loss, "-v", "0", SMALL / "train.txt", tmp_path / "own", resident=False)
        assert (tmp_path / f"{loss}.model").read_bytes() == (tmp_path / "own").read_bytes()


# ---- signals and job control

def _handed_over(place, learn, **popen) -> tuple:
    """A verbose `learn` command run by a child of PLACE's server, once its training iterates: (caller, child). On a
    loaded machine a caller's hand-over can time out (TIMEOUT), and it then runs the command itself while its child
    is logged as not taken: such a caller is ended and started again."""
    for _ in range(3):
        before = served(place)
        caller = subprocess.Popen([*COMMAND, *map(str, learn)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=_env(place), cwd=ROOT, **{"preexec_fn": default_dispositions, **popen})
        seen = caller.stderr.readline()
        while not seen.startswith("iter    5") and caller.poll() is None:
            seen = caller.stderr.readline()
        assert caller.poll() is None, "training ended too soon: the test needs a slower training set"
        assert served_within(place, before + 1) == before + 1
        child = _last_child(place)
        if f"pid {child}: the command was not taken" not in _logs(place):
            return caller, child
        caller.kill()
        caller.wait(30)
    pytest.fail("three hand-overs in a row timed out")


def _started_training(place, tmp_path, **popen):
    data = tmp_path / "slow.dat"
    slow_training_set(data)
    running_server(place)
    return _handed_over(place, ["learn", "-l", "ndcg@10", "-c", "10000", "-v", "1", data, tmp_path / "m"], **popen)


@pytest.mark.slow
@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_to_the_caller_reaches_the_command(place, tmp_path, sig, code, word):
    child, worker = _started_training(place, tmp_path)
    child.send_signal(sig)
    rest = child.stderr.read()
    assert child.wait(30) == code, rest
    assert [line for line in rest.splitlines() if line.startswith("svmstruct: error")] == [f"svmstruct: error: {word}"]
    assert _gone(worker)
    assert files_in(tmp_path) == ["slow.dat"]


@pytest.mark.slow
def test_a_killed_caller_ends_its_command(place, tmp_path):
    child, worker = _started_training(place, tmp_path)
    child.kill()
    child.wait(30)
    assert _gone(worker)
    assert files_in(tmp_path) == ["slow.dat"]


@pytest.mark.slow
def test_a_command_killed_by_a_signal_kills_its_caller_alike(place, tmp_path):
    child, worker = _started_training(place, tmp_path)
    os.kill(worker, signal.SIGKILL)
    assert child.wait(30) == -signal.SIGKILL


@pytest.mark.slow
@pytest.mark.parametrize("through", [False, True], ids=["own", "worker"])
def test_signals_inherited_as_ignored_stay_ignored(place, tmp_path, through):
    """A script's background job ignores SIGINT and SIGQUIT, nohup ignores SIGHUP: the training survives them
    and writes its model, through the worker as in its own process."""
    data = tmp_path / "slow.dat"
    slow_training_set(data)
    running_server(place)
    env = _env(place) if through else {**os.environ, "SVMSTRUCT_RESIDENT": "0"}
    svmstruct = " ".join(COMMAND)
    script = (f"nohup {svmstruct} learn -l ndcg@10 -c 10 -v 0 -# 300 {data} {tmp_path}/m > /dev/null 2>&1 & P=$!; "
              "sleep 2; kill -INT $P; kill -QUIT $P; kill -HUP $P; wait $P; echo $?")
    run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert run.stdout.strip() == "0", run.stderr
    assert (tmp_path / "m").exists()
    assert served(place) == (1 if through else 0)


@pytest.mark.slow
def test_ctrl_z_stops_the_command_and_fg_resumes_it(place, tmp_path):
    """In an interactive shell (a pseudo-terminal), Ctrl-Z stops the job and the command with it (its process
    stays stopped while the job is); `fg` resumes both and the command finishes."""
    import pty
    import select

    data = tmp_path / "slow.dat"
    slow_training_set(data)
    running_server(place)
    pid, terminal = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], {**_env(place), "PS1": "$ ", "TERM": "dumb"})

    def read(seconds):
        out, end = b"", time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([terminal], [], [], 0.05)[0]:
                try:
                    out += os.read(terminal, 65536)
                except OSError:
                    break
        return out.decode(errors="replace")

    try:
        read(1)
        svmstruct = " ".join(COMMAND)
        os.write(terminal, f"{svmstruct} learn -l ndcg@10 -c 10000 -v 1 -# 80 {data} {tmp_path}/m\n".encode())
        deadline = time.monotonic() + 60
        while served(place) < 1 or "iter" not in read(0.2):
            assert time.monotonic() < deadline
        worker = _last_child(place)
        os.write(terminal, b"\x1a")  # Ctrl-Z
        assert "Stopped" in read(2)
        assert _state(worker) == "T"
        time.sleep(1)
        assert _state(worker) == "T"
        os.write(terminal, b"fg\n")
        time.sleep(0.5)
        assert _state(worker) in ("R", "S")
        os.write(terminal, b"echo done-$((6 * 7))\n")  # run once the job ends (the terminal echoes the line at once)
        deadline, seen = time.monotonic() + 240, ""
        while "done-42" not in seen:
            assert time.monotonic() < deadline
            seen += read(0.5)
        assert (tmp_path / "m").exists()
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(terminal)


@pytest.mark.slow
def test_a_child_holds_nothing_of_other_callers(place, tmp_path):
    """Two commands run; the server and the first command's child are killed: the first caller ends at once
    (no other child holds its connection), while the second command runs on."""
    data = tmp_path / "slow.dat"
    slow_training_set(data)
    running_server(place)
    (server,) = server_pids(place)
    (callers, (first, second)) = zip(*(
        _handed_over(place, ["learn", "-l", "ndcg@10", "-c", "10000", "-v", "1", "-#", "2000", data, tmp_path / name])
        for name in ("a", "b")))
    os.kill(server, signal.SIGKILL)
    os.kill(first, signal.SIGKILL)
    assert callers[0].wait(10) != 0  # its child is gone: one error line
    assert callers[1].poll() is None and _state(second) in ("R", "S", "D")  # alive: running, sleeping or in disk I/O
    callers[1].kill()
    callers[1].wait(30)
    assert _gone(second)


# ---- what the worker leaves to the own process


@pytest.mark.slow
def test_a_stopped_server_leaves_the_command_to_its_own_process_within_its_timeout(place, tmp_path):
    """... and holds nothing of it: the command's output pipes end when it does (no descriptor is sent before a
    child of the server answered). It costs the connect timeout over the command's own process, measured beside
    it (on an idle machine: ~1.2 s in all)."""
    running_server(place)
    (server,) = server_pids(place)
    started = time.monotonic()
    assert svm(place, "learn", "-l", "pairs", "-v", "0", SMALL / "train.txt", tmp_path / "own", resident=False
               ).returncode == 0
    own = time.monotonic() - started
    os.kill(server, signal.SIGSTOP)
    try:
        started = time.monotonic()
        run = svm(place, "learn", "-l", "pairs", "-v", "0", SMALL / "train.txt", tmp_path / "m")
        took = time.monotonic() - started
    finally:
        os.kill(server, signal.SIGCONT)
    assert run.returncode == 0 and (tmp_path / "m").exists(), run.stderr
    assert took < own + 2 * resident.TIMEOUT + 0.5, (took, own)


@pytest.mark.slow
def test_a_silent_client_does_not_keep_the_server(place):
    running_server(place, SVMSTRUCT_RESIDENT_IDLE="1")
    (server,) = server_pids(place)
    (sock,) = place.glob("*.sock")
    silent = socket.socket(socket.AF_UNIX)
    silent.connect(str(sock))
    try:
        assert _gone(server, 15)
    finally:
        silent.close()
    assert files_in(place) == []


@pytest.mark.slow
def test_a_profiler_sees_the_training(place, tmp_path):
    """`python -m cProfile -m svmstruct learn` profiles the training: under a profiler or tracer the command runs
    in its own process."""
    running_server(place)
    run = svm(place, "learn", "-l", "pairs", "-v", "0", SMALL / "train.txt", tmp_path / "m",
              command=[sys.executable, "-m", "cProfile", "-s", "cumulative", "-m", "svmstruct"])
    assert run.returncode == 0, run.stderr
    assert "train_grid" in run.stdout and "learn_command" in run.stdout
    assert served(place) == 0


@pytest.mark.slow
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


def test_a_deep_socket_directory_works(tmp_path):
    """The socket is reached through the directory's descriptor: a path of any length."""
    deep = tmp_path / ("d" * 100) / ("e" * 100)
    deep.mkdir(parents=True, mode=0o700)
    try:
        running_server(deep)
        assert svm(deep, "losses").returncode == 0 and served(deep) == 1
    finally:
        control.stop_servers(str(deep), every=True)


@pytest.mark.slow
def test_interpreter_options_and_a_c_locale_are_served(place):
    """The server runs with its callers' interpreter options (-W error here) and UTF-8 mode (on under a C
    locale, which Python coerces for the processes it starts): such callers are served too."""
    python = [sys.executable, "-W", "error", "-m", "svmstruct"]
    for extra in ({}, {"LC_ALL": "C", "LANG": "C"}):
        running_server(place, command=python, **extra)
        before = served(place)
        assert svm(place, "losses", command=python, **extra).returncode == 0
        assert served(place) == before + 1, _logs(place)
    assert len(server_pids(place)) == 2


# ---- the server: its files, its name, its installation

def test_stop_and_status(place):
    running_server(place)
    (pid,) = server_pids(place)
    status = svm(place, "worker", "status")
    assert status.returncode == 0 and f"pid {pid}" in status.stdout and "on" in status.stdout
    stop = svm(place, "worker", "stop")
    assert stop.returncode == 0 and f"pid {pid}" in stop.stdout
    assert _gone(pid)
    assert "no server running" in svm(place, "worker", "status").stdout
    assert svm(place, "worker", "stop").stdout.startswith("stopped 0")
    assert served(place) == 0 and files_in(place) == []  # `worker` starts no server


@pytest.mark.slow
def test_the_server_leaves_when_idle_and_leaves_nothing(place):
    running_server(place, SVMSTRUCT_RESIDENT_IDLE="1")
    (pid,) = server_pids(place)
    assert _gone(pid, 60)
    assert files_in(place) == []


def _private_copy(package: Path, tmp_path: Path) -> dict:
    """The environment of commands that import a copy of PACKAGE (its compiled kernels included) from TMP_PATH: a
    test that edits it stops only its own server, not those of the tests running beside it."""
    shutil.copytree(package, tmp_path / "copies" / package.name)
    return {"PYTHONPATH": str(tmp_path / "copies")}


@pytest.mark.slow
def test_a_server_whose_package_changed_stops(place, tmp_path):
    """An edit that keeps a file's size and modification time still changes its change time: the server stops
    at the next command, which runs in its own process; the one after is served by a new server."""
    copy = _private_copy(ROOT / "svmstruct", tmp_path)
    running_server(place, **copy)
    (pid,) = server_pids(place)
    source = tmp_path / "copies" / "svmstruct" / "errors.py"
    info = source.stat()
    os.utime(source, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert svm(place, "losses", **copy).returncode == 0
    assert _gone(pid) and served(place) == 0
    running_server(place, **copy)
    assert svm(place, "losses", **copy).returncode == 0 and served(place) == 1


def test_nothing_secret_in_the_servers_command_line(place):
    running_server(place, PYTHON_KEYRING_PASSWORD="hunter2", LC_MESSAGES="C")
    (pid,) = server_pids(place)
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        line = f.read()
    assert b"hunter2" not in line and str(place).encode() not in line and len(line) < 300
    assert line.endswith(b"svmstruct-resident-worker\0")


@pytest.mark.slow
def test_a_server_that_failed_to_start_is_not_restarted_for_a_while(place, monkeypatch):
    monkeypatch.setenv("SVMSTRUCT_RESIDENT_DIR", str(place))
    name = resident.socket_name(resident.key())
    log = place / f"{name}.log"
    log.write_text("pid 1: loading\nfailed: OSError('no room')\n")
    fd = resident.open_directory()
    try:
        resident._start_server(fd, name)
        time.sleep(1.0)
        assert log.read_text().startswith("pid 1:") and not list(place.glob("*.sock"))
        os.utime(log, (time.time() - 120, time.time() - 120))
        resident._start_server(fd, name)
    finally:
        os.close(fd)
    deadline = time.monotonic() + 60
    while not list(place.glob("*.sock")):
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


@pytest.mark.slow
@ROOT_ONLY
def test_a_full_file_system_starts_no_server(tmp_path):
    """A socket directory on a file system with less than 1 MiB free: commands run in their own processes and
    leave nothing there (no server, no log per command)."""
    full = tmp_path / "full"
    full.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "none", str(full)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs")
    try:
        folder = full / "sockets"
        folder.mkdir(mode=0o700)
        (full / "filler").write_bytes(b"x" * 200_000)
        for _ in range(3):
            assert svm(folder, "--version").returncode == 0
        time.sleep(1)
        assert files_in(folder) == []
    finally:
        control.stop_servers(str(full / "sockets"), every=True)
        subprocess.run(["umount", str(full)])


# ---- other users, fewer rights (as root: another uid, dropped groups and capabilities, a mount namespace)

def _as_other_user(task, *args):
    """Run task(*args) in a forked child as OTHER_UID; its exit status."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(OTHER_UID)
            os.setuid(OTHER_UID)
            os._exit(task(*args))
        except BaseException:
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _trap(folder: Path, names: list, seconds: float, ready: int, bind_first: bool = False) -> None:
    """Another user's server: listens on FOLDER/NAME.sock for every name and exits with 0 when it got
    connections that sent nothing, 1 when it got no connection, 2 when a connection sent a byte."""
    traps = [socket.socket(socket.AF_UNIX) for _ in names]
    if bind_first:  # bound by this user in its own directory, listened on as the other: a forged peer
        for trap, name in zip(traps, names):
            trap.bind(str(folder / f"{name}.sock"))
    os.setgroups([])
    os.setgid(OTHER_UID)
    os.setuid(OTHER_UID)
    if not bind_first:
        folder.mkdir(mode=0o700)
        for trap, name in zip(traps, names):
            trap.bind(str(folder / f"{name}.sock"))
    for trap in traps:
        trap.listen(8)  # the peer's credentials are the listener's at this call
        trap.setblocking(False)
    os.write(ready, b"x")
    accepted = sent = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for trap in traps:
            try:
                connection, _ = trap.accept()
            except BlockingIOError:
                continue
            accepted += 1
            connection.settimeout(5)
            try:
                sent += len(connection.recv(4096))
            except OSError:
                pass
        time.sleep(0.02)
    os._exit(2 if sent else 0 if accepted else 1)


def _start_trap(folder: Path, names: list, seconds: float, bind_first: bool = False) -> int:
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            _trap(folder, names, seconds, ready_write, bind_first)
        finally:
            os._exit(3)
    os.close(ready_write)
    ready = os.read(ready_read, 1)
    os.close(ready_read)
    assert ready == b"x", f"the other user's server did not start ({_trap_status(pid)})"
    return pid


def _trap_status(pid: int) -> int:
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.mark.slow
@ROOT_ONLY
def test_a_directory_swapped_by_another_user_is_never_used(tmp_path, monkeypatch):
    """The socket directory sits in a directory another user can write: that user swaps it for one of theirs,
    holding sockets of the right names. Swapped before the command opens it: the command sees a directory that
    is not its user's and runs in its own process; swapped after: it goes on through the descriptor it opened,
    into its own directory. The other user's sockets never receive a connection."""
    parent = Path(tempfile.mkdtemp(prefix="svmshared"))  # in /tmp: the other user can reach it
    parent.chmod(0o755)
    os.chown(parent, OTHER_UID, OTHER_UID)
    mine, theirs = parent / "svmstruct", parent / "theirs"
    mine.mkdir(mode=0o700)
    name = running_server(mine)  # the name a command's key gives, from a real server
    for pid in control.stop_servers(str(mine), every=True):
        assert _gone(pid)
    monkeypatch.setenv("SVMSTRUCT_RESIDENT_DIR", str(mine))
    here = resident.socket_name(resident.key())  # the name of this process's key
    trap = _start_trap(theirs, [name, here], 6.0)
    try:
        assert _as_other_user(_exchange, str(mine), str(theirs)) == 0  # swapped before the command opens it
        result = svm(mine, "learn", "-v", "0", SMALL / "train.txt", tmp_path / "m1")
        assert result.returncode == 0 and (tmp_path / "m1").exists()
        assert _as_other_user(_exchange, str(mine), str(theirs)) == 0  # back
        fd = resident.open_directory()
        assert fd is not None
        assert _as_other_user(_exchange, str(mine), str(theirs)) == 0  # swapped after the command opened it
        assert resident._run(fd, ["--version"]) is None  # no server in its own directory yet: it starts one there
        os.close(fd)
    finally:
        assert _trap_status(trap) == 1  # not one connection
        for folder in (mine, theirs):
            for pid in control.stop_servers(str(folder), every=True):
                _gone(pid)
        shutil.rmtree(parent, ignore_errors=True)


def _exchange(a: str, b: str) -> int:
    """renameat2(RENAME_EXCHANGE): A and B swap places atomically (as the other user)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, exchange = -100, 2
    return 0 if libc.renameat2(at_fdcwd, a.encode(), at_fdcwd, b.encode(), exchange) == 0 else 1


@pytest.mark.slow
@ROOT_ONLY
def test_a_server_of_another_user_gets_nothing(place, tmp_path):
    """A socket of the right name in the command's own directory, but listened on by another user (a forged
    peer): SO_PEERCRED tells, and the command sends nothing and runs in its own process."""
    name = running_server(place)
    for pid in control.stop_servers(str(place), every=True):
        assert _gone(pid)
    trap = _start_trap(place, [name], 5.0, bind_first=True)
    result = svm(place, "learn", "-v", "0", SMALL / "train.txt", tmp_path / "m")
    assert result.returncode == 0 and (tmp_path / "m").exists()
    assert _trap_status(trap) == 0  # connected, and not one byte of the request


@pytest.mark.slow
@ROOT_ONLY
def test_callers_with_fewer_rights_do_not_get_the_servers(place, tmp_path):
    """A file another user owns that only a group may read, and one only its owner may read: a caller without the
    group (setpriv --clear-groups) or without the capabilities to override file permissions reads neither, through
    the worker as in its own process, whichever rights the server's first caller had."""
    data = tmp_path / "group-only.txt"
    data.write_bytes((SMALL / "train.txt").read_bytes())
    os.chown(data, OTHER_UID, OTHER_UID)
    data.chmod(0o040)
    private = tmp_path / "owner-only.txt"
    private.write_bytes((SMALL / "train.txt").read_bytes())
    os.chown(private, OTHER_UID, OTHER_UID)
    private.chmod(0o600)
    no_override = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    with_group = [*no_override, "--groups", str(OTHER_UID), *COMMAND]
    without_group = [*no_override, "--clear-groups", *COMMAND]
    running_server(place, command=with_group)
    before = served(place)
    assert svm(place, "learn", "-v", "0", data, tmp_path / "a", command=with_group).returncode == 0
    assert served(place) == before + 1
    for through in (True, False):
        refused = svm(place, "learn", "-v", "0", data, tmp_path / "b", command=without_group, resident=through)
        assert refused.returncode == 1 and "Permission denied" in refused.stderr, refused.stderr
    assert served(place) == before + 1
    running_server(place)  # a server of a caller with every right
    assert svm(place, "learn", "-v", "0", private, tmp_path / "c").returncode == 0
    for through in (True, False):
        refused = svm(place, "learn", "-v", "0", private, tmp_path / "d", command=[*no_override, *COMMAND],
                      resident=through)
        assert refused.returncode == 1 and "Permission denied" in refused.stderr, refused.stderr
    assert not (tmp_path / "b").exists() and not (tmp_path / "d").exists()


@pytest.mark.slow
@ROOT_ONLY
@pytest.mark.skipif(not shutil.which("unshare"), reason="needs unshare")
def test_a_caller_in_its_own_mount_namespace_reads_and_writes_its_own_files(place, tmp_path):
    """Inside `unshare -m` a tmpfs hides the folder's 60-document file behind a 4-document one: the commands
    train on the 4 documents and write their model inside the namespace, not on the host's folder."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "train.txt").write_text("".join(f"{i % 3} qid:{1 + i // 20} 1:{i % 7} 2:{i % 5}\n" for i in range(60)))
    running_server(place)  # a server outside the namespace
    svmstruct = " ".join(COMMAND)
    script = (f"mount -t tmpfs none {folder} && printf '1 qid:1 1:1\\n0 qid:1 1:2\\n1 qid:2 2:1\\n0 qid:2 2:3\\n' > "
              f"{folder}/train.txt && for i in 1 2 3; do {svmstruct} learn -v 0 {folder}/train.txt {folder}/m$i "
              f"|| exit 1; sleep 1; done; grep -h 'documents\\|docs' {folder}/m3 | head -3; ls {folder}")
    run = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], capture_output=True,
                         text=True, env=_env(place), cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "m3" in run.stdout and re.search(r"\b4\b", run.stdout), run.stdout
    assert files_in(folder) == ["train.txt"] and len((folder / "train.txt").read_text().splitlines()) == 60


# ---- where the worker serves, and whom it leaves to their own processes

SANDBOX = [sys.executable, str(ROOT / "tests" / "sandbox.py")]


def _shell_env(folder: Path, **extra) -> dict:
    """A plain shell's environment: no SVMSTRUCT_RESIDENT, not inside make."""
    env = {k: v for k, v in os.environ.items() if k not in ("SVMSTRUCT_RESIDENT", "MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return {**env, "SVMSTRUCT_RESIDENT_DIR": str(folder), **extra}


def test_a_shell_command_runs_in_its_own_process_and_leaves_no_server(place, tmp_path):
    for _ in range(2):
        run = subprocess.run([*COMMAND, "learn", "-v", "0", SMALL / "train.txt", tmp_path / "m"], capture_output=True,
                             text=True, env=_shell_env(place), cwd=ROOT, timeout=300)
        assert run.returncode == 0, run.stderr
    time.sleep(0.5)
    assert files_in(place) == [] and served(place) == 0
    status = subprocess.run([*COMMAND, "worker", "status"], capture_output=True, text=True, env=_shell_env(place))
    assert "inside make only" in status.stdout and "no server running" in status.stdout


@pytest.mark.slow
def test_a_makefile_batch_is_served_and_writes_what_its_own_processes_write(place, tmp_path):
    """The pattern of the README's experiments: learn, classify and eval per C in a Makefile, make -j2."""
    svmstruct = " ".join(COMMAND)
    rules = [f"all: {' '.join(f'c{c}.eval' for c in (1, 10, 100))}"]
    for c in (1, 10, 100):
        rules += [f"c{c}.model:\n\t{svmstruct} learn -l pairs -c {c} -v 0 {SMALL}/train.txt $@",
                  f"c{c}.pred: c{c}.model\n\t{svmstruct} classify {SMALL}/test.txt $< $@",
                  f"c{c}.eval: c{c}.pred\n\t{svmstruct} eval -m map {SMALL}/test.txt $< > $@"]
    outputs = {}
    for name, extra in (("own", {"SVMSTRUCT_RESIDENT": "0"}), ("make", {})):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "Makefile").write_text("\n".join(rules) + "\n")
        run = subprocess.run(["make", "-s", "-j2", "-C", str(folder)], capture_output=True, text=True,
                             env=_shell_env(place, **extra), timeout=600)
        assert run.returncode == 0, run.stderr
        outputs[name] = {p.name: p.read_bytes() for p in folder.iterdir() if p.name != "Makefile"}
    assert outputs["make"] == outputs["own"] and len(outputs["own"]) == 9
    assert served(place) >= 4  # the first commands start the server and run in their own processes


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", [["setpriv", "--no-new-privs"], [*SANDBOX, "--deny-rename"]],
                         ids=["no_new_privs", "seccomp"])
def test_a_sandboxed_caller_runs_its_command_itself(place, tmp_path, sandbox):
    """no_new_privs or a seccomp filter (here one that fails rename(2)): the command runs in the caller's own process,
    where the filter holds; -v 2 says why."""
    if sandbox[0] == "setpriv" and not shutil.which("setpriv"):
        pytest.skip("needs setpriv")
    running_server(place)
    # a caller under another filter of as many rules (which allows everything) may start a server: the rules cannot
    # be compared, only counted, so that server must not serve a caller under the filter that denies rename
    svm(place, "--version", command=[*SANDBOX, "--allow-all", *COMMAND])
    time.sleep(3)
    before = taken(place)
    run = svm(place, "learn", "-v", "2", "-l", "map", SMALL / "train.txt", tmp_path / "m", command=[*sandbox, *COMMAND])
    assert run.returncode != 97, run.stderr
    assert "running in its own process, not the resident worker's" in run.stderr
    if "--deny-rename" in sandbox:  # the model cannot be put in place under this filter: exit 4, nothing written
        assert run.returncode == 4 and "cannot write" in run.stderr and files_in(tmp_path) == [], run.stderr
    else:
        assert run.returncode == 0 and (tmp_path / "m").exists()
    assert taken(place) == before


def _landlocked(tmp_path: Path, place: Path, no_nnp: bool) -> list:
    """A command line in a Landlock domain that may read the interpreter, the package, the shipped data and the
    system, and write tmp_path/out and the socket directory; nothing else of tmp_path."""
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    readable = [p for p in ("/usr", "/lib", "/lib64", "/bin", "/etc", "/proc", "/dev", sys.base_prefix, sys.prefix,
                            str(SMALL), *path) if os.path.exists(p)]
    packages = [os.path.join(p, "svmstruct") for p in (str(ROOT), *path)]  # where numba caches the kernels
    writable = [str(tmp_path / "out"), str(place), *(p for p in packages if os.path.isdir(p))]
    return [*SANDBOX, "--landlock-read", ":".join(readable), "--landlock-write", ":".join(writable),
            *(["--no-nnp"] if no_nnp else []), "--", *COMMAND]


@pytest.mark.slow
@pytest.mark.parametrize("no_nnp", [False, True], ids=["unprivileged", "root-without-no-new-privs"])
def test_a_landlocked_caller_reads_and_writes_only_what_its_domain_allows(place, tmp_path, no_nnp):
    """A private file outside the domain: its own process gets "Permission denied", and so must its command through
    the worker. Root may enter a domain without no_new_privs: nothing in /proc shows it; the kernel then refuses the
    caller ptrace's read access to the worker's child, and the command runs in its own process."""
    if no_nnp and os.geteuid() != 0:
        pytest.skip("only root may enter a Landlock domain without no_new_privs")
    if subprocess.run([*SANDBOX, "--landlock-read", "/", "--", "true"]).returncode == 97:
        pytest.skip("the kernel has no Landlock")
    (tmp_path / "out").mkdir()
    private = tmp_path / "private.txt"
    private.write_bytes((SMALL / "test.txt").read_bytes())
    model = tmp_path / "out" / "m"
    assert svm(place, "learn", "-v", "0", "-l", "map", SMALL / "train.txt", model, resident=False).returncode == 0
    running_server(place)
    before = served(place)
    command = _landlocked(tmp_path, place, no_nnp)
    for through in (False, True):
        read = svm(place, "classify", "-v", "2", private, model, tmp_path / "out" / "p", command=command,
                   resident=through)
        assert read.returncode == 1 and "Permission denied" in read.stderr, read.stderr
        written = svm(place, "classify", SMALL / "test.txt", model, tmp_path / "escaped", command=command,
                      resident=through)
        assert written.returncode == 4 and not (tmp_path / "escaped").exists(), written.stderr
        allowed = svm(place, "classify", SMALL / "test.txt", model, tmp_path / "out" / "p", command=command,
                      resident=through)
        assert allowed.returncode == 0 and (tmp_path / "out" / "p").exists(), allowed.stderr
    assert taken(place) == before


@pytest.mark.slow
def test_a_background_job_that_reads_the_terminal_is_stopped_by_it(place, tmp_path):
    """`svmstruct classify - model &` in an interactive shell: the kernel stops a background job that reads its
    terminal (SIGTTIN); the worker's child, which has no terminal, would take what the user types."""
    import pty
    import select

    running_server(place)
    model = tmp_path / "m"
    assert svm(place, "learn", "-v", "0", "-l", "map", SMALL / "train.txt", model).returncode == 0
    pid, terminal = pty.fork()
    if pid == 0:
        os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], {**_env(place), "PS1": "$ "})
    try:
        def send(text: str, wait: float = 2.0, until: str = "") -> str:
            """What the terminal shows within `wait` seconds of typing `text`, or as soon as it shows `until`."""
            os.write(terminal, text.encode())
            seen, deadline = b"", time.monotonic() + wait
            while time.monotonic() < deadline and not (until and re.search(until, seen.decode(errors="replace"))):
                if select.select([terminal], [], [], 0.1)[0]:
                    try:
                        seen += os.read(terminal, 4096)
                    except OSError:
                        break
            return seen.decode(errors="replace")

        send(f"{' '.join(COMMAND)} classify - {model} > {tmp_path}/p &\n", 10, until=r"\[1\] \d+")
        deadline = time.monotonic() + 10
        jobs = ""
        while "topped" not in jobs and time.monotonic() < deadline:  # the job reads its terminal: stopped by it
            jobs = send("jobs\n", 1, until=r"\[1\]\+?\s+\w+")
        send("1 qid:1 1:0.5\n", 2, until="not found")
        assert "Stopped" in jobs or "stopped" in jobs, jobs
        send("kill -9 %1\nexit\n", 2)
    finally:
        os.close(terminal)
        os.waitpid(pid, 0)


@pytest.mark.slow
def test_a_dependency_edited_in_place_stops_the_server(place, tmp_path):
    """A file of a dependency the server imported (click's termui.py) edited in place, its metadata untouched."""
    import click

    copy = _private_copy(Path(click.__file__).parent, tmp_path)
    running_server(place, **copy)
    (pid,) = server_pids(place)
    source = tmp_path / "copies" / "click" / "termui.py"
    info = source.stat()
    os.utime(source, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    assert svm(place, "losses", **copy).returncode == 0
    assert _gone(pid) and served(place) == 0


@pytest.mark.slow
def test_a_killed_caller_gets_nothing_more_on_its_streams(place, tmp_path):
    """SIGKILL ends a process without a word: its command through the worker ends too (no temporary file), and
    writes nothing more to the caller's stderr (here a file the test reads after)."""
    data = tmp_path / "slow.dat"
    slow_training_set(data)
    running_server(place)
    log = tmp_path / "stderr.txt"
    with open(log, "w") as stderr:
        child = subprocess.Popen([*COMMAND, "learn", "-l", "ndcg@10", "-c", "10000", "-v", "1", data, tmp_path / "m"],
                                 stdout=subprocess.DEVNULL, stderr=stderr, env=_env(place), cwd=ROOT,
                                 preexec_fn=default_dispositions)
        deadline = time.monotonic() + 120
        while "iter    5" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child.poll() is None and served(place) == 1
        worker = _last_child(place)
        child.kill()
        child.wait(30)
    assert _gone(worker)
    lines = log.read_text().splitlines()
    assert not [line for line in lines if line.startswith("svmstruct:")], lines[-3:]
    assert files_in(tmp_path) == ["slow.dat", "stderr.txt"]


@pytest.mark.parametrize("idle", ["60s", "-1", "nan", "inf"])
def test_a_malformed_idle_time_is_said_and_starts_no_server(place, tmp_path, idle):
    for _ in range(2):
        run = svm(place, "--version", SVMSTRUCT_RESIDENT_IDLE=idle)
        assert "SVMSTRUCT_RESIDENT_IDLE" in run.stderr and "not used" in run.stderr
    time.sleep(0.5)
    assert files_in(place) == []
