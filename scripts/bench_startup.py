"""Start-up of short commands: `svmstruct classify` on 10 lines (data/mq2008-small/test.txt), whole process,
median of 5 runs with a warm numba cache: the quick path (no option: svmstruct.quick, without numba or
scipy) against the full path (the same command with `-v 0`, which takes the full path) measured in the
same run, and `eval` on the same 10 lines. Target of issue #16: classify <= 0.35 s.
Usage: python scripts/bench_startup.py [--runs 5]
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SVM = str(Path(sys.executable).parent / "svmstruct")


def wall(cmd: list, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    data = ROOT / "data" / "mq2008-small"
    with tempfile.TemporaryDirectory() as tmp:
        test, model, scores = f"{tmp}/t10.txt", f"{tmp}/map.model", f"{tmp}/t10.pred"
        Path(test).write_bytes(b"".join((data / "test.txt").read_bytes().splitlines(keepends=True)[:10]))
        subprocess.run([SVM, "learn", "-l", "map", "-c", "10", "-v", "0", str(data / "train.txt"), model], check=True)
        subprocess.run([SVM, "classify", "-v", "0", test, model, scores], check=True)  # warm the cache
        quick = wall([SVM, "classify", test, model], args.runs)
        full = wall([SVM, "classify", "-v", "0", test, model], args.runs)
        evaluate = wall([SVM, "eval", "-m", "map", test, scores], args.runs)
        python = wall([sys.executable, "-c", "pass"], args.runs)
    print(f"median of {args.runs} whole-process runs, warm numba cache")
    print(f"{'command':<40} {'seconds':>8}")
    print(f"{'python -c pass':<40} {python:8.3f}")
    print(f"{'classify 10 lines (quick path)':<40} {quick:8.3f}   {quick / full:.2f}x the full path, target <= 0.35 s")
    print(f"{'classify -v 0 10 lines (full path)':<40} {full:8.3f}")
    print(f"{'eval -m map 10 lines':<40} {evaluate:8.3f}")


if __name__ == "__main__":
    main()
