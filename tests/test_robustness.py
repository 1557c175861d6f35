"""Bad input gets a clear error and loses nothing: every case of the robustness audit. Each checks the
exit code, one line on stderr without a traceback, and that no file (temporary files included) is left
behind. In-process where the process itself is not the point; signals, pipes and devices in a real one."""
import gzip
import os
import signal
import stat
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import ROOT, invoke

TRAIN = ROOT / "data" / "mq2008-small" / "train.txt"
TEST = ROOT / "data" / "mq2008-small" / "test.txt"
VALI = ROOT / "data" / "mq2008-small" / "vali.txt"
DIV = ROOT / "data" / "div" / "small"


def one_line_error(result, code, *fragments):
    lines = result.stderr.strip().splitlines()
    assert result.returncode == code, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    errors = [line for line in lines if not line.startswith("svmstruct: warning:")]
    assert len(errors) == 1 and errors[0].startswith("svmstruct: error: "), result.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


def files_in(folder):
    return sorted(p.name for p in folder.iterdir())


def process(*args, env=None, **kw):
    return subprocess.run([sys.executable, "-m", "svmstruct", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, **kw)


# ---- options: checked before any data is read

@pytest.mark.parametrize("args, fragment", [
    (["-c", "inf"], "-c"), (["-c", "nan"], "-c"), (["-c", "0"], "-c"), (["--b", "nan"], "--b"),
    (["-e", "nan"], "epsilon"), (["-e", "0"], "epsilon"), (["-#", "0"], "iteration limit"),
    (["-#", "-5"], "iteration limit"), (["-l", "f1", "--beta", "nan"], "--beta"),
    (["-l", "f1", "--beta", "-1"], "--beta"), (["-l", "ndcg@10", "-k", "0"], "-k"), (["-l", "prec@k", "-k", "0"], "-k"),
    (["-l", "eru", "--eru-alpha", "1"], "--eru-alpha"),
    (["-l", "ndcg", "--position-weights", "pow:-1"], "--position-weights"),
    (["-l", "map", "--beta", "2"], "--beta does not apply to loss map"),
    (["-l", "ndcg@10", "-k", "5"], "contradicts"), (["-l", "pairs", "--b", "1"], "--b does not apply to loss pairs"),
    (["-l", "div"], "needs --subtopics"), (["-l", "nosuchloss"], "unknown loss"),
    (["-c", "1,10"], "--validate"), (["--select", "map"], "--select applies only with --validate"),
    (["-l", "map", "-c", "1,10", "--validate", VALI, "--select", "nosuch"], "unknown measure"),
])
def test_bad_options_are_usage_errors_before_reading(tmp_path, args, fragment):
    model = tmp_path / "m"
    result = invoke("learn", *args, tmp_path / "does-not-exist.dat", model)  # the data is never opened
    one_line_error(result, 2, fragment)
    assert files_in(tmp_path) == []


def test_an_unwritable_model_path_fails_before_training(tmp_path):
    result = invoke("learn", "-l", "map", "-v", "1", TRAIN, tmp_path / "no" / "such" / "dir" / "m")
    one_line_error(result, 4, "cannot write")
    assert "iter" not in result.stderr  # no training happened


def test_only_one_input_can_be_stdin():
    one_line_error(invoke("classify", "-", "-"), 2, "stdin")
    one_line_error(invoke("eval", "-", "-"), 2, "stdin")
    one_line_error(invoke("learn", "-l", "map", "-c", "1,2", "--validate", "-", "-", "m"), 2, "stdin")


def test_an_ambiguous_numeric_loss_code_warns():
    result = invoke("learn", "-l", "1", "-v", "0", TRAIN, "-")
    assert result.returncode == 0
    assert "warning: -l 1 is loss f1" in result.stderr and "-l pairs" in result.stderr


# ---- data that cannot be trained on

def test_overflowing_feature_values_exit_3_at_once(tmp_path):
    data = tmp_path / "big.dat"
    data.write_text("+1 1:1e200 2:1\n-1 2:1\n+1 1:1\n-1 3:1\n")
    start = time.perf_counter()
    result = invoke("learn", "-v", "0", data, tmp_path / "m")
    one_line_error(result, 3, "too large")
    assert time.perf_counter() - start < 20
    assert files_in(tmp_path) == ["big.dat"]


def test_float32_overflow_names_the_line(tmp_path):
    data = tmp_path / "d.dat"
    data.write_text("+1 1:1\n-1 1:2e38 2:1\n+1 2:1e39\n")
    one_line_error(invoke("learn", "--float32", "-v", "0", data, tmp_path / "m"), 1, f"{data}:3:", "single precision")
    assert files_in(tmp_path) == ["d.dat"]


def test_hashed_feature_ids_train_and_an_id_too_large_is_an_error(tmp_path):
    data = tmp_path / "h.dat"
    data.write_text("1 qid:1 5:1 10000000:1 2147483647:0.5\n0 qid:1 7:1 10000000:0.2\n"
                    "1 qid:2 5:0.5 2147483647:1\n0 qid:2 10000000:1\n")
    model = tmp_path / "h.model"
    assert invoke("learn", "-l", "pairs", "-v", "0", data, model).returncode == 0
    assert "n_features 2147483647" in model.read_text()
    scores = invoke("classify", data, model)
    assert scores.returncode == 0 and len(scores.stdout.split()) == 4
    data.write_text("1 1:1 3000000000:1\n")
    one_line_error(invoke("learn", "-v", "0", data, tmp_path / "x"), 1, f"{data}:1:", "largest supported")


def test_corrupt_gzip_is_an_input_error(tmp_path):
    path = tmp_path / "c.dat.gz"
    good = gzip.compress(TRAIN.read_bytes())
    path.write_bytes(good[:200] + bytes(b ^ 0x55 for b in good[200:400]) + good[400:])
    one_line_error(invoke("learn", "-v", "0", path, tmp_path / "m"), 1, str(path))
    assert files_in(tmp_path) == ["c.dat.gz"]


def test_out_of_memory_is_one_line(tmp_path, monkeypatch):
    from svmstruct import data

    def exhausted(*args, **kw):
        raise MemoryError()

    monkeypatch.setattr(data, "read_svmlight", exhausted)
    one_line_error(invoke("learn", "-v", "0", TRAIN, tmp_path / "m"), 1, "out of memory")
    assert files_in(tmp_path) == []


def test_duplicate_docids_in_a_query_are_refused_by_every_writer_and_eval(tmp_path):
    data = tmp_path / "dup.dat"
    data.write_text("1 qid:1 1:1 # docid = a\n0 qid:1 1:2 # docid = b\n0 qid:1 2:1 # docid = a\n")
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", data, model).returncode == 0
    for args in (["classify", "--format", "trec", data, model], ["qrels", data],
                 ["eval", "-m", "map", data, "-"], ["eval", "--write-qrels", tmp_path / "q", "-m", "map", data, "-"]):
        result = invoke(*args, stdin="0.1\n0.2\n0.3\n")
        one_line_error(result, 1, "docid a appears twice in query 1 (lines 1 and 3)")
    assert invoke("eval", "-m", "error", data, "-", stdin="0.1\n0.2\n0.3\n").returncode == 0  # no docid needed
    assert files_in(tmp_path) == ["dup.dat", "m"]


# ---- outputs

def test_dash_means_stdout_for_a_model_and_stdin_for_classify(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    learned = invoke("learn", "-l", "map", "-v", "0", TRAIN, "-")
    assert learned.returncode == 0 and learned.stdout.startswith("svmstruct-model 1\n")
    assert files_in(tmp_path) == []  # no file called '-'
    (tmp_path / "m").write_text(learned.stdout)
    from_file = invoke("classify", TEST, "m")
    from_stdin = invoke("classify", TEST, "-", stdin=learned.stdout)
    assert from_stdin.returncode == 0 and from_stdin.stdout == from_file.stdout


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_full_device_is_an_output_error(tmp_path, unbuffered):
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    env = {"PYTHONUNBUFFERED": unbuffered} if unbuffered else {}
    one_line_error(process("classify", TEST, model, "/dev/full", env=env), 4, "/dev/full", "No space left")
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "svmstruct", "classify", TEST, model], stdout=full,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, **env})
    one_line_error(result, 4, "<stdout>", "No space left")


