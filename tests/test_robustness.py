"""Bad input gets a clear error and loses nothing: every case of the robustness audit. Each checks the
exit code, one line on stderr without a traceback, and that no file (temporary files included) is left
behind. In-process where the process itself is not the point; signals, pipes and devices in a real one."""
import contextlib
import gzip
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from helpers import default_dispositions, files_in, one_line_error, slow_training_set

from conftest import COMMAND, ROOT, invoke, invoke_here
from experiment import CpuHogs

TRAIN = ROOT / "data" / "mq2008-small" / "train.txt"
TEST = ROOT / "data" / "mq2008-small" / "test.txt"
VALI = ROOT / "data" / "mq2008-small" / "vali.txt"
DIV = ROOT / "data" / "div" / "small"






def process(*args, env=None, **kw):
    return subprocess.run([sys.executable, "-m", "svmstruct", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, **kw)


# ---- options: checked before any data is read

@pytest.mark.parametrize("args, fragment", [
    (["-c", "inf"], "-c"), (["-c", "nan"], "-c"), (["-c", "0"], "-c"), (["--b", "nan"], "--b"),
    (["-e", "nan"], "-e"), (["-e", "0"], "epsilon"), (["-#", "0"], "iteration limit"),
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
    one_line_error(invoke("learn", "-v", "0", data, tmp_path / "m"), 1, f"{data}:1:", "learn --float64")
    start = time.perf_counter()
    result = invoke("learn", "--float64", "-v", "0", data, tmp_path / "m")
    one_line_error(result, 3, "too large")
    assert time.perf_counter() - start < 20
    assert files_in(tmp_path) == ["big.dat"]


def test_a_model_trained_in_double_precision_classifies_in_double_precision(tmp_path):
    """learn --float64 records `precision float64`; classify then reads the test file in double (values beyond
    single precision's range score), the default model in single precision, as learn read its data."""
    data = tmp_path / "d.dat"
    data.write_text("1 qid:1 1:1e39 2:1\n0 qid:1 1:2e39 2:3\n1 qid:2 1:0.5 2:0.5\n0 qid:2 1:1 2:2\n")
    double, single = tmp_path / "double.model", tmp_path / "single.model"
    assert invoke("learn", "--float64", "-l", "pairs", "-v", "0", data, double).returncode == 0
    assert "precision float64" in double.read_text()
    scores = invoke("classify", data, double)
    assert scores.returncode == 0 and len(scores.stdout.split()) == 4
    small = tmp_path / "small.dat"
    small.write_text("1 qid:1 1:1 2:1\n0 qid:1 1:2 2:3\n")
    assert invoke("learn", "-l", "pairs", "-v", "0", small, single).returncode == 0
    assert "precision" not in single.read_text()
    one_line_error(invoke("classify", data, single), 1, f"{data}:1:", "single precision")


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
    from svmstruct.io import data

    def exhausted(*args, **kw):
        raise MemoryError()

    monkeypatch.setattr(data, "read_svmlight", exhausted)
    one_line_error(invoke_here("learn", "-v", "0", TRAIN, tmp_path / "m"), 1, "out of memory")
    assert files_in(tmp_path) == []


def test_duplicate_docids_in_a_query_are_refused_by_every_writer_and_eval_falls_back_to_lines(tmp_path):
    """TREC runs and qrels name documents by docid: a docid twice in a query is refused where one is written;
    eval (and --write-qrels beside it) says so once and names the documents by their lines, L<line>."""
    data = tmp_path / "dup.dat"
    data.write_text("1 qid:1 1:1 # docid = a\n0 qid:1 1:2 # docid = b\n0 qid:1 2:1 # docid = a\n")
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", data, model).returncode == 0
    for args in (["classify", "--format", "trec", data, model], ["qrels", data]):
        result = invoke(*args, stdin="0.1\n0.2\n0.3\n")
        one_line_error(result, 1, "docid a appears twice in query 1 (lines 1 and 3)")
    for args in (["eval", "-m", "map", data, "-"], ["eval", "--write-qrels", tmp_path / "q", "-m", "map", data, "-"]):
        result = invoke(*args, stdin="0.1\n0.1\n0.3\n")
        assert result.returncode == 0 and result.stdout == "map\tall\t0.3333\n", result
        assert result.stderr == (f"svmstruct: warning: {data}:3: docid a appears twice in query 1 (lines 1 and 3): "
                                 "not one document per docid (comments of free text?); the documents are named by "
                                 "their lines instead (L<line>, as in a file without comments), ties broken between "
                                 "those names as trec_eval breaks them\n")
    assert (tmp_path / "q").read_text() == "1 0 L1 1\n1 0 L2 0\n1 0 L3 0\n"
    assert invoke("eval", "-m", "error", data, "-", stdin="0.1\n0.2\n0.3\n").returncode == 0  # no docid needed
    assert files_in(tmp_path) == ["dup.dat", "m", "q"]


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


@pytest.mark.slow
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



@pytest.mark.parametrize("busy", [False, True], ids=["idle", "busy"])
@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated"),
                                             (signal.SIGHUP, 129, "hung up")])
@pytest.mark.slow
def test_a_signal_during_training_leaves_nothing_behind(tmp_path, sig, code, word, busy):
    """Ctrl-C, SIGTERM and SIGHUP during training, on an idle machine and beside two CPU hogs (the signal then
    tends to land inside a numba kernel, whose dispatcher wraps the handler's exception in a SystemError)."""
    data = tmp_path / "slow.dat"
    slow_training_set(data)
    with CpuHogs() if busy else contextlib.nullcontext():
        signal_learn(tmp_path, data, sig, code, word)




def signal_learn(tmp_path, data, sig, code, word):
    child = subprocess.Popen([sys.executable, "-m", "svmstruct", "learn", "-l", "ndcg@10", "-c", "10000", "-v", "1",
                              data, tmp_path / "m"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=default_dispositions)
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
    warnings = [line for line in result.stderr.splitlines() if "before convergence" in line]
    assert len(warnings) == 1 and warnings[0].startswith("svmstruct: warning:")
    header = dict(line.split(" ", 1) for line in (tmp_path / "m").read_text().splitlines()[1:30] if " " in line)
    assert header["converged"] == "0" and header["status"] == "iteration-limit" and float(header["gap"]) > 0


def test_an_interruption_wrapped_by_a_numba_dispatcher_is_still_an_interruption(monkeypatch):
    """A signal handler that raises while a numba kernel runs surfaces as SystemError('CPUDispatcher(...)
    returned a result with an exception set') chained to the KeyboardInterrupt/Terminated: main unwraps it."""
    from svmstruct import cli

    for raised, code, word in ((KeyboardInterrupt(), 130, "interrupted"), (cli.Terminated(signal.SIGTERM), 143,
                                                                           "terminated")):
        def run(group, args, raised=raised):
            try:
                raise raised
            except BaseException as e:
                raise SystemError("CPUDispatcher(<function kernel>) returned a result with an exception set") from e

        monkeypatch.setattr(cli, "_run", run)
        result = invoke_here("losses")
        one_line_error(result, code, word)


# ---- no input destroyed, no device deleted

def same_input_cases(tmp_path):
    """(command line, files that must be left intact) where an output is one of the command's inputs."""
    train = tmp_path / "train.dat"
    train.write_bytes(TRAIN.read_bytes())
    model = tmp_path / "m.model"
    assert invoke("learn", "-l", "map", "-v", "0", train, model).returncode == 0
    preds = tmp_path / "p.txt"
    assert invoke("classify", train, model, preds).returncode == 0
    os.link(train, tmp_path / "hard.dat")
    os.symlink(train, tmp_path / "sym.dat")
    return [
        (["classify", train, model, model], [model]),
        (["classify", train, model, train], [train]),
        (["classify", "--format", "trec", train, model, tmp_path / "hard.dat"], [train]),
        (["classify", train, model, tmp_path / "sym.dat"], [train]),
        (["eval", "--write-qrels", preds, train, preds], [preds]),
        (["eval", "--write-qrels", tmp_path / "sym.dat", train, preds], [train]),
        (["learn", "--checkpoint", train, "-v", "0", train, tmp_path / "new.model"], [train]),
        (["learn", "-l", "map", "-c", "1,10", "--validate", tmp_path / "hard.dat", "-v", "0", train, train], [train]),
        (["learn", "-v", "0", train, train], [train]),
        (["learn", "-l", "map", "-c", "1,10", "--validate", model, "-v", "0", train, model], [model]),
        (["learn", "--checkpoint", model, "-v", "0", train, model], [model]),
        (["qrels", train, tmp_path / "hard.dat"], [train]),
        (["div-baseline", train, tmp_path / "sym.dat"], [train]),
    ]


def test_an_output_that_is_an_input_is_refused_before_anything_is_written(tmp_path):
    for args, kept in same_input_cases(tmp_path):
        before = {path: path.read_bytes() for path in kept}
        listing = files_in(tmp_path)
        one_line_error(invoke(*args), 2, "is the same file as", "refusing to overwrite")
        assert {path: path.read_bytes() for path in kept} == before, args
        assert files_in(tmp_path) == listing, args


def test_classify_without_options_refuses_it_too(tmp_path):
    model = tmp_path / "m.model"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    before = model.read_bytes()
    result = process("classify", TEST, model, model)
    one_line_error(result, 2, "same file")
    assert model.read_bytes() == before


@pytest.mark.parametrize("kind", ["device", "fifo", "symlink", "directory"])
def test_a_checkpoint_that_is_not_a_regular_file_is_refused(tmp_path, kind):
    target = tmp_path / "target.dat"
    target.write_bytes(b"precious\n")
    if kind == "device":
        path = "/dev/null"
    elif kind == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
    elif kind == "symlink":
        path = tmp_path / "link"
        os.symlink(target, path)
    else:
        path = tmp_path / "dir"
        path.mkdir()
    result = invoke("learn", "-l", "map", "--checkpoint", path, "-v", "0", TRAIN, tmp_path / "m")
    one_line_error(result, 2, "--checkpoint", "regular file")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert target.read_bytes() == b"precious\n" and not (tmp_path / "m").exists()
    if kind in ("fifo", "symlink"):
        assert stat.S_ISFIFO(os.lstat(path).st_mode) if kind == "fifo" else os.path.islink(path)


def a_checkpoint(tmp_path, train):
    """The checkpoint of a map run stopped at its -# limit (and the command line that resumes it)."""
    ckpt = tmp_path / "run.ckpt"
    args = ["learn", "-l", "map", "-c", "100", "-#", "3", "--checkpoint", ckpt, "-v", "0", train, tmp_path / "m"]
    assert invoke(*args).returncode == 0 and ckpt.exists()
    (tmp_path / "m").unlink()  # the model of the stopped run
    return ckpt, [a for a in args if a not in ("-#", "3")] + ["--resume"]


def rewrite_checkpoint(path, change):
    import json

    with np.load(path, allow_pickle=False) as saved:
        state = {key: saved[key] for key in saved.files}
    change(state, json)
    with open(path, "wb") as f:
        np.savez(f, **state)


@pytest.mark.parametrize("damage, fragment", [
    (lambda s, json: s.pop("w_best"), "w_best is missing"),
    (lambda s, json: s.update(A=s["A"][:, :-1]), "shape"),
    (lambda s, json: s.update(alpha=s["alpha"][:-1]), "shape"),
    (lambda s, json: s.update(w_t=s["w_t"] * np.nan), "not finite"),
    (lambda s, json: s.update(primal=np.array(np.inf)), "not finite"),
    (lambda s, json: s.update(iteration=np.array(-4)), "not a count"),
    (lambda s, json: s.update(signature=np.asarray(json.dumps([1, 2]))), "not a record"),
    (lambda s, json: s.update(signature=np.asarray("{")), "not a checkpoint"),
    (lambda s, json: s.update(extra=np.zeros(3)), "unknown field"),
])
def test_a_damaged_checkpoint_is_refused(tmp_path, damage, fragment):
    ckpt, resume = a_checkpoint(tmp_path, TRAIN)
    rewrite_checkpoint(ckpt, damage)
    one_line_error(invoke(*resume), 1, fragment)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("change", ["labels permuted", "values halved"])
def test_resuming_on_changed_training_data_is_refused(tmp_path, change):
    train = tmp_path / "train.dat"
    train.write_bytes(TRAIN.read_bytes())
    ckpt, resume = a_checkpoint(tmp_path, train)
    lines = train.read_text().splitlines()
    if change == "labels permuted":  # inside each query: the same queries, sizes and label counts
        queries: dict = {}
        for number, line in enumerate(lines):
            queries.setdefault(line.split()[1], []).append(number)
        for numbers in queries.values():
            labels = [lines[k].split(" ", 1)[0] for k in numbers]
            for k, label in zip(numbers, labels[1:] + labels[:1]):
                lines[k] = f"{label} {lines[k].split(' ', 1)[1]}"
    else:
        def halved(token):
            index, colon, value = token.partition(":")
            return token if not colon or index == "qid" else f"{index}:{float(value) / 2!r}"

        lines = [" ".join(halved(t) for t in line.split("#")[0].split()) for line in lines]
    train.write_text("\n".join(lines) + "\n")
    one_line_error(invoke(*resume), 1, "other training data")
    assert not (tmp_path / "m").exists() and ckpt.exists()


# ---- cluster addresses

@pytest.mark.parametrize("address, code, fragment", [
    ("bogus", 2, "tcp://HOST:PORT"), ("", 2, "tcp://HOST:PORT"), ("tcp://127.0.0.1", 2, "tcp://HOST:PORT"),
    ("127.0.0.1:70000", 2, "tcp://HOST:PORT"), ("tls://127.0.0.1:8786", 2, "TLS"),
    ("ucx://127.0.0.1:8786", 2, "only tcp"),
    ("tcp://127.0.0.1:1", 5, "cannot reach"), ("tcp://no-such-host.invalid:8786", 5, "unknown host"),
])
def test_a_bad_scheduler_address_is_one_line_at_once(tmp_path, address, code, fragment):
    pytest.importorskip("distributed")
    start = time.monotonic()
    result = invoke("learn", "-l", "pairs", "--scheduler", address, "-v", "0", TRAIN, tmp_path / "m")
    one_line_error(result, code, fragment)
    assert time.monotonic() - start < 40 and files_in(tmp_path) == []


# ---- arithmetic limits of labels and options

@pytest.mark.parametrize("label", ["2000", "1e308"])
@pytest.mark.parametrize("loss", ["ndcg@10", "dcg@10", "mwta"])
def test_a_label_whose_gain_overflows_is_refused_by_learn(tmp_path, loss, label):
    lines = TRAIN.read_text().splitlines()
    lines[6] = label + " " + lines[6].split(" ", 1)[1]
    data = tmp_path / "big.dat"
    data.write_text("\n".join(lines) + "\n")
    start = time.monotonic()
    one_line_error(invoke("learn", "-l", loss, "-v", "0", data, tmp_path / "m"), 1, "big.dat:7", "overflows")
    assert time.monotonic() - start < 30


@pytest.mark.parametrize("args, fragment", [
    (["-l", "ndcg@10", "--position-weights", "pow:nan"], "--position-weights"),
    (["-l", "ndcg@10", "--position-weights", "pow:inf"], "--position-weights"),
    (["-l", "ndcg@10", "--position-weights", "pow:1e308"], "--position-weights"),
    (["-l", "eru", "--eru-neutral", "-1e308"], "--eru-neutral"), (["-l", "eru", "--eru-alpha", "1e308"], "--eru-alpha"),
    (["-l", "prec@k", "-k", "99999999999999999999"], "-k"), (["-l", "prec@k", "--p", "1e308"], "--p"),
    (["--b", "1e308"], "--b"), (["-l", "f1", "--beta", "1e308"], "--beta"),
    (["-c", "1_0"], "-c"), (["-c", "\u0661"], "-c"), (["-c", "\uff11"], "-c"), (["-e", "1_0"], "-e"),
    (["-#", "1_0"], "-#"), (["--threads", "1_0"], "--threads"),
    (["-l", "map", "--rel-threshold", "inf"], "--rel-threshold"),
])
def test_numbers_beyond_the_arithmetic_or_the_syntax_are_usage_errors(tmp_path, args, fragment):
    one_line_error(invoke("learn", *args, tmp_path / "does-not-exist.dat", tmp_path / "m"), 2, fragment)


def test_a_subnormal_column_is_left_unscaled_by_normalize_global(tmp_path):
    data = tmp_path / "sub.dat"
    data.write_text("1 qid:1 1:1e-310 2:1\n0 qid:1 1:0 2:0.5\n2 qid:2 1:2e-310 2:0.25\n0 qid:2 2:1\n")
    result = process("learn", "-l", "pairs", "--normalize", "global", "-v", "0", data, tmp_path / "m")
    assert result.returncode == 0 and "Warning" not in result.stderr and "Traceback" not in result.stderr


def test_an_epsilon_below_round_off_is_not_called_converged(tmp_path):
    result = invoke("learn", "-l", "pairs", "-e", "5e-324", "-v", "0", TRAIN, tmp_path / "m")
    assert result.returncode == 0 and "precision limit" in result.stderr
    header = dict(line.split(" ", 1) for line in (tmp_path / "m").read_text().splitlines()[1:30] if " " in line)
    assert header["converged"] == "0" and header["status"] == "precision-limit"


def test_files_with_and_without_qids_are_not_read_as_one(tmp_path):
    plain = tmp_path / "plain.dat"
    plain.write_text("1 1:0.5\n-1 2:0.5\n")
    one_line_error(invoke("learn", "-v", "0", TRAIN, plain, tmp_path / "m"), 1, "qid", "plain.dat")


# ---- standard streams

@pytest.mark.parametrize("args, redirect, code, fragment", [
    (["classify", TEST, "MODEL"], {"stdout": "closed"}, 4, "standard output is closed"),
    (["classify", "--format", "trec", TEST, "MODEL"], {"stdout": "closed"}, 4, "standard output is closed"),
    (["eval", TEST, "PREDS"], {"stdout": "closed"}, 4, "standard output is closed"),
    (["learn", "-v", "0", TRAIN, "-"], {"stdout": "closed"}, 4, "standard output is closed"),
    (["losses"], {"stdout": "closed"}, 4, "standard output is closed"),
    (["classify", "-", "MODEL"], {"stdin": "closed"}, 1, "standard input is closed"),
    (["learn", "-v", "0", "-", "OUT"], {"stdin": "closed"}, 1, "standard input is closed"),
    (["--help"], {"stdout": "/dev/full"}, 4, "No space left"),
    (["--version"], {"stdout": "/dev/full"}, 4, "No space left"),
    (["losses"], {"stdout": "/dev/full"}, 4, "No space left"),
    (["learn", "--help"], {"stdout": "/dev/full"}, 4, "No space left"),
])
@pytest.mark.slow
def test_closed_or_full_standard_streams_are_one_line(tmp_path, args, redirect, code, fragment):
    if "/dev/full" in redirect.values() and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    model, preds = tmp_path / "m", tmp_path / "p"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    assert invoke("classify", TEST, model, preds).returncode == 0
    args = [{"MODEL": model, "PREDS": preds, "OUT": tmp_path / "out"}.get(a, a) for a in args]
    kw = {}
    if redirect.get("stdout") == "/dev/full":
        kw["stdout"] = open("/dev/full", "w")
    streams = {"stdin": 0, "stdout": 1}
    closed = [streams[name] for name, how in redirect.items() if how == "closed"]

    def close_them():
        for fd in closed:
            os.close(fd)

    run = subprocess.run([sys.executable, "-m", "svmstruct", *map(str, args)], stderr=subprocess.PIPE, text=True,
                         preexec_fn=close_them, **({"stdout": subprocess.DEVNULL} if not kw else kw))
    one_line_error(run, code, fragment)
    assert not (tmp_path / "out").exists()


def test_a_full_stderr_does_not_cost_the_model(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        run = subprocess.run([sys.executable, "-m", "svmstruct", "learn", "-l", "map", "-v", "1", TRAIN,
                              tmp_path / "m"], stderr=full, stdout=subprocess.DEVNULL)
    assert run.returncode == 0 and (tmp_path / "m").read_text().startswith("svmstruct-model")


# ---- eval reads predictions as strictly as the data reader reads data

@pytest.mark.parametrize("make, fragment", [
    (lambda p, t: p.read_text().replace("\n", " Q0 d1 1 0.5 run\n", 1), "TREC run"),
    (lambda p, t: "".join(f"1 0 d{i} 1\n" for i in range(len(p.read_text().splitlines()))), "qrels"),
    (lambda p, t: p.read_text().replace(p.read_text().splitlines()[2], "1_0"), "not a number: '1_0'"),
    (lambda p, t: p.read_text().replace(p.read_text().splitlines()[2], "\u0661.5"), "not a number"),
    (lambda p, t: p.read_text().replace(p.read_text().splitlines()[2], "\uff11"), "not a number"),
    (lambda p, t: p.read_text().replace(p.read_text().splitlines()[2], "1e999"), "not finite"),
    (lambda p, t: p.read_text().replace(p.read_text().splitlines()[2], "0.5 0.7"), "2 fields"),
])
def test_eval_refuses_what_is_not_one_score_a_line(tmp_path, make, fragment):
    model, preds = tmp_path / "m", tmp_path / "p"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    assert invoke("classify", TEST, model, preds).returncode == 0
    bad = tmp_path / "bad.txt"
    bad.write_text(make(preds, TEST))
    one_line_error(invoke("eval", TEST, bad), 1, "bad.txt:", fragment)


@pytest.mark.parametrize("args", [["--rel-threshold", "nan"], ["--rel-threshold", "inf"], ["--alpha", "nan"],
                                  ["--alpha", "-1"], ["--alpha", "2"]])
def test_eval_options_out_of_range_are_usage_errors(args):
    one_line_error(invoke("eval", *args, TEST, TEST), 2, args[0])


def test_eval_refuses_labels_whose_gain_overflows(tmp_path):
    lines = TEST.read_text().splitlines()
    lines[3] = "2000 " + lines[3].split(" ", 1)[1]
    data = tmp_path / "t.dat"
    data.write_text("\n".join(lines) + "\n")
    preds = tmp_path / "p"
    preds.write_text("".join(f"{i}\n" for i in range(len(lines))))
    one_line_error(invoke("eval", "-m", "ndcg@10", data, preds), 1, "t.dat:4", "overflows")
    assert invoke("eval", "-m", "map", data, preds).returncode == 0  # MAP does not compute 2^label


@pytest.mark.parametrize("tag", ["my run", "", "a\nb", "tab\there"])
def test_a_trec_tag_that_is_not_one_word_is_refused(tmp_path, tag):
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    one_line_error(invoke("classify", "--format", "trec", "--tag", tag, TEST, model), 2, "--tag")
    one_line_error(invoke("div-baseline", "--format", "trec", "--tag", tag, TEST), 2, "--tag")


def test_div_baseline_seed_must_not_be_negative():
    one_line_error(invoke("div-baseline", "--seed", "-1", TEST), 2, "--seed")


# ---- outputs, models and inputs that must be refused or kept (one test per case of the audit)

def test_checkpoint_never_replaces_a_file_that_is_not_one_of_ours(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("notes\n")
    array = tmp_path / "x.npy"
    np.save(array, np.arange(3))
    for path in (notes, array):
        before = path.read_bytes()
        for limit in ([], ["-#", "2"]):
            one_line_error(invoke("learn", "-l", "map", "-c", "10", "-v", "0", *limit, "--checkpoint", path, TRAIN,
                                  tmp_path / "m"), 2, "is not a checkpoint", "not replaced")
            assert path.read_bytes() == before
    one_line_error(invoke("learn", "-l", "map", "-c", "10", "-v", "0", "--checkpoint", array, "--resume", TRAIN,
                          tmp_path / "m"), 1, "x.npy", "not a checkpoint")
    assert files_in(tmp_path) == ["notes.txt", "x.npy"]
    ours = tmp_path / "run.ckpt"  # a checkpoint of ours is replaced by the next run's
    assert invoke("learn", "-l", "map", "-c", "10", "-v", "0", "-#", "2", "--checkpoint", ours, TRAIN,
                  tmp_path / "m").returncode == 0
    assert invoke("learn", "-l", "map", "-c", "10", "-v", "0", "-#", "3", "--checkpoint", ours, TRAIN,
                  tmp_path / "m").returncode == 0


@pytest.mark.parametrize("through", [True, False], ids=["worker", "own"])
def test_an_output_that_is_the_redirected_stdin_is_refused(tmp_path, through):
    """`learn - t < t` and `classify - m t < t`: the output is the file the standard input reads."""
    data = tmp_path / "t"
    data.write_bytes(TRAIN.read_bytes())
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    env = {**os.environ, "SVMSTRUCT_RESIDENT": "1" if through else "0"}
    for args in (["learn", "-v", "0", "-", data], ["classify", "-", model, data]):
        with open(data, "rb") as stdin:
            run = subprocess.run([*COMMAND, *map(str, args)], stdin=stdin, capture_output=True, text=True, env=env)
        one_line_error(run, 2, "is the same file as", "'-'")
        assert data.read_bytes() == TRAIN.read_bytes()


def test_relearning_keeps_the_models_mode_and_owner(tmp_path):
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    model.chmod(0o600)
    assert invoke("learn", "-l", "pairs", "-v", "0", TRAIN, model).returncode == 0
    assert stat.S_IMODE(model.stat().st_mode) == 0o600 and "loss pairs" in model.read_text()
    if os.geteuid() == 0:  # another user's model keeps its owner (as cp keeps it)
        os.chown(model, 54321, 54321)
        assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
        assert (model.stat().st_uid, model.stat().st_gid) == (54321, 54321) and "loss map" in model.read_text()


def test_an_output_named_as_a_directory_that_is_none_is_refused(tmp_path):
    one_line_error(invoke("learn", "-v", "0", TRAIN, f"{tmp_path}/newm/"), 4, "Not a directory")
    assert files_in(tmp_path) == []


def _ndcg_in_exact_arithmetic(labels, scores, k=10):
    """NDCG@k with gain 2^label - 1 from Python integers (exact), scaled into floats only for the division by the
    discounts: the measure from its definition, for labels of any size."""
    import math

    order = sorted(range(len(labels)), key=lambda i: -scores[i])
    top = max(labels)
    gain = [((1 << int(label)) - 1) / (1 << max(top - 60, 0)) for label in labels]
    dcg = sum(gain[i] / math.log2(r + 2) for r, i in enumerate(order[:k]))
    ideal = sum(g / math.log2(r + 2) for r, g in enumerate(sorted(gain, reverse=True)[:k]))
    return dcg / ideal


def test_ndcg_at_k_is_right_for_every_label_up_to_1023(tmp_path):
    """Labels 1023, 1023, 1023, 0 ranked in reverse: 0.7328 (the sum of the gains overflowed: 0.0000 was printed);
    MQ2008's test file with three documents of a query relabelled 1023: that query's value as computed exactly."""
    data, preds = tmp_path / "t.dat", tmp_path / "p"
    data.write_text("1023 qid:1 1:1\n1023 qid:1 1:2\n1023 qid:1 1:3\n0 qid:1 1:4\n")
    preds.write_text("1\n2\n3\n4\n")
    run = invoke("eval", "-m", "ndcg@10", data, preds)
    assert run.returncode == 0 and run.stdout == "ndcg@10\tall\t0.7328\n", run.stderr
    lines = TEST.read_text().splitlines()
    first = lines[0].split()[1]
    query = [i for i, line in enumerate(lines) if line.split()[1] == first]
    for i in query[:3]:
        lines[i] = "1023 " + lines[i].split(" ", 1)[1]
    data.write_text("\n".join(lines) + "\n")
    rng = np.random.default_rng(2)
    scores = rng.normal(size=len(lines))
    preds.write_text("".join(f"{s:.8f}\n" for s in scores))
    run = invoke("eval", "-q", "-m", "ndcg@10", data, preds)
    value = float(next(line.split("\t")[2] for line in run.stdout.splitlines() if line.split("\t")[1] == first[4:]))
    labels = [int(float(lines[i].split()[0])) for i in query]
    assert value == pytest.approx(_ndcg_in_exact_arithmetic(labels, [float(f"{scores[i]:.8f}") for i in query]),
                                  abs=1e-4)
    assert invoke("learn", "-l", "ndcg@10", "-c", "10", "-v", "0", data, tmp_path / "m").returncode == 0
    small = tmp_path / "small.dat"  # the same file with label 2 where it has 1023: the same queries are trained on
    small.write_text(data.read_text().replace("1023 qid", "2 qid"))
    assert invoke("learn", "-l", "ndcg@10", "-c", "10", "-v", "0", small, tmp_path / "m2").returncode == 0
    skipped = [line for line in (tmp_path / "m").read_text().splitlines() if line.startswith("skipped_examples")]
    assert skipped == [line for line in (tmp_path / "m2").read_text().splitlines() if line.startswith("skipped_exa")]


def test_eval_of_a_predictions_file_as_the_test_file_is_an_error(tmp_path):
    model, preds = tmp_path / "m", tmp_path / "p"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    assert invoke("classify", TEST, model, preds).returncode == 0
    one_line_error(invoke("eval", preds, preds), 1, "p:", "predictions file, not labelled data")


def test_an_svm_light_export_of_hashed_feature_ids_is_read_back(tmp_path):
    data = tmp_path / "hashed.dat"
    data.write_text("1 qid:1 5:1 10000000:1 2147483647:0.5\n0 qid:1 7:1 10000000:0.2\n"
                    "1 qid:2 5:0.5 2147483647:1\n0 qid:2 10000000:1\n")
    for loss in ("errorrate", "pairs"):  # with svm_perf's bias feature, and without
        ours, exported = tmp_path / f"{loss}.model", tmp_path / f"{loss}.svl"
        assert invoke("learn", "-l", loss, "-v", "0", data, ours).returncode == 0
        assert invoke("learn", "-l", loss, "-v", "0", "--format", "svmlight", data, exported).returncode == 0
        a, b = invoke("classify", data, ours), invoke("classify", data, exported)
        assert a.returncode == b.returncode == 0, b.stderr
        assert np.allclose([float(x) for x in a.stdout.split()], [float(x) for x in b.stdout.split()], atol=1e-6)


def test_a_damaged_model_is_refused(tmp_path):
    """Cut mid-number (ours, svm_light's, a kernel model), without its threshold line, or with weights whose
    scores overflow: one error line, nothing written."""
    ours, light, kernel = tmp_path / "m", tmp_path / "m.svl", tmp_path / "k"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, ours).returncode == 0
    assert invoke("learn", "-l", "map", "-v", "0", "--format", "svmlight", TRAIN, light).returncode == 0
    assert invoke("learn", "-l", "map", "-t", "2", "-g", "0.1", "--k", "50", "-v", "0", TRAIN, kernel).returncode == 0
    for model in (ours, light, kernel):
        cut = tmp_path / f"{model.name}.cut"
        cut.write_bytes(model.read_bytes()[:-3])
        one_line_error(invoke("classify", TEST, cut, tmp_path / "out"), 1, "cut short")
    no_threshold = tmp_path / "nothr"
    no_threshold.write_text("".join(line for line in ours.read_text().splitlines(True) if not line.startswith("thr")))
    one_line_error(invoke("classify", TEST, no_threshold, tmp_path / "out"), 1, "threshold")
    huge = tmp_path / "huge"
    huge.write_text("".join(line.split()[0] + " 1e308\n" if line[0].isdigit() else line
                            for line in ours.read_text().splitlines(True)))
    one_line_error(invoke("classify", TEST, huge, tmp_path / "out"), 3, "not finite")
    assert not (tmp_path / "out").exists()


def test_what_raised_tracebacks_is_one_line(tmp_path):
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    for through in ("1", "0"):
        closed = subprocess.run(["bash", "-c", f"{' '.join(COMMAND)} classify {TEST} - <&-"], capture_output=True,
                                text=True, env={**os.environ, "SVMSTRUCT_RESIDENT": through})
        one_line_error(closed, 1, "standard input is closed")
    for name in ("ndcg@99999999999999999999", "P_9223372036854775808", "p@99999999999999999999"):
        one_line_error(invoke("eval", "-m", name, TEST, TEST), 2, "larger than 2147483647")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
def test_an_unreadable_input_is_a_read_error(tmp_path):
    data = tmp_path / "data"
    data.write_bytes(TEST.read_bytes())
    os.chown(data, 54321, 54321)
    data.chmod(0o600)
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    capless = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *COMMAND]
    for args in (["learn", "-v", "0", data, tmp_path / "m2"], ["classify", data, model], ["eval", data, TEST]):
        run = subprocess.run([*capless, *map(str, args)], capture_output=True, text=True)
        one_line_error(run, 1, "cannot open", "Permission denied")


def test_messages_show_bytes_as_escapes_and_no_numpy_warnings(tmp_path):
    escapes = tmp_path / "esc.dat"
    escapes.write_bytes(b"1 qid:1 1:\x1b[31mred\x07\n")
    binary = tmp_path / "bin.dat"
    binary.write_bytes(b"1 qid:1 1:\xff\xfe\n")
    one_line_error(invoke("learn", "-v", "0", escapes, tmp_path / "m"), 1, "'\\x1b[31mred\\x07'")
    one_line_error(invoke("learn", "-v", "0", binary, tmp_path / "m"), 1, "'\\xff\\xfe'")
    light = tmp_path / "overflow.svl"
    light.write_text("SVM-light Version V6.20\n0 # kernel type\n3 # -d\n1 # -g\n1 # -s\n1 # -r\nempty# -u\n"
                     "5 # highest feature index\n2 # training documents\n2 # number of support vectors plus 1\n"
                     "0 # threshold b\n1e300 1:1e300 #\n")
    run = invoke("classify", TEST, light)
    one_line_error(run, 1, "single precision")
    assert "Warning" not in run.stderr


@pytest.mark.parametrize("option", [["--df-thresholds", "0,nan"], ["--df-thresholds", "0,inf"],
                                    ["--df-thresholds", "2"], ["--levels", "tf>=nan"]])
def test_div_options_must_be_finite(option, tmp_path):
    one_line_error(invoke("learn", "-l", "div", *option, "--subtopics", f"{DIV}.qrels", f"{DIV}.svm",
                          tmp_path / "m"), 2, option[0])


def test_kernel_overflow_and_a_small_training_set_say_what_they_are(tmp_path):
    small = tmp_path / "small.dat"
    small.write_text("".join(TRAIN.read_text().splitlines(True)[:300]))
    one_line_error(invoke("learn", "-l", "map", "-t", "1", "-d", "100000", "-s", "10", "-v", "0", small,
                          tmp_path / "m"), 1, "overflow", "-d")
    run = invoke("learn", "-l", "map", "-t", "2", "-g", "0.1", "-v", "1", small, tmp_path / "m")  # default --k 500
    assert run.returncode == 0 and "the basis is taken from all the training documents" in run.stderr, run.stderr
    one_line_error(invoke("learn", "-l", "map", "-t", "2", "--k", "400", "-v", "0", small, tmp_path / "m2"), 1,
                   "--k 400 is larger than the training set")


# ---- defaults that cannot mislead

def test_qid_data_without_a_loss_says_which_loss_it_trains(tmp_path):
    run = invoke("learn", "-v", "0", TRAIN, tmp_path / "m")
    assert run.returncode == 0 and "warning: the training data has queries (qid) and no -l was given: training " \
        "errorrate" in run.stderr
    assert "no -l was given" not in invoke("learn", "-l", "errorrate", "-v", "0", TRAIN, tmp_path / "m").stderr
    plain = tmp_path / "plain.dat"
    plain.write_text("".join(line.replace(line.split()[1] + " ", "", 1) for line in TRAIN.read_text().splitlines(True)))
    assert "no -l was given" not in invoke("learn", "-v", "0", plain, tmp_path / "m").stderr


def test_a_binary_loss_on_labels_of_one_class_is_an_error(tmp_path):
    """Labels 1..20 (a multi-class set) are all above the threshold 0: F1 would be 'learned' by calling every
    document positive. The error says how to split them."""
    data = tmp_path / "classes.dat"
    rng = np.random.default_rng(1)
    data.write_text("".join(f"{rng.integers(1, 21)} " + " ".join(f"{j}:{rng.random():.3f}" for j in range(1, 6)) + "\n"
                            for _ in range(200)))
    one_line_error(invoke("learn", "-l", "f1", "-v", "0", data, tmp_path / "m"), 1, "every document is positive",
                   "labels 1 to 20", "--rel-threshold")
    assert invoke("learn", "-l", "f1", "--rel-threshold", "10", "-v", "0", data, tmp_path / "m").returncode == 0


def test_skipped_queries_are_reported_on_stderr(tmp_path):
    run = invoke("learn", "-l", "map", "-v", "0", TRAIN, tmp_path / "m")
    assert run.returncode == 0 and "warning: 22 of 60 queries left out of training" in run.stderr


@pytest.mark.parametrize("loss", ["pairs", "combo:pairs,map"])
def test_skipped_queries_are_counted_once_where_n_counts_every_query(tmp_path, loss):
    """svm_rank divides C by every query, the left-out ones included (n = 60 here): the warning still says
    how many of the file's queries were left out, not n + skipped."""
    labels: dict = {}
    for line in TRAIN.read_text().splitlines():
        labels.setdefault(line.split()[1], set()).add(line.split()[0])
    one_label = sum(len(grades) == 1 for grades in labels.values())
    left_out = min(22, one_label) if loss.startswith("combo") else one_label  # combo: the fewest its losses skip
    run = invoke("learn", "-l", loss, "-v", "0", TRAIN, tmp_path / "m")
    assert run.returncode == 0 and len(labels) == 60 and 0 < one_label
    assert f"warning: {left_out} of 60 queries left out of training" in run.stderr
