"""What a file or a path given to a command may make it do: a model file never runs code, an output never follows
another user's planted link, /dev/stdout is the caller's descriptor, a checkpoint costs no more memory than it
holds, a model's options must fit its weights, a read-only installation still runs, and nothing half-written
survives even SIGKILL."""
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import one_line_error

from conftest import COMMAND, ROOT, invoke

SMALL = ROOT / "data" / "mq2008-small"
TRAIN, TEST = SMALL / "train.txt", SMALL / "test.txt"
OTHER_UID = 54321


def _multiclass_model(tmp_path: Path) -> tuple:
    """(a multiclass model, its training file): 3 classes, 4 features."""
    rng = np.random.default_rng(3)
    lines = [f"{c} " + " ".join(f"{j}:{rng.normal() + (c == j):.4f}" for j in range(1, 5))
             for c in rng.integers(1, 4, 60)]
    data = tmp_path / "mc.svm"
    data.write_text("\n".join(lines) + "\n")
    model = tmp_path / "mc.model"
    assert invoke("learn", "--problem", "multiclass", "-c", "10", "-v", "0", data, model).returncode == 0
    return model, data


def _with_loss(model: Path, loss: str, path: Path) -> Path:
    path.write_text("".join(f"loss {loss}\n" if line.startswith("loss ") else line
                            for line in model.read_text().splitlines(True)))
    return path


# ---- a model file never imports what it names

def test_a_model_file_never_imports_a_module_it_names(tmp_path):
    model, data = _multiclass_model(tmp_path)
    (tmp_path / "evil.py").write_text("import os\nos.system('id > pwned.txt')\nclass X:\n    pass\n")
    env = {"PYTHONPATH": str(tmp_path)}
    for loss in ("evil:X", "this:X", "venv.__main__:X"):
        bad = _with_loss(model, loss, tmp_path / f"{loss.split(':')[0]}.model")
        for command in (COMMAND, [sys.executable, "-m", "svmstruct"]):
            run = subprocess.run([*command, "classify", data, bad], capture_output=True, text=True, cwd=tmp_path,
                                 env={**os.environ, **env})
            one_line_error(run, 1, f"problem {loss}", f"classify --problem {loss}")
            assert run.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.model", "evil.py", "mc.model", "mc.svm", "this.model",
                                                          "venv.__main__.model"]
    one_line_error(invoke("classify", data, _with_loss(model, ".x:Y", tmp_path / "rel.model")), 1, "not MODULE:CLASS")
    # named on the command line, the module is the user's to run; it must be the model's problem
    one_line_error(invoke("classify", "--problem", "evil:X", data, model, env=env), 2, "is of problem")
    assert not (tmp_path / "pwned.txt").exists()
    one_line_error(invoke("classify", "--problem", "multiclass", TEST, TRAIN.with_name("nothing")), 1, "nothing")
    assert invoke("classify", "--problem", "multiclass", data, model).returncode == 0


def test_classify_problem_names_a_problem_of_yours(tmp_path):
    """A problem of the user's (tests/multilabel_problem.py): its model classifies only when --problem names it."""
    from helpers import SPEC, examples, write

    train = write(tmp_path / "train", examples(np.random.default_rng(6), 20))
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "tests"), os.environ.get("PYTHONPATH")) if p)}
    assert invoke("learn", "--problem", SPEC, "-c", "10", "-v", "0", train, tmp_path / "m", env=env).returncode == 0
    one_line_error(invoke("classify", train, tmp_path / "m", env=env), 1, f"classify --problem {SPEC}")
    named = invoke("classify", "--problem", SPEC, train, tmp_path / "m", env=env)
    assert named.returncode == 0 and len(named.stdout.splitlines()) == 20
    one_line_error(invoke("classify", "--problem", "multiclass", TEST, tmp_path / "m", env=env), 2, "is of problem")
    model = tmp_path / "rank"
    assert invoke("learn", "-l", "pairs", "-v", "0", TRAIN, model).returncode == 0
    one_line_error(invoke("classify", "--problem", SPEC, TEST, model, env=env), 2,
                   "applies to a model of a structured problem")


