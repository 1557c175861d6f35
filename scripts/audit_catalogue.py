"""A catalogue of bad inputs, run as a user runs them, through the resident worker and in the command's own process.

Each case is a shell command line in a fresh folder holding a copy of the shipped MQ2008 sample, a model, its
predictions, and damaged files; it either must succeed or must fail. Every run is sorted into one class:
- traceback: a Python traceback on stderr (anything escaping the CLI is a bug);
- silent wrong output: exit 0 where the case must fail, or an error where it must succeed;
- lost or replaced file: a file of the folder that the case must leave alone changed or went away;
- not one line: a failure whose stderr is not exactly one `svmstruct: error:` line (warnings aside);
- different ways: the worker's exit status, stdout or stderr differ from the own process's;
- ok.
Usage: python scripts/audit_catalogue.py [--only SUBSTRING]; prints the classes' counts and every case not ok.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "data" / "mq2008-small"
SVM = str(Path(sys.executable).with_name("svmstruct"))

FAIL, OK = "fail", "ok"


def _has_dask() -> bool:
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


# (name, shell command with $SVM, must fail or succeed); files named in KEEP must not change
CASES = [
    ("learn: missing file", "$SVM learn -v 0 nothing.txt m.out", FAIL),
    ("learn: a directory", "$SVM learn -v 0 . m.out", FAIL),
    ("learn: empty file", "$SVM learn -v 0 empty.txt m.out", FAIL),
    ("learn: binary file", "$SVM learn -v 0 binary.txt m.out", FAIL),
    ("learn: escapes in a token", "$SVM learn -v 0 escape.txt m.out", FAIL),
    ("learn: nan feature", "$SVM learn -v 0 nan.txt m.out", FAIL),
    ("learn: index 0", "$SVM learn -v 0 zero-index.txt m.out", FAIL),
    ("learn: decreasing indices", "$SVM learn -v 0 decreasing.txt m.out", FAIL),
    ("learn: qid on some lines", "$SVM learn -v 0 mixed-qid.txt m.out", FAIL),
    ("learn: a query that comes back", "$SVM learn -v 0 -l map back.txt m.out", FAIL),
    ("learn: output is the input", "$SVM learn -v 0 train.txt train.txt", FAIL),
    ("learn: output is stdin's file", "$SVM learn -v 0 - train.txt < train.txt", FAIL),
    ("learn: output in no directory", "$SVM learn -v 0 train.txt nodir/m.out", FAIL),
    ("learn: output ends with /", "$SVM learn -v 0 train.txt newdir/", FAIL),
    ("learn: output is a directory", "$SVM learn -v 0 train.txt sub", FAIL),
    ("learn: checkpoint is a notes file", "$SVM learn -v 0 -l map --checkpoint notes.txt train.txt m.out", FAIL),
    ("learn: resume from a .npy", "$SVM learn -v 0 -l map --checkpoint array.npy --resume train.txt m.out", FAIL),
    ("learn: resume without a file", "$SVM learn -v 0 -l map --checkpoint none.ckpt --resume train.txt m.out", FAIL),
    ("learn: checkpoint is a directory", "$SVM learn -v 0 -l map --checkpoint sub train.txt m.out", FAIL),
    ("learn: -c nan", "$SVM learn -v 0 -c nan train.txt m.out", FAIL),
    ("learn: -c 0", "$SVM learn -v 0 -c 0 train.txt m.out", FAIL),
    ("learn: -e inf", "$SVM learn -v 0 -e inf train.txt m.out", FAIL),
    ("learn: -k huge", "$SVM learn -v 0 -l ndcg@10 -k 99999999999999999999 train.txt m.out", FAIL),
    ("learn: unknown loss", "$SVM learn -v 0 -l nonsense train.txt m.out", FAIL),
    ("learn: option of another loss", "$SVM learn -v 0 -l map --beta 2 train.txt m.out", FAIL),
    ("learn: --df-thresholds nan", "$SVM learn -v 0 -l div --df-thresholds 0,nan --subtopics div.qrels div.svm m.out",
     FAIL),
    ("learn: -t 1 -d huge", "$SVM learn -v 0 -l map -t 1 -d 100000 -s 10 train.txt m.out", FAIL),
    ("learn: --k above the data", "$SVM learn -v 0 -l map -t 2 --k 5000 train.txt m.out", FAIL),
    ("learn: -t 2 default --k on 300 lines", "$SVM learn -v 0 -l map -t 2 -g 0.1 t300.txt m.out", OK),
    ("learn: labels 1023", "$SVM learn -v 0 -l ndcg@10 -c 10 big-labels.txt m.out", OK),
    ("learn: labels 2000", "$SVM learn -v 0 -l ndcg@10 huge-labels.txt m.out", FAIL),
    ("learn: closed stdin", "$SVM learn -v 0 - m.out <&-", FAIL),
    ("learn: closed stdout", "$SVM learn -v 0 train.txt - >&-", FAIL),
    ("learn: full stdout", "$SVM learn -v 0 train.txt - > /dev/full", FAIL),
    ("learn: process substitution", "$SVM learn -v 0 <(cat train.txt) m.out", OK),
    ("learn: gzip through a pipe", "$SVM learn -v 0 <(gzip -c train.txt) m.out", OK),
    ("learn: /dev/fd/4 output", "$SVM learn -v 0 train.txt /dev/fd/4 4> m.out", OK),
    ("classify: missing model", "$SVM classify test.txt nothing.model", FAIL),
    ("classify: model cut mid-number", "$SVM classify test.txt cut.model", FAIL),
    ("classify: svm_light model cut", "$SVM classify test.txt cut.svl", FAIL),
    ("classify: model without threshold", "$SVM classify test.txt nothreshold.model", FAIL),
    ("classify: weights 1e308", "$SVM classify test.txt huge.model", FAIL),
    ("classify: svm_light 1e300 values", "$SVM classify test.txt overflow.svl", FAIL),
    ("classify: not a model", "$SVM classify test.txt notes.txt", FAIL),
    ("classify: the data as model", "$SVM classify test.txt train.txt", FAIL),
    ("classify: output is the test file", "$SVM classify test.txt model test.txt", FAIL),
    ("classify: output is the model", "$SVM classify test.txt model model", FAIL),
    ("classify: output is stdin's file", "$SVM classify - model test.txt < test.txt", FAIL),
    ("classify: closed stdin as model", "$SVM classify test.txt - <&-", FAIL),
    ("classify: both from stdin", "$SVM classify - - < test.txt", FAIL),
    ("classify: binary test file", "$SVM classify binary.txt model", FAIL),
    ("classify: /dev/fd/4 output", "$SVM classify test.txt model /dev/fd/4 4> p.out", OK),
    ("classify: hashed ids svm_light export", "$SVM classify hashed.txt hashed.svl", OK),
    ("eval: predictions as test", "$SVM eval pred pred", FAIL),
    ("eval: too few predictions", "$SVM eval test.txt short.pred", FAIL),
    ("eval: nan prediction", "$SVM eval test.txt nan.pred", FAIL),
    ("eval: unknown measure", "$SVM eval -m nonsense test.txt pred", FAIL),
    ("eval: huge cutoff", "$SVM eval -m ndcg@99999999999999999999 test.txt pred", FAIL),
    ("eval: huge P cutoff", "$SVM eval -m P_9223372036854775808 test.txt pred", FAIL),
    ("eval: labels 1023", "$SVM eval -m ndcg@10 big-labels.txt big.pred", OK),
    ("eval: trec_eval's dotted names", "$SVM eval -m P.10 -m ndcg_cut.10 test.txt pred", OK),
    ("eval: process substitution", "$SVM eval -m map <(cat test.txt) <(cat pred)", OK),
    ("eval: both from stdin", "$SVM eval - - < test.txt", FAIL),
    ("eval: write-qrels over the test file", "$SVM eval --write-qrels test.txt test.txt pred", FAIL),
    ("qrels: binary file", "$SVM qrels binary.txt", FAIL),
    ("worker: unknown subcommand", "$SVM worker nonsense", FAIL),
    ("worker: idle time '60s'", "SVMSTRUCT_RESIDENT_IDLE=60s $SVM eval -m map test.txt pred", OK),
    ("worker: idle time nan", "SVMSTRUCT_RESIDENT_IDLE=nan $SVM eval -m map test.txt pred", OK),
    ("learn: -l ''", "$SVM learn -v 0 -l '' train.txt m.out", FAIL),
    ("learn: resume a compressed checkpoint", "$SVM learn -v 0 -l map -c 100 --checkpoint bomb.ckpt --resume train.txt "
     "m.out", FAIL),
    ("learn: over a compressed checkpoint", "$SVM learn -v 0 -l map -c 100 --checkpoint bomb.ckpt train.txt m.out",
     FAIL),
    ("learn: resume a nested signature", "$SVM learn -v 0 -l map -c 100 --checkpoint deep.ckpt --resume train.txt "
     "m.out", FAIL),
    ("classify: a model naming a module beside it", "PYTHONPATH=. $SVM classify mc.svm evil.model", FAIL),
    ("classify: the same with python -m", "PYTHONPATH=. $PY -m svmstruct classify mc.svm evil.model", FAIL),
    ("classify: a model naming this:X", "$SVM classify mc.svm this.model", FAIL),
    ("classify: a model naming venv.__main__:X", "$SVM classify mc.svm venv.model", FAIL),
    ("classify: a model naming .x:Y", "$SVM classify mc.svm relative.model", FAIL),
    ("classify: --problem not the model's", "PYTHONPATH=. $SVM classify --problem evil:X mc.svm mc.model", FAIL),
    ("classify: edited features of a problem", "$SVM classify mc.svm features.model", FAIL),
    ("classify: classes 2147483647", "$SVM classify mc.svm classes.model", FAIL),
    ("classify: /dev/stdout appended", "echo first > all.pred && $SVM classify test.txt model /dev/stdout >> all.pred "
     "&& head -1 all.pred | grep -qx first", OK),
    ("classify: /dev/stdout into a pipe", "set -o pipefail; $SVM classify test.txt model /dev/stdout | cat > /dev/null",
     OK),
    ("classify: /dev/fd/5 of a deleted file", "exec 5> x && rm x && $SVM classify test.txt model /dev/fd/5", OK),
    *([("classify: another user's link in a sticky folder", "$SVM classify test.txt model sticky/r.pred", FAIL),
       ("learn: another user's link in a sticky folder", "$SVM learn -v 0 train.txt sticky/r.pred", FAIL),
       ("classify: another user's file in a sticky folder", "$SVM classify test.txt model sticky/theirs.pred", FAIL),
       ("learn: another user's file in a sticky folder", "$SVM learn -v 0 train.txt sticky/theirs.pred", FAIL),
       ("classify: another user's FIFO in a sticky folder", "$SVM classify test.txt model sticky/f.pred", FAIL)]
      if os.geteuid() == 0 else []),
    ("classify: svm_multiclass classes 10 -> 9", "$SVM classify digits.test digits9.mc", FAIL),
    ("classify: svm_multiclass features 64 -> 63", "$SVM classify digits.test digits63.mc", FAIL),
    ("classify: svm_multiclass classes = features = 2^31-1", "$SVM classify digits.test digits-huge.mc", FAIL),
    ("classify: svm_hmm tags 26 -> 25", "$SVM classify letters.test letters25.hmm", FAIL),
    ("classify: svm_hmm 200 tags, --t 3", "$SVM classify letters.test letters200.hmm", FAIL),
    ("classify: a problem model of loss multiclass", "$SVM classify mc.svm short.model", OK),
    ("classify: a problem model of an unknown loss", "$SVM classify mc.svm unknown.model", FAIL),
    ("classify: a problem model with option.rescaling 5", "$SVM classify mc.svm rescaling.model", FAIL),
    ("eval: pairacc of one query of 50,000 documents", "$SVM eval -m pairacc long.txt long.pred", OK),
    *([("learn: --workers 2 on a missing file", "$SVM learn -v 0 -l pairs --workers 2 nothing.txt m.out", FAIL),
       ("learn: --workers 2 on a shard that does not parse", "$SVM learn -v 0 -l pairs --workers 2 nan.txt m.out",
        FAIL)] if _has_dask() else []),
]
FORBIDDEN = ["pwned.txt", "x (deleted)", "venv/pyvenv.cfg", "pyvenv.cfg"]  # what no case may create
KEEP = ["train.txt", "test.txt", "model", "pred", "notes.txt", "array.npy", "cut.model", "cut.svl", "nothreshold.model",
        "huge.model", "overflow.svl", "div.svm", "div.qrels", "hashed.svl", "bomb.ckpt", "deep.ckpt", "secret",
        "digits.mc", "letters.hmm", *(["sticky/theirs.pred"] if os.geteuid() == 0 else [])]


def prepare(folder: Path) -> None:
    """The shipped sample, a model and its predictions, and the damaged files the cases name."""
    train, test = (SMALL / "train.txt").read_text(), (SMALL / "test.txt").read_text()
    (folder / "train.txt").write_text(train)
    (folder / "test.txt").write_text(test)
    (folder / "t300.txt").write_text("".join(train.splitlines(True)[:300]))
    (folder / "sub").mkdir()
    (folder / "empty.txt").write_text("")
    (folder / "binary.txt").write_bytes(bytes(range(256)) * 4)
    (folder / "escape.txt").write_bytes(b"1 qid:1 1:\x1b[31mred\x07\n")
    (folder / "nan.txt").write_text("1 qid:1 1:nan\n0 qid:1 1:1\n")
    (folder / "zero-index.txt").write_text("1 qid:1 0:1\n0 qid:1 1:1\n")
    (folder / "decreasing.txt").write_text("1 qid:1 2:1 1:1\n0 qid:1 1:1\n")
    (folder / "mixed-qid.txt").write_text("1 qid:1 1:1\n0 1:2\n")
    (folder / "back.txt").write_text("1 qid:1 1:1\n0 qid:2 1:2\n0 qid:1 1:3\n")
    (folder / "notes.txt").write_text("notes\n")
    subprocess.run([sys.executable, "-c", f"import numpy; numpy.save({str(folder / 'array.npy')!r}, numpy.arange(3))"],
                   check=True)
    div = ROOT / "data" / "div" / "small"
    shutil.copy(f"{div}.svm", folder / "div.svm")
    shutil.copy(f"{div}.qrels", folder / "div.qrels")
    lines = test.splitlines()
    first = lines[0].split()[1]
    big = ["1023 " + line.split(" ", 1)[1] if line.split()[1] == first and i < 3 else line for i, line in
           enumerate(lines)]
    (folder / "big-labels.txt").write_text("\n".join(big) + "\n")
    (folder / "big.pred").write_text("".join(f"{i % 7}\n" for i in range(len(lines))))
    (folder / "huge-labels.txt").write_text(train.replace("2 qid", "2000 qid", 1))
    env = {**os.environ, "SVMSTRUCT_RESIDENT": "0"}
    for args in (["learn", "-l", "map", "-v", "0", "train.txt", "model"],
                 ["learn", "-l", "map", "-v", "0", "--format", "svmlight", "train.txt", "model.svl"],
                 ["classify", "test.txt", "model", "pred"]):
        subprocess.run([SVM, *args], cwd=folder, env=env, check=True)
    model = (folder / "model").read_text()
    (folder / "cut.model").write_text(model[:-3])
    (folder / "cut.svl").write_text((folder / "model.svl").read_text()[:-3])
    (folder / "nothreshold.model").write_text("".join(line for line in model.splitlines(True)
                                                      if not line.startswith("threshold")))
    (folder / "huge.model").write_text("".join(line.split()[0] + " 1e308\n" if line[0].isdigit() else line
                                               for line in model.splitlines(True)))
    (folder / "overflow.svl").write_text(
        "SVM-light Version V6.20\n0 # kernel type\n3 # -d\n1 # -g\n1 # -s\n1 # -r\nempty# -u\n5 # highest feature "
        "index\n2 # training documents\n2 # number of support vectors plus 1\n0 # threshold b\n1e300 1:1e300 #\n")
    pred = (folder / "pred").read_text().splitlines()
    (folder / "short.pred").write_text("\n".join(pred[:-1]) + "\n")
    (folder / "nan.pred").write_text("\n".join(["nan", *pred[1:]]) + "\n")
    (folder / "hashed.txt").write_text("1 qid:1 5:1 10000000:1 2147483647:0.5\n0 qid:1 7:1 10000000:0.2\n"
                                       "1 qid:2 5:0.5 2147483647:1\n0 qid:2 10000000:1\n")
    subprocess.run([SVM, "learn", "-l", "errorrate", "-v", "0", "--format", "svmlight", "hashed.txt", "hashed.svl"],
                   cwd=folder, env=env, check=True)
    prepare_trust(folder, env)


def prepare_trust(folder: Path, env: dict) -> None:
    """The files of the trust cases: problem models that name modules or lie about their options, checkpoints
    crafted to cost memory, another user's link in a sticky folder (as root)."""
    import numpy as np

    (folder / "mc.svm").write_text("".join(f"{1 + i % 3} 1:{i % 5} 2:{(i * 7) % 3} 3:{i % 2}\n" for i in range(60)))
    subprocess.run([SVM, "learn", "--problem", "multiclass", "-c", "10", "-v", "0", "mc.svm", "mc.model"], cwd=folder,
                   env=env, check=True)
    text = (folder / "mc.model").read_text()
    loss = next(line for line in text.splitlines() if line.startswith("loss "))
    for name, spec in (("evil", "evil:X"), ("this", "this:X"), ("venv", "venv.__main__:X"), ("relative", ".x:Y")):
        (folder / f"{name}.model").write_text(text.replace(loss, f"loss {spec}"))
    (folder / "evil.py").write_text("import os\nos.system('id > pwned.txt')\nclass X:\n    pass\n")
    (folder / "features.model").write_text(text.replace("option.features 3", "option.features 2"))
    (folder / "classes.model").write_text(text.replace("option.classes 3", "option.classes 2147483647"))
    subprocess.run([SVM, "learn", "-l", "map", "-c", "100", "-#", "3", "--checkpoint", "run.ckpt", "-v", "0",
                    "train.txt", "stopped.model"], cwd=folder, env=env, check=True, capture_output=True)
    with np.load(folder / "run.ckpt") as saved:
        state = {key: saved[key] for key in saved.files}
    with open(folder / "bomb.ckpt", "wb") as f:
        np.savez_compressed(f, **{**state, "A": np.zeros((1_000_000, state["A"].shape[1]))})
    with open(folder / "deep.ckpt", "wb") as f:
        np.savez(f, **{**state, "signature": np.asarray("[" * 100_000 + "]" * 100_000)})
    (folder / "secret").write_text("root's\n")
    (folder / "secret").chmod(0o600)
    if os.geteuid() == 0:
        (folder / "sticky").mkdir()
        (folder / "sticky").chmod(0o1777)
        os.symlink("../secret", folder / "sticky" / "r.pred")
        (folder / "sticky" / "theirs.pred").write_text("theirs\n")
    prepare_models(folder, env, text)