def big_test_file(path, copies=40):
    """The test part repeated (~34,000 lines, far more than a 64 KiB pipe buffer), qids kept apart."""
    text = TEST.read_text()
    path.write_text("".join(text.replace(" qid:", f" qid:{k}0") for k in range(1, copies + 1)))


def test_large_unbuffered_output_through_a_pipe_is_complete(tmp_path):
    big = tmp_path / "big.dat"
    big_test_file(big)
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    result = process("classify", big, model, env={"PYTHONUNBUFFERED": "1"})
    assert result.returncode == 0
    assert len(result.stdout.splitlines()) == len(big.read_text().splitlines())


def test_outputs_that_are_not_regular_files_are_written_in_place(tmp_path):
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    expected = invoke("classify", TEST, model).stdout
    # a device of our own (/dev/null's numbers), a FIFO and a symlink
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        device = None
    if device is not None:
        assert invoke("classify", TEST, model, device).returncode == 0
        assert stat.S_ISCHR(os.stat(device).st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo).read()))
    reader.start()
    assert invoke("classify", TEST, model, fifo).returncode == 0
    reader.join(10)
    assert received == [expected] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    target, link = tmp_path / "target.txt", tmp_path / "link.txt"
    target.write_text("old\n")
    link.symlink_to(target)
    assert invoke("classify", TEST, model, link).returncode == 0
    assert link.is_symlink() and target.read_text() == expected
    assert not [n for n in files_in(tmp_path) if n.startswith(".svmstruct-")]


