"""The large case: 1.2M documents, 10,000 queries, 136 dense features (1.7 GB of text, generated once
with ../shared/tools/make_synthetic_ltr.py OUT 10000).

1. The reader's kernels on one 4 MB chunk of the file (one core, output arrays already in memory, best of 15):
   the count pass and the parse pass (dense and CSR) in MB/s.
2. The whole reader (svmstruct.data.read_svmlight, layout auto) on the whole file with 1 and 2 threads, each in
   a fresh process (median of --runs): wall, user and system CPU seconds, MB/s, and the speed-up 1 -> 2.
3. `svmstruct learn -l pairs -c 1 FILE MODEL` with default options, whole process under /usr/bin/time -v
   (median wall of --runs, highest peak), against svm_rank on the same file as measured once
   (65.8 s, 1.54 GB; svm_rank is not on this machine). Target: <= 16 s and <= 1.54 GB.
4. Held out: trained on the first 1,000,000 lines, NDCG@10 and MAP on the other 200,000 against random scores.
Usage: python scripts/bench_big.py [--shared ../shared] [--file exp/big/synth.txt] [--runs 3]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from experiment import synthetic_ltr, time_v  # noqa: E402

SVM_RANK = {"wall": 65.8, "peak_mb": 1.54 * 1024}  # svm_rank_learn on this file, measured once (not installed here)
TARGET_WALL = 16.0

READ = """
import json, resource, sys, time
from svmstruct.io import data
start = time.perf_counter()
data.read_svmlight(sys.argv[1], layout="auto")
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime}))
"""


def kernel_rates(path: Path) -> dict:
    """MB/s of the count and parse kernels on the file's first 4 MB of whole lines, one core, best of 15."""
    from svmstruct.io import svmlight_parser as parser

    with open(path, "rb") as f:
        head = f.read(4 << 20)
    buf = np.frombuffer(head[:head.rfind(b"\n") + 1], dtype=np.uint8)
    n = len(buf)

    def best(run) -> float:
        run()
        times = []
        for _ in range(15):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        return n / min(times) / 1e6

    rows, nnz, width, _ = parser.count_lines(buf, n)
    rates = {"count": best(lambda: parser.count_lines(buf, n))}
    per_row = [np.empty(rows), np.zeros(rows, np.int64), np.zeros(rows, np.bool_)] + \
        [np.zeros(rows, np.int64) for _ in range(3)]
    fallback = [np.empty(1 << 16, np.int64) for _ in range(3)]
    for layout, dense in (("parse dense", True), ("parse CSR", False)):
        arrays = (np.zeros((rows, width) if dense else (0, width)), np.zeros(rows + 1, np.int64),
                  np.empty(nnz, np.int32), np.empty(nnz), *per_row, *fallback)
        rates[layout] = best(lambda dense=dense, arrays=arrays: parser.parse_lines(buf, n, 0, 0, 0, 0, dense, True,
                                                                                   *arrays, 0))
    return rates


def whole_reader(path: Path, threads: int, runs: int) -> dict:
    results = []
    for _ in range(runs):
        env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
        out = subprocess.run([sys.executable, "-c", READ, str(path)], env=env, check=True, capture_output=True,
                             text=True).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
    middle = sorted(results, key=lambda r: r["wall"])[len(results) // 2]
    return middle


def learn(path: Path, runs: int) -> tuple[float, float, str]:
    walls, peaks, log = [], [], ""
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            log, wall, peak = time_v([str(Path(sys.executable).parent / "svmstruct"), "learn", "-l", "pairs", "-c",
                                      "1", str(path), f"{tmp}/big.model"])
            walls.append(wall)
            peaks.append(peak)
    return statistics.median(walls), max(peaks), log


def held_out(path: Path, train_lines: int = 1_000_000) -> dict:
    """Is the model good? Train on the file's first `train_lines` lines, score the rest (the last query may be
    split: its rows are ranked among themselves), NDCG@10 and MAP with `eval`, against random scores."""
    svm = str(Path(sys.executable).parent / "svmstruct")
    with tempfile.TemporaryDirectory() as tmp:
        train, test = f"{tmp}/train.txt", f"{tmp}/test.txt"
        with open(path, "rb") as source, open(train, "wb") as head, open(test, "wb") as tail:
            for number, line in enumerate(source):
                (head if number < train_lines else tail).write(line)
        subprocess.run([svm, "learn", "-v", "0", "-l", "pairs", "-c", "1", train, f"{tmp}/m"], check=True)
        subprocess.run([svm, "classify", "-v", "0", test, f"{tmp}/m", f"{tmp}/pred"], check=True)
        rows = sum(1 for _ in open(test, "rb"))
        np.savetxt(f"{tmp}/random", np.random.default_rng(0).random(rows), fmt="%.6f")
        found = {}
        for name in ("pred", "random"):
            out = subprocess.run([svm, "eval", "-m", "ndcg@10", "-m", "map", test, f"{tmp}/{name}"], check=True,
                                 capture_output=True, text=True).stdout
            found[name] = {m: float(v) for m, _, v in (line.split("\t") for line in out.splitlines())}
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--file", default=str(ROOT / "exp" / "big" / "synth.txt"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    path = Path(args.file)
    synthetic_ltr(path, 10000, Path(args.shared))
    size_mb = path.stat().st_size / 1e6

    print(f"{path}: {size_mb:.0f} MB")
    print("\nreader kernels, one core, 4 MB chunk, output in memory (best of 15):")
    for name, rate in kernel_rates(path).items():
        print(f"  {name:<12} {rate:7.0f} MB/s")

    print(f"\nwhole reader, fresh process (median of {args.runs}):")
    print(f"  {'threads':<8} {'wall s':>7} {'user s':>7} {'sys s':>7} {'MB/s':>7} {'MB/s/core':>10}")
    walls = {}
    for threads in (1, 2):
        r = whole_reader(path, threads, args.runs)
        walls[threads] = r["wall"]
        print(f"  {threads:<8} {r['wall']:7.2f} {r['user']:7.2f} {r['sys']:7.2f} {size_mb / r['wall']:7.0f} "
              f"{size_mb / r['wall'] / threads:10.0f}")
    print(f"  speed-up 1 -> 2 threads: {walls[1] / walls[2]:.2f}x")

    wall, peak, log = learn(path, args.runs)
    iterations = re.search(r"Number of iterations: (\d+)", log)
    print(f"\nlearn -l pairs -c 1, default options, whole process (median wall of {args.runs}, highest peak):")
    print(f"  {'':<10} {'svm_rank':>9} {'svmstruct':>10} {'ratio':>6} {'target':>7}")
    print(f"  {'wall s':<10} {SVM_RANK['wall']:9.1f} {wall:10.2f} {wall / SVM_RANK['wall']:6.2f} {TARGET_WALL:7.1f}")
    print(f"  {'peak MiB':<10} {SVM_RANK['peak_mb']:9.0f} {peak:10.0f} {peak / SVM_RANK['peak_mb']:6.2f} "
          f"{SVM_RANK['peak_mb']:7.0f}")
    print(f"  ({iterations.group(1) if iterations else '?'} iterations; svm_rank's figures measured once)")

    found = held_out(path)
    print("\nheld out: trained on the first 1,000,000 lines, tested on the rest")
    for name, label in (("pred", "svmstruct"), ("random", "random scores")):
        print(f"  {label:<14} " + "  ".join(f"{m} {v:.4f}" for m, v in found[name].items()))


if __name__ == "__main__":
    main()
