"""Lone commands against the interpreter's floor and the C programs they replace, whole processes, in one run.

Every row is a command run as its own process (SVMSTRUCT_RESIDENT=0), median wall time of --runs and its peak
resident memory, beside `python -c "import numpy"` (the floor: no command can start faster), numba's floor (import
it, run one cached kernel: what any command that runs a kernel pays at least) and, where $ANCHOR_BIN
holds it, the original program on the same files (trec_eval on the qrels and a TREC run of the same scores,
svm_rank_learn and svm_rank_classify):
- `--help`, `losses` (target: <= 1.5x the floor);
- `eval -m map -m ndcg@10` on 500 lines (<= 2x the floor, <= 60 MB), `classify` of a linear model on them
  (<= 4x the floor, <= 130 MB), `learn -l pairs -c 1` on data/mq2008-small (<= 6x the floor);
- the same eval and classify through a running resident worker (as inside make);
- where the small-input twins give way to numba's kernels (svmstruct.compute.paths): eval and classify of MQ2008
  files of growing size, each way (SVMSTRUCT_PATH=twin|kernel) beside the automatic choice.
Usage: python scripts/bench_startup.py [--runs 5] [--shared ../shared]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from svmstruct.worker import control

import served

ROOT = Path(__file__).resolve().parents[1]
SVM = str(Path(sys.executable).parent / "svmstruct")
OWN = {**os.environ, "SVMSTRUCT_RESIDENT": "0"}
OWN.pop("SVMSTRUCT_PATH", None)


# numba imported and one kernel run from the cache (numba's CPU target and typing registries load with the first
# kernel: scipy.linalg among them, for numba's BLAS check); the process ends as a command's does, without the
# interpreter's teardown (svmstruct.__main__._leave)
NUMBA_FLOOR = ("from svmstruct.io import float_text; float_text.read_id_value_lines(['1 0.5']); "
               "import os; os._exit(0)")


def run(cmd: list, env: dict) -> tuple:
    """(wall seconds, peak resident KB) of one process."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        child = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        error = child.stderr.read().decode(errors="replace")
        child.stderr.close()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"failed ({child.returncode}): {' '.join(cmd)}\n{error}")
    return seconds, usage.ru_maxrss


def measured(cmd: list, runs: int, env: dict = OWN) -> tuple:
    """(median wall, largest peak MB) of RUNS processes."""
    results = [run(cmd, env) for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results) / 1024


def trec_files(test: str, scores: str, folder: str) -> tuple:
    """qrels and a TREC run of SCORES (one per line of TEST, its docids in the comments) for trec_eval."""
    qrels, run_lines = [], []
    for line, score in zip(Path(test).read_text().splitlines(), Path(scores).read_text().split()):
        label, qid = line.split()[0], line.split()[1].split(":")[1]
        docid = line.split("docid = ")[1].split()[0]
        qrels.append(f"{qid} 0 {docid} {int(float(label))}\n")
        run_lines.append(f"{qid} Q0 {docid} 0 {score} svmstruct\n")
    Path(f"{folder}/qrels").write_text("".join(qrels))
    Path(f"{folder}/run").write_text("".join(run_lines))
    return f"{folder}/qrels", f"{folder}/run"


