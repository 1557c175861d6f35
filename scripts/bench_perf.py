"""Train every svm_perf reference case with the svmstruct CLI; print our wall time next to svm_perf's.

Usage: python scripts/bench_perf.py [--shared ../shared] [--only SUBSTRING] [--repeat N]
Each run is a whole `svmstruct learn` process (start-up, reading, training, writing), as the reference
`wall_s` is a whole `svm_perf_learn` run; the numba cache is warmed by one untimed run first.
Columns: case, reference pval, our pval, relative difference, reference wall_s, ours, ratio (ours/theirs).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("SVMSTRUCT_RESIDENT", "0")  # each command's own process is timed (svmstruct.worker.resident)

ROOT = Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--only", default="")
    parser.add_argument("--repeat", type=int, default=1, help="time each case this many times, keep the fastest")
    args = parser.parse_args()
    import reference
    from reference import all_cases, case

    reference.use_shared(args.shared)
    reference.require_shared()

    names = [n for n in all_cases() if "-perf-" in n and args.only in n]
    if not names:
        raise SystemExit(f"error: no svm_perf reference case matches '{args.only}'")
    print(f"{'case':<26} {'ref pval':>12} {'our pval':>12} {'rel.diff':>9} {'ref s':>7} {'our s':>7} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        warm = [sys.executable, "-m", "svmstruct", "learn", "-v", "0", "-l", "rocarea",
                str(ROOT / "data/mq2008-small/train.txt"), f"{tmp}/warm"]
        subprocess.run(warm, check=True)
        for name in names:
            c = case(name)
            cmd = [sys.executable, "-m", "svmstruct", "learn", "-l", c.loss, "-c", f"{c.C:g}", "-e", f"{c.epsilon:g}",
                   "-v", "1", str(c.train[0]), f"{tmp}/{name}.model"]
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                run = subprocess.run(cmd, capture_output=True, text=True)
                best = min(best, time.perf_counter() - start)
                if run.returncode != 0:
                    sys.exit(f"{name}: {run.stderr}")
            pval = float(re.search(r"pval=([-\d.eE+]+)", run.stderr).group(1))
            print(f"{name:<26} {c.pval:12.5f} {pval:12.5f} {(pval - c.pval) / c.pval:+9.2e} {c.wall_s:7.2f} "
                  f"{best:7.2f} "
                  f"{best / c.wall_s:6.2f}", flush=True)


if __name__ == "__main__":
    main()