def prepare_models(folder: Path, env: dict, problem_model: str) -> None:
    """The originals' model files with edited headers, problem models with an edited loss or option, and one query
    of 50,000 documents with its predictions."""
    import numpy as np

    struct = ROOT / "data" / "struct"
    shutil.copy(struct / "digits.test.svm", folder / "digits.test")
    shutil.copy(struct / "letters.test.hmm", folder / "letters.test")
    for problem, train, out, extra in (("multiclass", "digits.train.svm", "digits.mc", ["-c", "100"]),
                                       ("hmm", "letters.train.hmm", "letters.hmm", ["-c", "10", "--t", "2"])):
        subprocess.run([SVM, "learn", "--problem", problem, *extra, "--format", f"svm_{problem}", "-v", "0",
                        struct / train, out], cwd=folder, env=env, check=True)
    for source, name, edits in (
            ("digits.mc", "digits9.mc", {1: "9 # number of classes"}),
            ("digits.mc", "digits63.mc", {2: "63 # number of base features"}),
            ("digits.mc", "digits-huge.mc", {1: "2147483647 # number of classes", 2: "2147483647 # features"}),
            ("letters.hmm", "letters25.hmm", {9: "25 # number of classes"}),
            ("letters.hmm", "letters200.hmm", {9: "200 # number of classes", 10: "3 # HMM order of transitions"})):
        lines = (folder / source).read_text().split("\n")
        for at, line in edits.items():
            lines[at] = line
        (folder / name).write_text("\n".join(lines))
    loss = next(line for line in problem_model.splitlines() if line.startswith("loss "))
    (folder / "short.model").write_text(problem_model.replace(loss, "loss multiclass"))
    (folder / "unknown.model").write_text(problem_model.replace(loss, "loss nonsense"))
    (folder / "rescaling.model").write_text(problem_model.replace("option.rescaling 2", "option.rescaling 5"))
    rng = np.random.default_rng(0)
    labels, scores = rng.integers(0, 3, 50_000), rng.normal(size=50_000)
    (folder / "long.txt").write_text("".join(f"{y} qid:1 1:{s:.3f}\n" for y, s in zip(labels, scores)))
    (folder / "long.pred").write_text("".join(f"{s:.6f}\n" for s in scores + labels))