def start_resident(folder: str) -> dict:
    """The environment of a Makefile's recipe, with a resident worker running in FOLDER."""
    env = {**OWN, "MAKEFLAGS": "", "MAKELEVEL": "1"}
    env.pop("SVMSTRUCT_RESIDENT")
    return served.resident_worker(SVM, folder, env)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = parser.parse_args()
    anchor = Path(os.environ.get("ANCHOR_BIN") or "/nonexistent")
    small, mq2008 = ROOT / "data" / "mq2008-small", Path(args.shared) / "data" / "mq2008"
    rows: list = []  # (command, seconds, MB, target ratio or None, target MB or None, the original's, note)
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(prefix="svmr") as sockets:
        test, model, scores = f"{tmp}/t500.txt", f"{tmp}/pairs.model", f"{tmp}/t500.pred"
        Path(test).write_bytes(b"".join((small / "test.txt").read_bytes().splitlines(keepends=True)[:500]))
        run([SVM, "learn", "-l", "pairs", "-c", "1", "-v", "0", str(small / "train.txt"), model], OWN)
        run([SVM, "classify", test, model, scores], OWN)
        floor = measured([sys.executable, "-c", "import numpy"], args.runs)
        numba_floor = measured([sys.executable, "-c", NUMBA_FLOOR], args.runs)
        qrels, trec_run = trec_files(test, scores, tmp)
        originals = {
            "eval": [str(anchor / "trec_eval"), "-m", "map", "-m", "ndcg_cut.10", qrels, trec_run],
            "classify": [str(anchor / "svm_rank_classify"), test, f"{tmp}/rank.model", f"{tmp}/rank.pred"],
            "learn": [str(anchor / "svm_rank_learn"), "-c", "1", str(small / "train.txt"), f"{tmp}/rank.model"],
        }
        theirs = {}
        for name in ("learn", "classify", "eval"):  # learn first: classify reads its model
            if Path(originals[name][0]).exists():
                theirs[name] = measured(originals[name], args.runs)
        commands = [
            ("--help", [SVM, "--help"], 1.5, None, None),
            ("losses", [SVM, "losses"], 1.5, None, None),
            ("eval -m map -m ndcg@10, 500 lines", [SVM, "eval", "-m", "map", "-m", "ndcg@10", test, scores], 2.0, 60,
             "eval"),
            ("classify, linear model, 500 lines", [SVM, "classify", test, model, f"{tmp}/out.pred"], 4.0, 130,
             "classify"),
            ("learn -l pairs -c 1, mq2008-small", [SVM, "learn", "-l", "pairs", "-c", "1", "-v", "0",
                                                   str(small / "train.txt"), f"{tmp}/m"], 6.0, None, "learn"),
        ]
        for name, cmd, ratio, megabytes, original in commands:
            rows.append((name, *measured(cmd, args.runs), ratio, megabytes, theirs.get(original), ""))
        resident = start_resident(sockets)
        for name, cmd, *_ in commands[2:4]:
            rows.append((f"{name}, through the worker", *measured(cmd, args.runs, resident), None, None, None, ""))
        control.stop_servers(sockets, every=True)
        switch = _switch_rows(mq2008, tmp, args.runs) if mq2008.is_dir() else []
    print(f"median wall of {args.runs} runs (s) and peak memory (MB), each command its own process; the floor is "
          f"python -c 'import numpy': {floor[0]:.3f} s, {floor[1]:.0f} MB")
    print(f"numba's floor, one cached kernel run (any command that runs one pays it): {numba_floor[0]:.3f} s "
          f"({numba_floor[0] / floor[0]:.2f}x), {numba_floor[1]:.0f} MB")
    print(f"{'command':<48} {'s':>6} {'x floor':>8} {'MB':>5}  {'target':<18} {'the original':<20}")
    for name, seconds, megabytes, ratio, most, original, _ in rows:
        target = " ".join(filter(None, [f"<= {ratio:g}x" if ratio else "", f"<= {most} MB" if most else ""]))
        met = "" if not target else " met" if (not ratio or seconds <= ratio * floor[0]) and \
            (not most or megabytes <= most) else " MISSED"
        theirs_text = f"{original[0]:.3f} s {original[1]:.0f} MB" if original else ""
        print(f"{name:<48} {seconds:6.3f} {seconds / floor[0]:8.2f} {megabytes:5.0f}  {target + met:<18} "
              f"{theirs_text:<20}")
    if switch:
        print("\nwhere the twins give way to the kernels (compute.paths): MQ2008 files of growing size, s (MB)")
        print(f"{'input':<34} {'twin':>13} {'kernel':>13} {'chosen':>13}")
        for name, *cells in switch:
            print(f"{name:<34} " + " ".join(f"{s:6.3f} ({mb:3.0f})" for s, mb in cells))


def _switch_rows(mq2008: Path, tmp: str, runs: int) -> list:
    """eval and classify of the first 1,000 to 60,000 lines of MQ2008 (S1..S5), each way and as chosen."""
    lines = b"".join((mq2008 / f"S{k}.txt").read_bytes() for k in range(1, 6)).splitlines(keepends=True)
    model = f"{tmp}/switch.model"
    run([SVM, "learn", "-l", "pairs", "-c", "1", "-v", "0", str(mq2008 / "S1.txt"), model], OWN)
    out = []
    for count in (1000, 2500, 5000, 15000, 60000):
        if count > len(lines):
            break
        data, scores = f"{tmp}/n{count}.txt", f"{tmp}/n{count}.pred"
        Path(data).write_bytes(b"".join(lines[:count]))
        size = os.path.getsize(data) / 2**20
        run([SVM, "classify", data, model, scores], OWN)
        for name, cmd in ((f"eval, {count} lines ({size:.1f} MB)", [SVM, "eval", "-m", "map", data, scores]),
                          (f"classify, {count} lines", [SVM, "classify", data, model, f"{tmp}/o.pred"])):
            cells = [measured(cmd, runs, {**OWN, "SVMSTRUCT_PATH": way}) for way in ("twin", "kernel")]
            out.append((name, *cells, measured(cmd, runs)))
    return out


if __name__ == "__main__":
    main()
