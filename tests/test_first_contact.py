"""What a new user meets first, as svm_rank, svm_perf, svm_multiclass and trec_eval users would try it: labels a
binary loss cannot use, scikit-learn's model selection without metadata routing, long silent grids, misleading
lines, and the install that leaves the checkout as it was."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from helpers import one_line_error

from conftest import ROOT, invoke, invoke_here

SMALL = ROOT / "data" / "mq2008-small"
TRAIN, TEST, VALI = SMALL / "train.txt", SMALL / "test.txt", SMALL / "vali.txt"


# ---- labels a binary loss cannot use

@pytest.mark.parametrize("loss", ["errorrate", "f1", "rocarea"])
def test_class_labels_are_not_silently_one_class(tmp_path, loss):
    """Labels 1..20 (a multi-class file): every document is positive; errorrate refuses them as f1 does, and names
    --rel-threshold and --problem multiclass; labels all at or below the threshold likewise."""
    rng = np.random.default_rng(0)
    data = tmp_path / "classes.svm"
    data.write_text("".join(f"{c} 1:{rng.random():.3f} 2:{rng.random():.3f}\n" for c in rng.integers(1, 21, 200)))
    one_line_error(invoke("learn", "-l", loss, "-c", "100", "-v", "0", data, tmp_path / "m"), 1,
                   "every document is positive", "--rel-threshold", "--problem multiclass")
    negative = tmp_path / "negative.svm"
    negative.write_text("".join(f"-1 1:{rng.random():.3f}\n" for _ in range(50)))
    one_line_error(invoke("learn", "-l", loss, "-v", "0", negative, tmp_path / "m"), 1, "every document is negative")
    assert not (tmp_path / "m").exists()


# ---- scikit-learn

def test_grid_search_without_metadata_routing_raises_and_says_how(monkeypatch):
    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold

    import svmstruct

    train = svmstruct.read_svmlight(str(TRAIN))
    search = GridSearchCV(svmstruct.SVMRank(loss="pairs"), {"C": [1, 10]}, cv=GroupKFold(3))
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        search.fit(train.X, train.y, qid=train.qid, groups=train.qid)
    with sklearn.config_context(enable_metadata_routing=True):
        search.fit(train.X, train.y, qid=train.qid, groups=train.qid)
        assert np.isfinite(search.best_score_)
    assert svmstruct.SVMRank(loss="pairs").fit(train.X, train.y, qid=train.qid).score(train) > 0.5  # plain use


def test_score_of_a_dataset_breaks_ties_as_eval_does(tmp_path):
    """A ranker on one binary feature ties most documents: score(test) (the dataset's labels, queries and docids)
    is eval's value on the same predictions; without docids ties go by row."""
    import svmstruct

    train, test = svmstruct.read_svmlight(str(TRAIN)), svmstruct.read_svmlight(str(TEST))
    coarse = lambda X: (np.asarray(X[:, :1].todense() if hasattr(X, "todense") else X[:, :1]) > 0.5) * 1.0  # noqa: E731
    ranker = svmstruct.SVMRank(loss="pairs", C=1).fit(coarse(train.X), train.y, qid=train.qid)
    scores = ranker.predict(coarse(test.X))
    assert len(np.unique(scores)) <= 2
    (tmp_path / "p").write_text("".join(f"{s:.8f}\n" for s in scores))
    line = invoke("eval", "-m", "pairacc", TEST, tmp_path / "p").stdout
    evaluated = float(re.findall(r"pairacc\s+all\s+([0-9.]+)", line)[0])
    test.X = coarse(test.X)
    assert round(ranker.score(test), 4) == evaluated
    with pytest.raises(ValueError, match="takes the labels"):
        ranker.score(test, test.y)


# ---- long runs are not silent, warnings say what happened

@pytest.mark.slow
def test_a_validation_grid_at_v1_shows_progress_inside_each_c(tmp_path, monkeypatch):
    from svmstruct.commands import learn

    monkeypatch.setattr(learn, "HEARTBEAT_SECONDS", 0.0)
    run = invoke_here("learn", "-l", "map", "-c", "1,10", "--validate", VALI, "-v", "1", TRAIN, tmp_path / "m")
    assert run.returncode == 0, run.stderr
    assert re.search(r"^C 1: iteration \d+, gap/C", run.stderr, re.M) and re.search(r"^C 10: iteration", run.stderr,
                                                                                      re.M)
    assert "iter    1" not in run.stderr  # not every iteration's line: that is -v 2


@pytest.mark.slow
def test_the_grid_edge_warning_is_not_given_when_the_grid_tells_nothing(tmp_path):
    flat = tmp_path / "flat.txt"  # no relevant document anywhere: every C's validation NDCG@10 is the same
    flat.write_text("".join("0" + line[1:] + "\n" for line in VALI.read_text().splitlines()))
    run = invoke("learn", "-l", "pairs", "-c", "1,10,100", "--validate", flat, "--select", "ndcg@10", "-v", "0", TRAIN,
                 tmp_path / "m")
    assert run.returncode == 0 and "same for every C" in run.stderr and "extend -c" not in run.stderr, run.stderr
    tiny = invoke("learn", "-l", "errorrate", "-c", "1e-6,1e-5", "--validate", VALI, "-v", "0", TRAIN, tmp_path / "m")
    assert tiny.returncode == 0 and "no C of the grid learned" in tiny.stderr and "extend -c" not in tiny.stderr


def test_a_forgotten_model_argument_says_so(tmp_path):
    one_line_error(invoke("learn", "-l", "map", TRAIN), 2, "TRAIN_FILE... MODEL_FILE", "only")


def test_the_help_lists_worker_and_every_verbosity():
    main = invoke("--help").stdout
    assert re.search(r"^\s+worker\s", main, re.M)
    learn = " ".join(invoke("learn", "--help").stdout.split())
    assert "2: also every C's" in learn and "3: also the line search's" in learn
    assert invoke("worker", "--help").returncode == 0


# ---- the docs and the install as written

def test_the_readme_says_how_to_put_the_command_on_path():
    """After `make demo` the command is in .venv/bin: the README's line puts it on PATH."""
    text = (ROOT / "README.md").read_text()
    line = re.search(r"`(export PATH=[^`]*)`", text)
    assert line, "the README does not say how to put svmstruct on PATH"
    if not (ROOT / ".venv" / "bin" / "svmstruct").exists():
        pytest.skip("no .venv here (make demo makes it)")
    found = subprocess.run(["bash", "-c", f"{line.group(1)} && command -v svmstruct"], cwd=ROOT, capture_output=True,
                           text=True, env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")})
    assert found.stdout.strip() == str(ROOT / ".venv" / "bin" / "svmstruct")


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_pip_install_leaves_the_checkout_as_it_was(tmp_path):
    """A plain `pip install .` (here: building the wheel it installs) writes nothing into the checkout: no build/,
    no *.egg-info (a stale build/ once shipped an older layout's modules)."""
    copy = tmp_path / "checkout"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    for name in files:
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    before = sorted(p.relative_to(copy) for p in copy.rglob("*"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "wheel"),
                            str(copy)], capture_output=True, text=True)
    if built.returncode != 0 and "hatchling" in built.stderr and "Could not" in built.stderr:
        pytest.skip(f"the build backend cannot be fetched here: {built.stderr.strip()[-200:]}")
    assert built.returncode == 0, built.stderr
    assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == before
    (wheel,) = (tmp_path / "wheel").glob("svmstruct-*.whl")
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert "svmstruct/worker/control.py" in names and not [n for n in names if "__pycache__" in n or "tests/" in n]


# ---- learn without -c

def test_without_c_each_family_gets_a_c_that_learns_and_is_told_which(tmp_path):
    """svm_perf's losses train with C 100 (at 1 they call every Reuters document negative: make exp-defaults), the
    ranking losses with C 1; -v 1 says it is the default; a --problem needs -c, as svm_multiclass and svm_hmm do."""
    for loss, C in (("errorrate", "100.0"), ("f1", "100.0"), ("pairs", "1.0"), ("ndcg@10", "1.0")):
        run = invoke("learn", "-l", loss, "-v", "1", TRAIN, tmp_path / "m")
        assert run.returncode == 0, run.stderr
        assert f"C {float(C):g} (the loss's default; -c sets it)" in run.stderr
        assert f"\nC {C}\n" in (tmp_path / "m").read_text()
    given = invoke("learn", "-l", "errorrate", "-c", "3", "-v", "1", TRAIN, tmp_path / "m")
    assert "C 3, epsilon" in given.stderr and "default" not in given.stderr.split("epsilon")[0]
    data = tmp_path / "classes.svm"
    data.write_text("".join(f"{1 + i % 3} 1:{i % 5} 2:{i % 3}\n" for i in range(30)))
    one_line_error(invoke("learn", "--problem", "multiclass", "-v", "0", data, tmp_path / "mc"), 2, "give -c")
    assert not (tmp_path / "mc").exists()
    import svmstruct

    assert svmstruct.SVMPerf().fit(np.eye(4), [0, 1, 0, 1]).model_.C == 100.0
    assert svmstruct.SVMRank(single_query=True).fit(np.eye(4), [0, 1, 0, 1]).model_.C == 1.0


def test_a_passing_test_leaves_nothing_in_the_temporary_folder(tmp_path):
    """The suite's configuration removes the temporary folders of passing tests at the end of the run (make test
    left 165 MB behind, run after run)."""
    (tmp_path / "test_big.py").write_text(
        "def test_writes(tmp_path):\n    (tmp_path / 'big').write_bytes(b'x' * 1_000_000)\n"
        f"    open({str(tmp_path / 'where')!r}, 'w').write(str(tmp_path))\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
                          str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(tmp_path / "test_big.py")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    written = (tmp_path / "where").read_text()
    assert written and not os.path.exists(written)


LETTERS, DIGITS = ROOT / "data" / "struct" / "letters.train.hmm", ROOT / "data" / "struct" / "digits.train.svm"


@pytest.mark.parametrize("args, problem", [
    (["-c", "5", "--t", "2", "--e", "1", LETTERS], "hmm"),
    (["-c", "5", "--t", "2", LETTERS], "hmm"),
    (["-c", "5", "-e", "0.5", LETTERS], "hmm"),
    (["-c", "5", "--b", "3", LETTERS], "hmm"),
    (["-c", "100", DIGITS], "multiclass"),
    (["-c", "100", "--classes", "10", DIGITS], "multiclass"),
])
def test_the_originals_command_lines_are_pointed_to_their_problem(tmp_path, args, problem):
    """svm_hmm's and svm_multiclass's own command lines without --problem: one line naming --problem and the command
    with it (they said 'emissions does not apply to loss errorrate', '--t applies to a kernel', or trained a binary
    loss on the tags)."""
    run = invoke("learn", *args, tmp_path / "m")
    typed = " ".join(["svmstruct", "learn", "--problem", problem, *map(str, args), str(tmp_path / "m")])
    one_line_error(run, 2, f"add --problem {problem} ({typed})")
    assert not (tmp_path / "m").exists()
    followed = invoke("learn", "--problem", problem, "-v", "0", *args[:-1], "-e", "1", args[-1], tmp_path / "m")
    assert followed.returncode == 0, followed.stderr