def plant(folder: Path) -> None:
    """The link, file and FIFO in the sticky folder belong to another user (a copy of the folder makes the link and
    the file root's again; the FIFO is made here, as a copy would read it)."""
    if (folder / "sticky").exists():
        os.lchown(folder / "sticky" / "r.pred", 54321, 54321)
        os.chown(folder / "sticky" / "theirs.pred", 54321, 54321)
        (folder / "sticky" / "theirs.pred").chmod(0o666)
        if not (folder / "sticky" / "f.pred").exists():
            os.mkfifo(folder / "sticky" / "f.pred", 0o666)
        os.chown(folder / "sticky" / "f.pred", 54321, 54321)


def snapshot(folder: Path) -> dict:
    return {name: (folder / name).read_bytes() for name in KEEP}


def run_case(folder: Path, command: str, through: bool) -> tuple:
    env = {**os.environ, "SVMSTRUCT_RESIDENT": "1" if through else "0"}
    done = subprocess.run(["bash", "-c", command.replace("$SVM", SVM).replace("$PY", sys.executable)], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=600)
    about_the_worker = "svmstruct: warning: SVMSTRUCT_RESIDENT"  # said only where the worker would serve
    return done.returncode, done.stdout, "".join(line for line in done.stderr.splitlines(True)
                                                 if not line.startswith(about_the_worker))