def test_a_problems_options_must_fit_its_weights(tmp_path):
    model, data = _multiclass_model(tmp_path)
    text = model.read_text()
    for old, new in (("option.features 4", "option.features 3"), ("option.classes 3", "option.classes 2"),
                     ("option.classes 3", "option.classes 2147483647"),
                     ("option.features 4", "option.features 2147483647")):
        edited = tmp_path / "edited.model"
        edited.write_text(text.replace(old, new))
        one_line_error(invoke("classify", data, edited), 1, "edited.model", "options do not fit the weights")


STRUCT = ROOT / "data" / "struct"


@pytest.fixture(scope="module")
def originals_models(tmp_path_factory) -> dict:
    """Models in svm_multiclass's and svm_hmm's formats (written by learn --format), and the data they classify."""
    folder = tmp_path_factory.mktemp("originals")
    made = {}
    for kind, data, extra in (("multiclass", "digits", ["-c", "100"]), ("hmm", "letters", ["-c", "10", "--t", "2"])):
        train = STRUCT / f"{data}.train.{'svm' if kind == 'multiclass' else 'hmm'}"
        model = folder / f"{kind}.model"
        run = invoke("learn", "--problem", kind, *extra, "--format", f"svm_{kind}", "-v", "0", train, model)
        assert run.returncode == 0, run.stderr
        made[kind] = (model, train.with_name(train.name.replace("train", "test")))
    return made


def _edited(model: Path, line: int, text: str, path: Path) -> Path:
    lines = model.read_text().split("\n")
    lines[line - 1] = text
    path.write_text("\n".join(lines))
    return path


@pytest.mark.parametrize("kind, line, text, fragment", [
    ("multiclass", 2, "9 # number of classes", "not the layout's 577"),
    ("multiclass", 3, "63 # number of base features", "not the layout's 631"),
    ("multiclass", 2, "2147483647 # number of classes", "not the layout's"),
    ("hmm", 10, "25 # number of classes", "not the layout's"),
    ("hmm", 10, "200 # number of classes", "not the layout's"),
    ("hmm", 11, "3 # HMM order of transitions", "not the layout's"),
])
def test_an_edited_header_of_the_originals_formats_is_refused(tmp_path, originals_models, kind, line, text, fragment):
    """svm_multiclass with classes 10 -> 9 gave 712 of 797 of the true model's classes, exit 0; svm_hmm with 200 tags
    and --t 3 built its map by a Python loop over K^4 for an hour before anything was checked."""
    model, test = originals_models[kind]
    edited = _edited(model, line, text, tmp_path / "edited.model")
    run, peak = _peak_kilobytes(["classify", test, edited, tmp_path / "out"])
    one_line_error(run, 1, f"edited.model:{8 if kind == 'hmm' else 11}:", fragment)
    assert peak < 400_000 and not (tmp_path / "out").exists()


def test_a_consistent_header_far_larger_than_its_weights_is_refused_before_it_costs_memory(tmp_path,
                                                                                          originals_models):
    """classes = features = 46340 with the highest index their layout's (2^31 - 1 weights, 16 GB): refused, the
    peak memory that of any classify."""
    model, test = originals_models["multiclass"]
    edited = _edited(model, 2, "46340 # number of classes", tmp_path / "a.model")
    edited = _edited(edited, 3, "46340 # number of base features", edited)
    edited = _edited(edited, 11, f"{46340 * 46340 + 1} # highest feature index ", edited)
    run, peak = _peak_kilobytes(["classify", test, edited])
    one_line_error(run, 1, "a.model:11:", "layout has 2147395600 weights", "refusing to allocate 16.0 GB")
    assert peak < 400_000


def test_a_problem_model_naming_a_short_or_unknown_loss(tmp_path):
    """`loss multiclass` is svmstruct's multiclass problem (it was scored as a linear model: numbers, not classes);
    an unknown name whose output is not scores is refused at its line; a loss's model is still scored."""
    model, data = _multiclass_model(tmp_path)
    expected = invoke("classify", data, model).stdout
    assert invoke("classify", data, _with_loss(model, "multiclass", tmp_path / "short.model")).stdout == expected
    one_line_error(invoke("classify", data, _with_loss(model, "nonsense", tmp_path / "u.model")), 1, "u.model:2:",
                   "loss 'nonsense'")
    ranker = tmp_path / "rank"
    assert invoke("learn", "-l", "pairs", "-v", "0", TRAIN, ranker).returncode == 0
    renamed = _with_loss(ranker, "someone-elses-loss", tmp_path / "r.model")  # output scores: w.x - b, as before
    assert invoke("classify", TEST, renamed).stdout == invoke("classify", TEST, ranker).stdout


