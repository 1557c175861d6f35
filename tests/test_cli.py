"""The command line end to end: user errors, no partial outputs, determinism, the numba cache."""
import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import invoke

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "data" / "mq2008-small"
TRAIN = ROOT / "data" / "mq2008-small" / "train.txt"
TEST = ROOT / "data" / "mq2008-small" / "test.txt"

GOOD = "1 qid:1 1:0.5 3:1.0 # d1\n0 qid:1 1:0.1 2:0.3\n1 qid:2 2:1.5 # d3\n0 qid:2 1:0.7 3:0.2\n"


def process(*args, stdin=None, env=None, cwd=None):
    """A whole `python -m svmstruct` process (for what concerns the process: the numba cache, signals)."""
    return subprocess.run([sys.executable, "-m", "svmstruct", *map(str, args)], input=stdin, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, cwd=cwd)


run = invoke


def assert_user_error(result, *fragments):
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and lines[0].startswith("svmstruct: error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.parametrize(
    "bad_line, fragment",
    [
        ("1 qid:3 1:0.5 2 # x", "'2'"),
        ("1 qid:3 0:0.5", "0:0.5"),
        ("1 qid:3 3:0.5 2:0.1", "2:0.1"),
        ("1 qid:3 1:nan", "nan"),
        ("1 qid:3 1:abc", "abc"),
    ],
)
@pytest.mark.slow
def test_malformed_training_line_names_file_and_line(tmp_path, bad_line, fragment):
    train = tmp_path / "train.dat"
    train.write_text(GOOD + bad_line + "\n")
    out = tmp_path / "out.model"
    result = run("learn", "-v", "0", train, out)
    assert_user_error(result, f"{train}:5:", fragment)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["train.dat"]


def test_missing_file_unknown_loss_and_corrupt_model(tmp_path):
    train = tmp_path / "train.dat"
    train.write_text(GOOD)
    assert_user_error(run("learn", tmp_path / "absent.dat", tmp_path / "m"), "absent.dat")
    assert_user_error(run("learn", "-l", "nosuchloss", train, tmp_path / "m"), "unknown loss 'nosuchloss'")
    bad_model = tmp_path / "bad.model"
    bad_model.write_text("svmstruct-model 1\nloss errorrate\nn_features 3\nthreshold 0\nweights 1\n1 zz\n")
    out = tmp_path / "pred"
    assert_user_error(run("classify", train, bad_model, out), f"{bad_model}:6:", "zz")
    assert not out.exists() and not (tmp_path / "m").exists()


def test_usage_errors_are_one_line(tmp_path):
    assert_user_error(run("learn"), "Missing argument")
    assert_user_error(run("learn", "-c", "abc", "a", "b"), "-c")
    assert_user_error(run("frobnicate"), "No such command")


@pytest.mark.slow
def test_learn_twice_gives_byte_identical_models_and_no_recompilation(tmp_path):
    cache = tmp_path / "numba-cache"
    env = {"NUMBA_CACHE_DIR": str(cache)}
    first, second = tmp_path / "a.model", tmp_path / "b.model"
    r1 = process("learn", "-l", "rocarea", "-c", "1", "-v", "0", TRAIN, first, env=env)
    assert r1.returncode == 0, r1.stderr
    snapshot = {p: p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()}
    assert any(p.suffix == ".nbc" for p in snapshot), "numba wrote no cache"
    r2 = process("learn", "-l", "rocarea", "-c", "1", "-v", "0", TRAIN, second, env=env)
    assert r2.returncode == 0, r2.stderr
    after = {p: p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()}
    assert after == snapshot, "the second run recompiled a kernel"
    assert first.read_bytes() == second.read_bytes()


def test_learn_classify_pipeline_and_stdin(tmp_path):
    m = tmp_path / "m.model"
    r = run("learn", "-l", "10", "-c", "1", TRAIN, m)
    assert r.returncode == 0, r.stderr
    assert "pval=" in r.stderr and r.stdout == ""
    scores = run("classify", TEST, m)
    assert scores.returncode == 0
    lines = scores.stdout.splitlines()
    assert len(lines) == len(TEST.read_text().splitlines())
    assert all(len(l.split(".")[1]) == 8 for l in lines)
    piped = run("classify", "-", m, stdin=TEST.read_text())
    assert piped.stdout == scores.stdout
    out = tmp_path / "pred.txt"
    assert run("classify", TEST, m, out).returncode == 0 and out.read_text() == scores.stdout