def classify(result: tuple, expected: str, kept: bool) -> str:
    code, _, err = result
    errors = [line for line in err.strip().splitlines() if not line.startswith("svmstruct: warning:")]
    if "Traceback" in err:
        return "traceback"
    if (code == 0) != (expected == OK):
        return "silent wrong output"
    if not kept:
        return "lost or replaced file"
    if code != 0 and not (len(errors) == 1 and errors[0].startswith(("svmstruct: error:", "usage: svmstruct"))):
        return "not one line"
    return "ok"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    counts: dict = {}
    bad = []
    with tempfile.TemporaryDirectory(prefix="svmaudit") as sockets, tempfile.TemporaryDirectory() as template:
        os.environ.update(SVMSTRUCT_RESIDENT_DIR=sockets)
        prepare(Path(template))
        run_case(Path(template), "$SVM --version > /dev/null; sleep 2", True)  # a running server: cases are served
        cases = [case for case in CASES if args.only in case[0]]
        for name, command, expected in cases:
            results = {}
            for through in (True, False):
                with tempfile.TemporaryDirectory() as tmp:
                    folder = Path(tmp) / "case"
                    shutil.copytree(template, folder, symlinks=True)
                    plant(folder)
                    before = snapshot(folder)
                    results[through] = run_case(folder, command, through)
                    kept = all((folder / n).exists() and (folder / n).read_bytes() == data for n, data in
                               before.items()) and not any((folder / n).exists() for n in FORBIDDEN)
                    label = classify(results[through], expected, kept)
                way = "worker" if through else "own process"
                counts[(way, label)] = counts.get((way, label), 0) + 1
                if label != "ok":
                    bad.append(f"{way:<11} {label:<22} {name}: exit {results[through][0]}, "
                               f"{results[through][2].strip()[:160]!r}")
            if results[True] != results[False]:
                counts[("both", "different ways")] = counts.get(("both", "different ways"), 0) + 1
                bad.append(f"{'both':<11} {'different ways':<22} {name}: {results[True][0]} / {results[False][0]}")
        from svmstruct.worker import control

        control.stop_servers(sockets, every=True)
    print(f"{len(cases)} cases, each through the resident worker and in its own process")
    for (way, label), n in sorted(counts.items()):
        print(f"  {way:<11} {label:<22} {n}")
    for line in bad:
        print(line)


if __name__ == "__main__":
    main()