def test_a_problem_models_bad_option_is_named_at_its_line(tmp_path):
    model, data = _multiclass_model(tmp_path)
    lines = model.read_text().splitlines(True)
    at = next(i for i, line in enumerate(lines) if line.startswith("option.rescaling"))
    lines[at] = "option.rescaling 5\n"
    edited = tmp_path / "o.model"
    edited.write_text("".join(lines))
    one_line_error(invoke("classify", data, edited), 1, f"o.model:{at + 1}: option rescaling: must be 1 (slack)")


@pytest.mark.slow
def test_reading_a_large_model_costs_at_most_twice_its_size(tmp_path, monkeypatch):
    """3 million weights at hashed ids (a 100 MB model): classify's peak beyond that of a one-weight model is at most
    twice the file (it was 5.7 times: every line a Python string); both with numba's kernels loaded."""
    monkeypatch.setenv("SVMSTRUCT_PATH", "kernel")
    rng = np.random.default_rng(5)
    ids = np.unique(rng.integers(1, 2**31 - 1, 3_100_000))[:3_000_000]
    head = "svmstruct-model 1\nloss pairs\noutput scores\nn_features 2147483647\nthreshold 0.0\n"
    big, small = tmp_path / "big.model", tmp_path / "small.model"
    with open(big, "w") as f:
        f.write(f"{head}weights {len(ids)}\n")
        for chunk in np.array_split(np.arange(len(ids)), 10):
            f.write("".join(f"{i} {v!r}\n" for i, v in zip(ids[chunk].tolist(), (rng.normal(size=len(chunk)) / 100)
                                                               .tolist())))
    small.write_text(f"{head}weights 1\n{ids[0]} 0.5\n")
    runs = [_peak_kilobytes(["classify", TEST, model, tmp_path / f"{model.name}.pred"]) for model in (small, big)]
    assert all(run.returncode == 0 for run, _ in runs), runs
    assert (runs[1][1] - runs[0][1]) * 1024 <= 2 * big.stat().st_size, (runs[1][1], runs[0][1], big.stat().st_size)


# ---- outputs: links only where the kernel follows them, descriptors as the shell's

@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a link owned by another user)")
def test_an_output_never_follows_another_users_link_in_a_sticky_directory(tmp_path):
    """As root in a sticky world-writable folder (/tmp): another user's link to a root-owned 0600 file is not
    followed (fs.protected_symlinks), by classify's output nor learn's model; root's own link is."""
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    secret = tmp_path / "secret"
    secret.write_text("root's\n")
    secret.chmod(0o600)
    planted = shared / "r.pred"
    planted.symlink_to(secret)
    os.lchown(planted, OTHER_UID, OTHER_UID)
    for args in (["classify", TEST, model, planted], ["learn", "-l", "map", "-v", "0", TRAIN, planted]):
        one_line_error(invoke(*args), 4, "symlink of user 54321", "not followed")
        assert secret.read_text() == "root's\n" and planted.is_symlink()
    assert sorted(p.name for p in shared.iterdir()) == ["r.pred"]
    own = shared / "own.pred"
    own.symlink_to(tmp_path / "target")
    assert invoke("classify", TEST, model, own).returncode == 0 and (tmp_path / "target").read_text().count("\n") > 0
    unshared = tmp_path / "plain"  # another user's link in a folder that is not sticky: the kernel follows it
    unshared.mkdir()
    (unshared / "l").symlink_to(tmp_path / "target2")
    os.lchown(unshared / "l", OTHER_UID, OTHER_UID)
    assert invoke("classify", TEST, model, unshared / "l").returncode == 0 and (tmp_path / "target2").exists()


