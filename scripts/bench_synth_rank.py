"""svm_rank's scale case: `svmstruct learn -l pairs -c 1` on the 300,000-document synthetic file,
whole process under /usr/bin/time -v (median wall time of --runs), against svm_rank's measured run
(../shared/reference/synth-2500-rank-c1.*).

Prints the objective (ours, svm_rank's pval; any value up to svm_rank's is as good, it stopped with a
duality gap of 4.30), wall time and peak resident memory of both, and the ratios.
The data file is generated once with ../shared/tools/make_synthetic_ltr.py (424 MB) if absent.
Usage: python scripts/bench_synth_rank.py [--shared ../shared] [--file exp/synth/synth.txt]
"""
import argparse
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from experiment import require, synthetic_ltr, time_v, time_v_figures  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--file", default=str(ROOT / "exp" / "synth" / "synth.txt"))
    parser.add_argument("--runs", type=int, default=3, help="timed runs: the median wall time, the highest peak")
    args = parser.parse_args()
    shared, data = Path(args.shared), Path(args.file)
    require(shared / "tools" / "make_synthetic_ltr.py", shared / "reference" / "synth-2500-rank-c1.learn.log")
    synthetic_ltr(data, 2500, shared)
    reference = shared / "reference" / "synth-2500-rank-c1"
    ref_log = reference.with_suffix(".learn.log").read_text()
    ref_pval = float(re.search(r"pval=([\d.]+)", ref_log).group(1))
    ref_time = (reference.parent / "synth-2500-rank-c1.time").read_text()
    ref_wall, ref_rss = time_v_figures(ref_time)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(Path(sys.executable).parent / "svmstruct"), "learn", "-l", "pairs", "-c", "1", "--float32",
               "--dense",
               "-v", "1", str(data), f"{tmp}/synth.model"]
        time_v(cmd[:-2] + ["-#", "1", str(ROOT / "data/mq2008-small/train.txt"), f"{tmp}/warm.model"])  # numba cache
        runs = [time_v(cmd) for _ in range(args.runs)]  # this machine's timings vary by up to 50 % run to run
        log = runs[0][0]
        wall = statistics.median(run[1] for run in runs)
        rss = max(run[2] for run in runs)
    pval = float(re.search(r"pval=([\d.]+)", log).group(1))
    iterations = re.search(r"Number of iterations: (\d+)", log).group(1)
    print(f"{'':<12} {'svm_rank':>10} {'svmstruct':>10} {'ratio':>7}")
    print(f"{'objective':<12} {ref_pval:10.2f} {pval:10.2f} {pval / ref_pval:7.4f}")
    print(f"{'wall s':<12} {ref_wall:10.2f} {wall:10.2f} {wall / ref_wall:7.2f}")
    print(f"{'peak MB':<12} {ref_rss:10.0f} {rss:10.0f} {rss / ref_rss:7.2f}")
    print(f"(svmstruct: {iterations} iterations, median wall of {args.runs} runs; "
          f"command: {' '.join(cmd[:-2])} FILE MODEL)")


if __name__ == "__main__":
    main()