def test_a_broken_pipe_exits_141_quietly(tmp_path):
    big = tmp_path / "big.dat"
    big_test_file(big)
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    child = subprocess.Popen([sys.executable, "-m", "svmstruct", "classify", big, model], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    child.stdout.readline()
    child.stdout.close()
    assert child.wait(30) == 141
    assert child.stderr.read() == b""


# ---- signals and non-convergence

def slow_training_set(path):
    """A ranking set whose training at a large C takes several seconds."""
    rng = np.random.default_rng(0)
    lines = []
    for q in range(400):
        for _ in range(40):
            features = " ".join(f"{j + 1}:{v:.5f}" for j, v in enumerate(rng.normal(size=30)))
            lines.append(f"{int(rng.integers(0, 3))} qid:{q + 1} {features}")
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_during_training_leaves_nothing_behind(tmp_path, sig, code, word):
    data = tmp_path / "slow.dat"
    slow_training_set(data)
    # SIGINT at its default disposition in the child: a shell's background job (CI started with `&`) ignores it,
    # and an ignored signal stays ignored across exec
    child = subprocess.Popen([sys.executable, "-m", "svmstruct", "learn", "-l", "ndcg@10", "-c", "10000", "-v", "1",
                              data, tmp_path / "m"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # wait until it is training (the fifth progress line: some seconds before the end), then signal
    seen = child.stderr.readline()
    while not seen.startswith("iter    5") and child.poll() is None:
        seen = child.stderr.readline()
    assert child.poll() is None, "training ended before the signal: the test needs a slower training set"
    child.send_signal(sig)
    rest = child.stderr.read()
    assert child.wait(30) == code, seen + rest
    errors = [line for line in rest.splitlines() if line.startswith("svmstruct: error")]
    assert errors == [f"svmstruct: error: {word}"] and "Traceback" not in rest
    assert files_in(tmp_path) == ["slow.dat"]


def test_stopping_early_warns_even_when_quiet(tmp_path):
    result = invoke("learn", "-l", "map", "-c", "100", "-#", "2", "-v", "0", TRAIN, tmp_path / "m")
    assert result.returncode == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("svmstruct: warning:")]
    assert len(warnings) == 1 and "before convergence" in warnings[0]
    header = dict(line.split(" ", 1) for line in (tmp_path / "m").read_text().splitlines()[1:30] if " " in line)
    assert header["converged"] == "0" and header["status"] == "iteration-limit" and float(header["gap"]) > 0