def _sticky(tmp_path: Path) -> Path:
    shared = tmp_path / "sticky"
    shared.mkdir()
    shared.chmod(0o1777)
    return shared


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (files of another user)")
def test_another_users_file_in_a_sticky_directory_is_never_written(tmp_path):
    """As root in a sticky world-writable folder: another user's 0666 file is neither replaced (its owner and mode
    copied onto root's predictions or model) nor written; root's own file and one of the folder's owner are."""
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    shared = _sticky(tmp_path)
    planted = shared / "r.pred"
    planted.write_text("x\n")
    planted.chmod(0o666)
    os.chown(planted, OTHER_UID, OTHER_UID)
    for args in (["classify", TEST, model, planted], ["learn", "-l", "map", "-v", "0", TRAIN, planted]):
        one_line_error(invoke(*args), 4, "file of user 54321", "shared sticky directory")
        assert planted.read_text() == "x\n" and planted.stat().st_uid == OTHER_UID
    assert sorted(p.name for p in shared.iterdir()) == ["r.pred"]
    own = shared / "own.pred"
    own.write_text("x\n")
    assert invoke("classify", TEST, model, own).returncode == 0 and own.read_text().count("\n") > 1
    os.chown(shared, OTHER_UID, OTHER_UID)  # the folder's owner's file: the kernel lets root write it, so do we
    assert invoke("classify", TEST, model, planted).returncode == 0 and planted.stat().st_uid == OTHER_UID
    plain = tmp_path / "plain"  # not sticky: replaced, its owner and mode kept, as before
    plain.mkdir()
    theirs = plain / "r.pred"
    theirs.write_text("x\n")
    os.chown(theirs, OTHER_UID, OTHER_UID)
    assert invoke("classify", TEST, model, theirs).returncode == 0 and theirs.stat().st_uid == OTHER_UID


def _fifo_reader(fifo: Path) -> int:
    """A reader already waiting on FIFO (so that a writer's open would not block): its descriptor."""
    return os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)


def _drained(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 20)
    except BlockingIOError:
        return b""
    finally:
        os.close(fd)


def _as_third_user(task, *args) -> int:
    """task(*args) in a forked child running as a user who owns nothing here: its exit status."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(OTHER_UID + 1)
            os.setuid(OTHER_UID + 1)
            os._exit(task(*args))
        except BaseException:
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _write_refused(path: str) -> int:
    """0 when writing PATH is refused with the sticky folder's one line, 1 when it is written."""
    from svmstruct.errors import OutputError
    from svmstruct.io import files

    try:
        files.write_output(path, "a prediction\n")
    except OutputError as e:
        return 0 if "FIFO of user 54321" in str(e) else 2
    return 1


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a FIFO of another user, a writer of a third)")
def test_another_users_fifo_in_a_sticky_directory_receives_nothing(tmp_path, request):
    """Another user's FIFO in a sticky folder: root's predictions are not delivered into it, nor those of a user
    who is neither the FIFO's owner nor the folder's; its owner's own FIFO is written as before."""
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    open_to_all = Path(tempfile.mkdtemp())  # (tmp_path's parents are root's alone: the third user passes here)
    request.addfinalizer(lambda: shutil.rmtree(open_to_all, ignore_errors=True))
    open_to_all.chmod(0o755)
    shared = _sticky(open_to_all)
    fifo = shared / "f.pred"
    os.mkfifo(fifo, 0o666)
    os.chown(fifo, OTHER_UID, OTHER_UID)
    reader = _fifo_reader(fifo)
    one_line_error(invoke("classify", TEST, model, fifo), 4, "FIFO of user 54321", "shared sticky directory")
    assert _drained(reader) == b""
    reader = _fifo_reader(fifo)
    assert _as_third_user(_write_refused, str(fifo)) == 0  # (the installation is root's: the writer in a child)
    assert _drained(reader) == b""
    os.chown(fifo, 0, 0)
    reader = _fifo_reader(fifo)
    assert invoke("classify", TEST, model, fifo).returncode == 0
    assert _drained(reader).count(b"\n") == len(TEST.read_text().splitlines())


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a link of another user)")
def test_a_link_planted_before_the_rename_lends_no_owner_or_mode(tmp_path):
    """The entry found where the new file goes is a symlink (planted after the path was resolved): the new file
    has the usual mode and this user's owner, not the link's 0777 and its owner's."""
    from svmstruct.io import files

    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "out").symlink_to(tmp_path / "elsewhere")
    os.lchown(folder / "out", OTHER_UID, OTHER_UID)
    directory = os.open(folder, os.O_PATH | os.O_DIRECTORY)
    fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o600)
    try:
        files._keep_mode_and_owner(fd, directory, "out", str(folder / "out"))
        made = os.fstat(fd)
    finally:
        os.close(fd)
        os.close(directory)
    umask = os.umask(0)
    os.umask(umask)
    assert made.st_uid == os.geteuid() and stat.S_IMODE(made.st_mode) == 0o666 & ~umask