def test_svmlight_export_is_read_back(tmp_path):
    ours, exported = tmp_path / "ours.model", tmp_path / "light.model"
    assert run("learn", "-l", "2", "-v", "0", TRAIN, ours).returncode == 0
    assert run("learn", "-l", "2", "-v", "0", "--format", "svmlight", TRAIN, exported).returncode == 0
    a = [float(x) for x in run("classify", TEST, ours).stdout.split()]
    b = [float(x) for x in run("classify", TEST, exported).stdout.split()]
    assert max(abs(x - y) for x, y in zip(a, b)) < 1e-5


@pytest.mark.parametrize("loss", ["pairs", "map", "ndcg@10", "errorrate", "f1", "pairs --layout sparse"])
def test_threads_do_not_change_the_model(loss, tmp_path):
    """--threads 1 (the kernels' one-thread twins) and --threads 2 with every kernel in parallel (the oracles
    and products over queries and rows, on this small set only because SVMSTRUCT_PARALLEL_SECONDS=0) write the
    same bytes; classify and eval take --threads too."""
    models = []
    for threads in (1, 2):
        path = tmp_path / f"{threads}.model"
        run = invoke("learn", "-l", *loss.split(), "-c", "10", "-v", "0", "--threads", threads, SMALL / "train.txt",
                     path, env={"SVMSTRUCT_PARALLEL_SECONDS": "0"} if threads == 2 else {})
        assert run.returncode == 0, run.stderr
        models.append(path.read_bytes())
    assert models[0] == models[1]
    scored = invoke("classify", "--threads", "1", SMALL / "test.txt", tmp_path / "1.model")
    lines = (SMALL / "test.txt").read_text().splitlines()
    assert scored.returncode == 0 and len(scored.stdout.splitlines()) == len(lines)
    evaluated = invoke("eval", "--threads", "1", SMALL / "test.txt", "-", stdin=scored.stdout)
    assert evaluated.returncode == 0, evaluated.stderr


def test_threads_must_be_positive():
    run = invoke("learn", "--threads", "0", SMALL / "train.txt", "-")
    assert run.returncode == 2 and "--threads" in run.stderr


@pytest.mark.slow
def test_after_the_warm_up_no_command_compiles(tmp_path):
    """`make install` runs `python -m svmstruct.worker.warmup`; afterwards learn (every family), classify and eval
    load every numba kernel from the cache (NUMBA_DEBUG_CACHE prints `data saved` when it compiles)."""
    env = {**os.environ, "NUMBA_DEBUG_CACHE": "1"}
    warm = subprocess.run([sys.executable, "-m", "svmstruct.worker.warmup"], capture_output=True, text=True)
    assert warm.returncode == 0, warm.stderr
    runs = [["learn", "-l", loss, "-c", "1", "-v", "0", SMALL / "train.txt", tmp_path / f"{i}.model"]
            for i, loss in enumerate(["ndcg@10", "map", "pairs", "errorrate", "f1", "rocarea", "mrr"])]
    # gzipped input, both layouts
    (tmp_path / "train.txt.gz").write_bytes(gzip.compress((SMALL / "train.txt").read_bytes()))
    runs += [["learn", "-l", loss, layout, "-c", "1", "-v", "0", tmp_path / "train.txt.gz", tmp_path / "big.model"]
             for loss in ("pairs", "errorrate") for layout in ("--dense", "--layout=sparse")]
    runs += [["classify", SMALL / "test.txt", tmp_path / "0.model", tmp_path / "0.pred"],
             ["eval", "-m", "all", SMALL / "test.txt", tmp_path / "0.pred"]]
    (tmp_path / "tags.txt").write_text("".join(f"{1 + (q * t) % 4} qid:{q} 1:{q / 7:.3f} 3:{t / 5:.3f}\n"
                                               for q in range(1, 9) for t in range(1, 7)))
    runs += [["learn", "--problem", problem, "-c", "1", "-v", "0", tmp_path / "tags.txt", tmp_path / f"{problem}.model"]
             for problem in ("multiclass", "hmm")]
    for args in runs:
        run = subprocess.run([sys.executable, "-m", "svmstruct", *map(str, args)], capture_output=True, text=True,
                             env=env)
        assert run.returncode == 0, run.stderr
        compiled = [line for line in (run.stdout + run.stderr).splitlines() if "data saved" in line]
        assert not compiled, f"{args[0]} compiled: {compiled[:3]}"


