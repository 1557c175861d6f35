"""Start-up of short commands, whole processes, median of --runs with a warm numba cache:

- `classify` and `eval` on 10 lines of data/mq2008-small/test.txt;
- `learn` on a 10-line file (one query of data/mq2008-small/train.txt with three grades): `pairs`,
  `errorrate` and `map`;
- with ../shared: `learn -l pairs -c 1 -e 0.0001` on MQ2008 S1 (svm_rank's reference case; training time as
  the log prints it), `classify` and `eval` of S5 — beside svm_rank_learn, svm_rank_classify and trec_eval on
  the same files when $ANCHOR_BIN holds them (trec_eval on the qrels and a TREC run of the same scores).
`python -c pass` and `python -c "import numpy"` are the floor. Targets: learn 10 lines <= 0.5 s, eval of S5
<= 0.3 s, S1 whole process <= svm_rank's + 0.3 s and training time <= svm_rank's.
Each command runs as its own process (SVMSTRUCT_RESIDENT=0) and, in a second column, as a Makefile's recipe runs
it (MAKEFLAGS set): through a running resident worker (svmstruct.worker.resident, a private socket directory).
Usage: python scripts/bench_startup.py [--runs 5] [--shared ../shared]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from svmstruct.worker import control

ROOT = Path(__file__).resolve().parents[1]
SVM = str(Path(sys.executable).parent / "svmstruct")


OWN = {**os.environ, "SVMSTRUCT_RESIDENT": "0"}
RESIDENT = dict(OWN)  # main() points it at a running server


def wall(cmd: list, runs: int, env: dict = OWN) -> float:
    return statistics.median(timed(cmd, env)[0] for _ in range(runs))


def both(cmd: list, runs: int) -> tuple[float, float]:
    """(median wall as its own process, through the resident worker)."""
    return wall(cmd, runs), wall(cmd, runs, RESIDENT)


def timed(cmd: list, env: dict = OWN) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    return time.perf_counter() - start, done.stdout


def start_resident(folder: str) -> None:
    RESIDENT.pop("SVMSTRUCT_RESIDENT")  # as a Makefile's recipes run: make sets MAKEFLAGS, the worker serves
    RESIDENT.update(MAKEFLAGS=RESIDENT.get("MAKEFLAGS", ""), MAKELEVEL=RESIDENT.get("MAKELEVEL", "1"),
                    SVMSTRUCT_RESIDENT_DIR=folder)
    timed([SVM, "--version"], RESIDENT)
    deadline = time.monotonic() + 60
    while not list(Path(folder).glob("*.sock")):
        if time.monotonic() > deadline:
            sys.exit("the resident worker did not start")
        time.sleep(0.05)


def training_seconds(cmd: list, runs: int, env: dict = OWN) -> tuple[float, float]:
    """(median wall, median of the training time the log prints: ours 'Runtime in seconds', svm_rank's
    'Runtime in cpu-seconds')."""
    walls, trains = [], []
    for _ in range(runs):
        seconds, out = timed(cmd, env)
        walls.append(seconds)
        trains.append(float(re.findall(r"Runtime in (?:cpu-)?seconds: ([0-9.]+)", out)[0]))
    return statistics.median(walls), statistics.median(trains)


def trec_files(test: str, scores: str, folder: str) -> tuple:
    """qrels and a TREC run of SCORES (one per line of TEST, its docids in the comments) for trec_eval."""
    qrels, run = [], []
    for line, score in zip(Path(test).read_text().splitlines(), Path(scores).read_text().split()):
        label, qid = line.split()[0], line.split()[1].split(":")[1]
        docid = line.split("docid = ")[1].split()[0]
        qrels.append(f"{qid} 0 {docid} {int(float(label))}\n")
        run.append(f"{qid} Q0 {docid} 0 {score} svmstruct\n")
    Path(f"{folder}/qrels").write_text("".join(qrels))
    Path(f"{folder}/run").write_text("".join(run))
    return f"{folder}/qrels", f"{folder}/run"


def ten_graded_lines(train: Path) -> bytes:
    """The first 10 lines of the first query of `train` whose first 10 lines have three grades."""
    queries: dict = {}
    for line in train.read_bytes().splitlines(keepends=True):
        queries.setdefault(line.split()[1], []).append(line)
    for lines in queries.values():
        if len({line.split()[0] for line in lines[:10]}) == 3:
            return b"".join(lines[:10])
    raise SystemExit(f"no query of {train} has three grades in its first 10 lines")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = parser.parse_args()
    data, mq2008 = ROOT / "data" / "mq2008-small", Path(args.shared) / "data" / "mq2008"
    rows = []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(prefix="svmr") as sockets:
        test, model, scores = f"{tmp}/t10.txt", f"{tmp}/map.model", f"{tmp}/t10.pred"
        Path(test).write_bytes(b"".join((data / "test.txt").read_bytes().splitlines(keepends=True)[:10]))
        timed([SVM, "learn", "-l", "map", "-c", "10", "-v", "0", str(data / "train.txt"), model])
        timed([SVM, "classify", "-v", "0", test, model, scores])  # warm the cache
        start_resident(sockets)
        rows.append(("python -c pass", wall([sys.executable, "-c", "pass"], args.runs), None, ""))
        rows.append(("python -c 'import numpy'", wall([sys.executable, "-c", "import numpy"], args.runs), None, ""))
        rows.append(("classify 10 lines", *both([SVM, "classify", test, model], args.runs), ""))
        rows.append(("eval -m map 10 lines", *both([SVM, "eval", "-m", "map", test, scores], args.runs), ""))
        graded = f"{tmp}/graded10.txt"
        Path(graded).write_bytes(ten_graded_lines(data / "train.txt"))
        for loss in ("pairs", "errorrate", "map"):
            seconds = both([SVM, "learn", "-l", loss, "-v", "0", graded, f"{tmp}/g.model"], args.runs)
            rows.append((f"learn -l {loss} 10 lines", *seconds, "target <= 0.5 s"))
        if mq2008.is_dir():
            s1, s5 = str(mq2008 / "S1.txt"), str(mq2008 / "S5.txt")
            learn = [SVM, "learn", "-l", "pairs", "-c", "1", "-e", "0.0001", s1, f"{tmp}/s1.model"]
            ours, train = training_seconds(learn, args.runs)
            through, through_train = training_seconds(learn, args.runs, RESIDENT)
            rank = Path(os.environ.get("ANCHOR_BIN", "/nonexistent")) / "svm_rank_learn"
            note = f"training {train:.2f} s / {through_train:.2f} s"
            if rank.exists():
                theirs, their_train = training_seconds([str(rank), "-c", "1", "-e", "0.0001", s1, f"{tmp}/r.model"],
                                                       args.runs)
                note += f"; svm_rank_learn {theirs:.3f} s, training {their_train:.2f} cpu-s (+{ours - theirs:.2f} s)"
            rows.append(("learn -l pairs -c 1 -e 0.0001 MQ2008 S1", ours, through, note))
            s5_scores = f"{tmp}/s5.pred"
            classify = both([SVM, "classify", s5, f"{tmp}/s1.model", s5_scores], args.runs)
            note = ""
            if (rank.parent / "svm_rank_classify").exists() and rank.exists():
                anchor = wall([str(rank.parent / "svm_rank_classify"), s5, f"{tmp}/r.model", f"{tmp}/r.pred"],
                              args.runs)
                note = f"svm_rank_classify {anchor:.3f} s"
            rows.append(("classify MQ2008 S5", *classify, note))
            evaluate = both([SVM, "eval", "-m", "map", "-m", "ndcg@10", s5, s5_scores], args.runs)
            note = "target <= 0.3 s"
            if (rank.parent / "trec_eval").exists():
                qrels, run = trec_files(s5, s5_scores, tmp)
                anchor = wall([str(rank.parent / "trec_eval"), "-m", "map", "-m", "ndcg_cut.10", qrels, run], args.runs)
                note += f"; trec_eval {anchor:.3f} s (the same scores as a TREC run)"
            rows.append(("eval -m map -m ndcg@10 MQ2008 S5", *evaluate, note))
        control.stop_servers(sockets, every=True)
    print(f"median of {args.runs} whole-process runs, warm numba cache; seconds as its own process and through "
          f"the resident worker")
    print(f"{'command':<42} {'own':>8} {'resident':>8}")
    for name, seconds, through, note in rows:
        shown = "" if through is None else f"{through:8.3f}"
        print(f"{name:<42} {seconds:8.3f} {shown:>8}   {note}".rstrip())

if __name__ == "__main__":
    main()
