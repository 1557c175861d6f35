"""Hashed feature ids (VW style, up to 2^31 - 1): memory grows with the distinct ids used, not the largest.

Writes a training and a test file whose feature ids are a few hundred random values in 1..2^31-1, then
runs `svmstruct learn` (pairs and errorrate) and `svmstruct classify` as whole processes under
/usr/bin/time -v and prints each one's peak resident memory and wall time. For scale, the same
processes on a file with the same values at ids 1..K (no hashing) are the baseline in the same run.
Usage: python scripts/bench_hashed_ids.py [--lines 20000] [--distinct 300] [--out exp/hashed]
"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("SVMSTRUCT_RESIDENT", "0")  # each command's own process is timed (svmstruct.worker.resident)

ROOT = Path(__file__).resolve().parents[1]


def write(path: Path, ids: np.ndarray, rng, lines: int, per_line: int, queries: int) -> None:
    with open(path, "w") as f:
        for i in range(lines):
            chosen = np.sort(rng.choice(len(ids), size=per_line, replace=False))
            values = rng.random(per_line)
            label = int(values[0] + values[1] > 1.0) + int(values[2] > 0.8)
            tokens = " ".join(f"{ids[c]}:{v:.4f}" for c, v in zip(chosen, values))
            f.write(f"{label} qid:{1 + i * queries // lines} {tokens}\n")


def measure(cmd: list) -> tuple:
    run = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{run.stderr[-2000:]}")
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", run.stderr).group(1)
    seconds = sum(float(part) * 60 ** k for k, part in enumerate(reversed(wall.split(":"))))
    return peak_kb / 1024, seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--distinct", type=int, default=300)
    parser.add_argument("--out", default="exp/hashed")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    hashed = np.sort(rng.choice(2**31 - 1, size=args.distinct, replace=False) + 1)
    hashed[-1] = 2**31 - 1  # the largest id there is
    plain = np.arange(1, args.distinct + 1)
    svm = [sys.executable, "-m", "svmstruct"]
    print(f"{args.lines} lines, {args.distinct} distinct feature ids, 20 per line; peak RSS (MiB) and wall (s) "
          "of each whole process")
    print(f"{'ids':<22} {'command':<28} {'peak MiB':>9} {'wall s':>7}")
    for label, ids in (("1..%d" % args.distinct, plain), ("hashed, up to 2^31-1", hashed)):
        tag = "plain" if ids is plain else "hashed"
        for part, lines in (("train", args.lines), ("test", args.lines // 4)):
            write(out / f"{tag}.{part}.txt", ids, np.random.default_rng(1 if part == "train" else 2), lines, 20, 200)
        for loss in ("pairs", "errorrate"):
            model = out / f"{tag}.{loss}.model"
            peak, wall = measure([*svm, "learn", "-l", loss, "-c", "1", "-v", "0", str(out / f"{tag}.train.txt"),
                                  str(model)])
            print(f"{label:<22} {'learn -l ' + loss:<28} {peak:9.1f} {wall:7.2f}", flush=True)
        peak, wall = measure([*svm, "classify", str(out / f"{tag}.test.txt"), str(out / f"{tag}.pairs.model"),
                              str(out / f"{tag}.pred")])
        print(f"{label:<22} {'classify':<28} {peak:9.1f} {wall:7.2f}", flush=True)
    plain_pred = np.loadtxt(out / "plain.pred")
    hashed_pred = np.loadtxt(out / "hashed.pred")
    print(f"same scores with hashed and plain ids (the same values at other ids): "
          f"{np.allclose(plain_pred, hashed_pred, atol=1e-7)}")


if __name__ == "__main__":
    main()