def test_learn_checkpoint_and_resume(tmp_path):
    """`learn -# 2 --checkpoint F` stops with the state in F; `--checkpoint F --resume` ends with the model of
    an uninterrupted run and removes F; resuming with other settings, or without F, is one line."""
    import numpy as np

    from svmstruct import model

    train = str(Path(__file__).resolve().parents[1] / "data" / "mq2008-small" / "train.txt")
    state, first, resumed, whole = (str(tmp_path / name) for name in ("run.ckpt", "a.model", "b.model", "c.model"))
    run = invoke("learn", "-l", "map", "-c", "10", "-v", "0", "-#", "2", "--checkpoint", state, train, first)
    assert run.returncode == 0 and f"continue with --checkpoint {state} --resume" in run.stderr
    assert os.path.exists(state)
    other = invoke("learn", "-l", "map", "-c", "1", "-v", "0", "--checkpoint", state, "--resume", train, resumed)
    assert other.returncode == 1 and "belongs to another run (C differ)" in other.stderr
    assert other.stderr.count("\n") == 1 and not os.path.exists(resumed)
    double = invoke("learn", "-l", "map", "-c", "10", "--float64", "-v", "0", "--checkpoint", state, "--resume", train,
                    resumed)
    assert double.returncode == 1 and "belongs to another run (precision differ)" in double.stderr
    run = invoke("learn", "-l", "map", "-c", "10", "-v", "0", "--checkpoint", state, "--resume", train, resumed)
    assert run.returncode == 0, run.stderr
    assert not os.path.exists(state)
    assert invoke("learn", "-l", "map", "-c", "10", "-v", "0", train, whole).returncode == 0
    a, b = model.load_model(resumed), model.load_model(whole)
    assert a.header["iterations"] == b.header["iterations"]
    assert np.abs(a.w - b.w).max() <= 1e-9 * np.abs(b.w).max()
    missing = invoke("learn", "-l", "map", "--resume", train, resumed)
    assert missing.returncode == 2 and "--resume needs --checkpoint FILE" in missing.stderr
    gone = invoke("learn", "-l", "map", "--checkpoint", state, "--resume", train, resumed)
    assert gone.returncode == 1 and "no checkpoint to resume from" in gone.stderr
    easy = tmp_path / "easy.txt"
    easy.write_text("1 qid:1 1:1\n0 qid:1 1:0\n")  # converged at the first iteration: no checkpoint written
    run = invoke("learn", "-l", "pairs", "-v", "0", "--checkpoint", state, str(easy), whole)
    assert run.returncode == 0 and run.stderr == "" and not os.path.exists(state)


def test_fit_checkpoints_and_resumes_as_learn_does(tmp_path):
    """svmstruct.fit(checkpoint=F) stops at its iteration limit with the state in F, fit(checkpoint=F, resume=True)
    continues it (training.Checkpointing: learn's engine) to the model `learn --checkpoint F --resume` writes; F is
    removed once converged; another data set is refused."""
    import numpy as np

    import svmstruct
    from svmstruct.errors import InputError

    train = str(Path(__file__).resolve().parents[1] / "data" / "mq2008-small" / "train.txt")
    data = svmstruct.read_svmlight(train)
    state, by_cli, cli_state = tmp_path / "api.ckpt", str(tmp_path / "cli.model"), str(tmp_path / "cli.ckpt")
    stopped = svmstruct.fit(data, loss="map", C=10, max_iterations=2, checkpoint=str(state))
    assert not stopped.result.converged and state.exists()
    other = svmstruct.read_svmlight(str(Path(train).with_name("vali.txt")))
    with pytest.raises(InputError, match="belongs to another run"):
        svmstruct.fit(other, loss="map", C=10, checkpoint=str(state), resume=True)
    resumed = svmstruct.fit(data, loss="map", C=10, checkpoint=str(state), resume=True)
    assert resumed.result.converged and not state.exists()
    assert invoke("learn", "-l", "map", "-c", "10", "-v", "0", "-#", "2", "--checkpoint", cli_state, train,
                  by_cli).returncode == 0
    assert invoke("learn", "-l", "map", "-c", "10", "-v", "0", "--checkpoint", cli_state, "--resume", train,
                  by_cli).returncode == 0
    cli = svmstruct.load_model(by_cli)
    assert str(cli.header["iterations"]) == str(resumed.header["iterations"])
    assert np.abs(cli.w - resumed.w).max() <= 1e-9 * np.abs(cli.w).max()


# ---- --validate: each C's model is learn -c C's; the grid says what it did

def _without_selection(text: str) -> str:
    return "".join(line for line in text.splitlines(True)
                   if not line.startswith(("selected_by ", "validation_value ", "grid ")))


