"""learn -t against svm_perf's kernel runs, and training time against the basis size K at scale.

1. The five reference kernel runs (../shared/reference/kernel): `svmstruct learn` with svm_perf's options
   and basis size (scripts/reference.py KERNEL_OPTIONS), whole process, median wall time of --runs,
   against svm_perf's logged wall time (`wall_s`, measured on a busy 2-core machine: a rough figure) and
   its logged `Runtime in cpu-seconds` (training alone, without reading the data). svm_perf itself is not
   available on this machine, so its figures are the logged ones; ratios are ours / theirs.
2. `learn -l pairs -c 1 -t 2 -g 0.05 --k K` on the 300,000-document synthetic file of bench-synth (2500
   queries of 120 documents, 136 features in [0, 1): |a - b|^2 is about 136/6, so gamma 0.05 gives kernel
   values near exp(-1.1)) for K = 100, 500, 2000: wall time, the map's time (the log's `mapped in`),
   iterations, peak memory against the mapped matrix's n K 4 bytes.
Usage: python scripts/bench_kernel.py [--shared ../shared] [--file exp/synth/synth.txt] [--runs 3] [--sizes ...]
"""
import argparse
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import reference  # noqa: E402
from experiment import require, synthetic_ltr, time_v  # noqa: E402


def svmstruct() -> str:
    return str(Path(sys.executable).parent / "svmstruct")


def reference_cases(runs: int) -> None:
    print("| case | svmstruct learn, whole process (s) | svm_perf wall_s (logged) | ratio | svm_perf cpu-seconds "
          "(training only, logged) | ratio | primal: ours / svm_perf's pval |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in sorted(reference.KERNEL_OPTIONS):
            c = reference.KernelCase(name)
            cmd = [svmstruct(), "learn", "-v", "1", *c.learn_args(folder), str(c.train), str(folder / "m")]
            times = []
            for _ in range(runs):
                out, wall, _ = time_v(cmd)
                times.append(wall)
            primal = float(re.search(r"pval=([0-9.]+)", out).group(1))
            ours = statistics.median(times)
            print(f"| {name} | {ours:.2f} | {c.wall_s:.1f} | {ours / c.wall_s:.3f} | {c.cpu_s:.2f} | "
                  f"{ours / c.cpu_s:.2f} | {primal:.5f} / {c.pval:.5f} |", flush=True)


def scaling(data: Path, sizes: list) -> None:
    print()
    print("| K | wall (s) | map (s) | iterations | peak memory (MB) | mapped matrix n K 4 (MB) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for K in sizes:
            cmd = [svmstruct(), "learn", "-l", "pairs", "-c", "1", "-t", "2", "-g", "0.05", "--k", str(K), "--float32",
                   "-v", "1", str(data), f"{tmp}/m"]
            out, wall, peak = time_v(cmd)
            mapped = float(re.search(r"mapped in ([0-9.]+) s", out).group(1))
            iterations = int(re.search(r"Number of iterations: (\d+)", out).group(1))
            n = int(re.search(r": (\d+) documents", out).group(1))
            print(f"| {K} | {wall:.1f} | {mapped:.1f} | {iterations} | {peak:.0f} | {n * K * 4 / 2**20:.0f} |",
                  flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--file", default=str(ROOT / "exp" / "synth" / "synth.txt"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="100,500,2000")
    args = parser.parse_args()
    reference.use_shared(args.shared)
    reference.require_shared()
    require(reference.REFERENCE / "kernel")
    with tempfile.TemporaryDirectory() as tmp:  # the numba cache warm outside the timings
        time_v([svmstruct(), "learn", "-v", "0", "-t", "2", "--k", "10", str(ROOT / "data/mq2008-small/train.txt"),
                f"{tmp}/m"])
    reference_cases(args.runs)
    if args.sizes:
        synthetic_ltr(Path(args.file), 2500, Path(args.shared))
        scaling(Path(args.file), [int(k) for k in args.sizes.split(",")])


if __name__ == "__main__":
    main()