def _bash(script: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=cwd)


def test_dev_stdout_and_dev_fd_outputs_are_written_through_the_descriptor(tmp_path):
    model = tmp_path / "m"
    assert invoke("learn", "-l", "map", "-v", "0", TRAIN, model).returncode == 0
    svm = " ".join(COMMAND)
    n = len(TEST.read_text().splitlines())
    appended = _bash(f"echo first > all.pred && {svm} classify {TEST} {model} /dev/stdout >> all.pred && "
                     f"{svm} classify {TEST} {model} /dev/fd/1 >> all.pred", tmp_path)
    assert appended.returncode == 0, appended.stderr
    lines = (tmp_path / "all.pred").read_text().splitlines()
    assert lines[0] == "first" and len(lines) == 1 + 2 * n and lines[1:n + 1] == lines[n + 1:]
    piped = _bash(f"{svm} classify {TEST} {model} /dev/stdout | wc -l", tmp_path)
    assert piped.returncode == 0 and piped.stdout.strip() == str(n), piped.stderr
    deleted = _bash(f"exec 5> x && rm x && {svm} classify {TEST} {model} /dev/fd/5 && ls", tmp_path)
    assert deleted.returncode == 0 and deleted.stdout.split() == ["all.pred", "m"], deleted.stdout + deleted.stderr
    one_line_error(_bash(f"{svm} classify {TEST} {model} /dev/fd/7", tmp_path), 4, "/dev/fd/7")


def test_a_sigkilled_write_leaves_no_file(tmp_path):
    """The model is written into a file without a name until it is complete: SIGKILL while it is written (here
    while it is flushed to disk) leaves the folder as it was."""
    script = ("import os, sys, time\nfrom svmstruct.io import files\nos.fsync = lambda fd: (print('writing', "
              "flush=True), time.sleep(60))\nfiles.write_output(sys.argv[1], 'x' * 1000)\n")
    child = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "m.model")], stdout=subprocess.PIPE,
                             text=True, cwd=tmp_path.parent)
    assert child.stdout.readline() == "writing\n"
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    assert list(tmp_path.iterdir()) == []


# ---- a checkpoint costs what it holds

def _checkpoint(tmp_path: Path) -> tuple:
    ckpt = tmp_path / "run.ckpt"
    args = ["learn", "-l", "map", "-c", "100", "-#", "3", "--checkpoint", ckpt, "-v", "0", TRAIN, tmp_path / "m"]
    assert invoke(*args).returncode == 0 and ckpt.exists()
    (tmp_path / "m").unlink()
    with np.load(ckpt, allow_pickle=False) as saved:
        return {key: saved[key] for key in saved.files}, args


def _peak_kilobytes(args: list) -> tuple:
    """(the command's result, its peak resident memory in KB), measured by a process of its own that runs it."""
    import json

    wrapper = ("import json, resource, subprocess, sys\nrun = subprocess.run(sys.argv[1:], capture_output=True, "
               "text=True)\nprint(json.dumps([run.returncode, run.stdout, run.stderr, "
               "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n")
    measured = subprocess.run([sys.executable, "-c", wrapper, *COMMAND, *map(str, args)], capture_output=True,
                              text=True, check=True)
    code, out, err, peak = json.loads(measured.stdout)
    return subprocess.CompletedProcess(args, code, out, err), peak