@pytest.mark.parametrize("loss", ["map", "pairs", "ndcg@10"])
def test_each_c_of_a_grid_trains_the_model_learn_c_writes(loss, tmp_path):
    """Each C of a --validate grid starts from w = 0: the model the grid chooses is, byte for byte (its
    selection lines aside), what `learn -c C` writes for that C, whatever the grid around it."""
    import numpy as np

    from svmstruct import api, model, training
    from svmstruct.io import data

    train = data.read_svmlight(str(TRAIN), dtype=np.float32, layout="auto")  # as learn reads it
    loss_, opts = api.resolve_loss(loss, {})
    grid = [0.1, 1.0, 10.0]
    models = list(training.train_grid(training.LocalSource(train), loss_, opts, api.Settings(grid)))
    for C, trained in zip(grid, models):
        alone = tmp_path / f"{C}.model"
        assert run("learn", "-l", loss, "-c", C, "-v", "0", TRAIN, alone).returncode == 0
        trained.header["train_file"] = str(TRAIN)
        assert model.format_model(trained) == alone.read_text()
    chosen = tmp_path / "chosen.model"
    assert run("learn", "-l", loss, "-c", "0.1,1,10", "--validate", TEST, "-v", "0", TRAIN, chosen).returncode == 0
    C = next(line.split()[1] for line in chosen.read_text().splitlines() if line.startswith("C "))
    assert _without_selection(chosen.read_text()) == (tmp_path / f"{float(C)}.model").read_text()


def test_a_grid_warns_when_its_best_c_is_at_an_end_and_talks_at_v2_and_v3(tmp_path):
    args = ["learn", "-l", "map", "--validate", TEST, TRAIN, tmp_path / "m"]
    largest = run(*args[:3], "-c", "0.01,0.1", "-v", "0", *args[3:])  # 0.1 is the best C (MAP on the test part)
    assert largest.returncode == 0 and "0.1, is the largest of the grid: a larger C may be better" in largest.stderr
    smallest = run(*args[:3], "-c", "0.1,1,10", "-v", "0", *args[3:])
    assert "0.1, is the smallest of the grid: a smaller C may be better" in smallest.stderr
    inside = run(*args[:3], "-c", "0.01,0.1,1", "-v", "0", *args[3:])
    assert inside.returncode == 0 and "of the grid" not in inside.stderr
    one, two, three = (run(*args[:3], "-c", "0.1,1", "-v", str(v), *args[3:]).stderr for v in (1, 2, 3))
    assert "iter " not in one and "C 0.1,1" in one
    assert two.count("iter    1 ") == 2 and two.count("Optimization finished") == 2 and "step" not in two
    assert three.count("iter    1 ") == 2 and "step" in three and "|w|" in three
    for line in two.splitlines():
        if line.startswith("Total number of constraints"):  # the working set never exceeds what was added
            held, added = (int(n) for n in line.split(":")[1].replace("(of", "").replace(")", "").split())
            assert held <= added


def test_the_warm_up_run_beside_a_source_copy_compiles_the_installed_one(tmp_path):
    """`python -m svmstruct.worker.warmup` in a directory holding another copy of the package (a checkout beside a
    regular install) imports that copy first: it must notice and compile the installed one."""
    import shutil

    shutil.copytree(ROOT / "svmstruct", tmp_path / "svmstruct", ignore=shutil.ignore_patterns("__pycache__"))
    code = "from svmstruct.worker import warmup; print(warmup.__file__); print(warmup._installed_elsewhere())"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    imported, elsewhere = run.stdout.split()
    assert imported.startswith(str(tmp_path)) and elsewhere == "True"
    here = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert here.stdout.split()[1] == "False"  # the checkout of this (editable) installation: nothing else to compile


def test_a_command_ends_with_its_output_whole_and_its_exit_code(tmp_path):
    """The command ends with os._exit once it is done (svmstruct/__main__.py: _leave): its standard output arrives
    whole (60,000 scores through a pipe) and an error keeps its code and its one-line message."""
    rows = "".join(f"{1 + k % 2} 1:{k % 7 / 7:.3f} 2:1\n" for k in range(60_000))
    (tmp_path / "data").write_text(rows)
    (tmp_path / "model").write_text("svmstruct-model 1\nloss errorrate\nn_features 2\nthreshold 0.5\nweights 1\n"
                                    "1 2.5\n")
    run = invoke("classify", tmp_path / "data", tmp_path / "model", "-", env={"SVMSTRUCT_RESIDENT": "0"})
    assert run.returncode == 0, run.stderr
    scores = run.stdout.split()
    assert len(scores) == 60_000 and float(scores[-1]) == pytest.approx(2.5 * (59_999 % 7 / 7) - 0.5, abs=1e-3)
    run = invoke("learn", tmp_path / "missing", tmp_path / "m", env={"SVMSTRUCT_RESIDENT": "0"})
    assert run.returncode == 1 and "missing" in run.stderr and "Traceback" not in run.stderr