@pytest.mark.parametrize("craft, fragment", [
    ("compressed", "not a checkpoint"), ("nested", "not a checkpoint"), ("constraints", "working set of"),
])
def test_a_crafted_checkpoint_is_refused_before_it_costs_memory(tmp_path, craft, fragment):
    state, args = _checkpoint(tmp_path)
    d = state["A"].shape[1]
    if craft == "compressed":  # 1.5 GB of zeros in a few MB
        state["A"] = np.zeros((4_000_000 // d * 50, d))
    elif craft == "nested":
        state["signature"] = np.asarray("[" * 100_000 + "]" * 100_000)
    else:  # uncompressed, as the file declares, but more constraints than a run over d weights holds
        m = d + 5000
        state.update(A=np.zeros((m, d)), b=np.zeros(m), idle=np.zeros(m), alpha=np.zeros(m))
    crafted = tmp_path / "crafted.ckpt"
    with open(crafted, "wb") as f:
        (np.savez_compressed if craft == "compressed" else np.savez)(f, **state)
    assert crafted.stat().st_size < 10_000_000
    resume = [a if a != tmp_path / "run.ckpt" else crafted for a in args if a not in ("-#", "3")] + ["--resume"]
    run, peak = _peak_kilobytes(resume)
    one_line_error(run, 1, fragment)
    assert peak < 600_000
    if craft != "constraints":  # without --resume the file is only looked at, and kept
        fresh = [a if a != tmp_path / "run.ckpt" else crafted for a in args]
        run, peak = _peak_kilobytes(fresh)
        one_line_error(run, 2, "not a checkpoint", "not replaced")
        assert peak < 600_000 and crafted.exists()


# ---- the environment

def test_an_empty_loss_name_is_a_usage_error(tmp_path):
    one_line_error(invoke("learn", "-l", "", "-v", "0", TRAIN, tmp_path / "m"), 2, "unknown loss ''")
    assert not (tmp_path / "m").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a read-only bind mount in a mount namespace)")
def test_a_read_only_installation_and_home_still_run(tmp_path):
    """The package on a read-only file system and a home that cannot be written (a container, `nobody`): numba cannot
    cache beside the package nor in ~/.cache; the kernels go to a private folder in TMPDIR, said once."""
    package = ROOT / "svmstruct"
    script = (f"mount --bind {package} {package} && mount -o remount,bind,ro {package} && "
              f"for i in 1 2; do {' '.join(COMMAND)} eval -m map {TEST} {tmp_path}/pred || exit 1; done")
    (tmp_path / "tmp").mkdir()
    (tmp_path / "pred").write_text("".join(f"{i % 7}\n" for i in range(len(TEST.read_text().splitlines()))))
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    run = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], capture_output=True,
                         text=True, env={**env, "HOME": str(package), "TMPDIR": str(tmp_path / "tmp"),
                                         "SVMSTRUCT_PATH": "kernel"}, timeout=600)  # (numba's kernels, small as it is)
    if "mount" in run.stderr and run.returncode != 0 and "Traceback" not in run.stderr:
        pytest.skip(f"no read-only bind mount here: {run.stderr.strip()}")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    notices = [line for line in run.stderr.splitlines() if "numba cannot write its cache" in line]
    assert len(notices) == 1 and str(tmp_path / "tmp") in notices[0]
    assert run.stdout.count("map") == 2
    folder = tmp_path / "tmp" / f"svmstruct-numba-{os.geteuid()}"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and any(folder.rglob("*.nbi"))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a folder of another user)")
def test_another_users_folder_under_the_kernels_name_costs_only_the_cache(tmp_path, monkeypatch):
    """Where numba must keep its kernels in the temporary folder, another user who made svmstruct-numba-UID first
    used to make every command fail; now the command compiles into a private folder of an unpredictable name."""
    from svmstruct.compute import numba_cache

    monkeypatch.setattr(numba_cache.tempfile, "tempdir", str(tmp_path))
    taken = tmp_path / f"svmstruct-numba-{os.geteuid()}"
    taken.mkdir(mode=0o700)
    os.chown(taken, OTHER_UID, OTHER_UID)
    folder, created = numba_cache._private_folder()
    assert created and folder != str(taken) and Path(folder).parent == tmp_path
    info = os.lstat(folder)
    assert info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == 0o700


def test_resuming_after_sigkill_keeps_the_previous_checkpoint(tmp_path):
    """A checkpoint being replaced when SIGKILL comes: the previous one stays whole (the new one has no name yet)."""
    state, args = _checkpoint(tmp_path)
    script = ("import os, sys, time, json, numpy as np\nfrom svmstruct.train import checkpoint\n"
              "os.fsync = lambda fd: (print('writing', flush=True), time.sleep(60))\n"
              "with np.load(sys.argv[1]) as f: state = {k: f[k] for k in f.files}\n"
              "signature = json.loads(str(state.pop('signature')))\n"
              "checkpoint.save(sys.argv[1], state, signature)\n")
    before = (tmp_path / "run.ckpt").read_bytes()
    child = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "run.ckpt")], stdout=subprocess.PIPE,
                             text=True, cwd=tmp_path.parent)
    assert child.stdout.readline() == "writing\n"
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    time.sleep(0.1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.ckpt"] and (tmp_path / "run.ckpt").read_bytes() == before
