"""`svmstruct eval` on a large file against trec_eval.

The 1.2M-document synthetic file of bench-big (exp/big/synth.txt, 10,000 queries of 120 documents,
generated from ../shared/tools once), scored by a `pairs` model trained on bench-synth's 300k-document file
(exp/synth/synth.txt, the same generator's features). Then, whole processes, median wall time of --runs and
peak memory, the two programs' runs alternated:
- `svmstruct eval -m map -m ndcg_cut_10 -m P_10 BIG PREDICTIONS` (labels from the SVMlight file);
- `trec_eval -m map -m ndcg_cut.10 -m P.10 QRELS RUN` on the equivalent qrels (`svmstruct qrels BIG`) and TREC
  run (`svmstruct classify --format trec`), where $ANCHOR_BIN holds trec_eval (else ours alone).
The three values of both programs are compared (they must agree to the printed digit).
Usage: python scripts/bench_eval.py [--shared ../shared] [--big exp/big/synth.txt] [--train exp/synth/synth.txt]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from experiment import synthetic_ltr, time_v  # noqa: E402

MEASURES = ["map", "ndcg_cut_10", "P_10"]


def svmstruct(*args) -> list:
    return [str(Path(sys.executable).parent / "svmstruct"), *map(str, args)]


def values(text: str) -> dict:
    """{measure: 'all' value} of trec_eval's or svmstruct eval's output (trec_eval's names with '.')."""
    found = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "all":
            found[parts[0].replace(".", "_")] = parts[2]
    return {m: found.get(m) for m in MEASURES}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--big", default=str(ROOT / "exp" / "big" / "synth.txt"))
    parser.add_argument("--train", default=str(ROOT / "exp" / "synth" / "synth.txt"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    big, train = Path(args.big), Path(args.train)
    synthetic_ltr(big, 10000, Path(args.shared))
    synthetic_ltr(train, 2500, Path(args.shared))
    anchor = os.environ.get("ANCHOR_BIN")
    trec_eval = Path(anchor) / "trec_eval" if anchor else None
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model, predictions = folder / "pairs.model", folder / "big.pred"
        subprocess.run(svmstruct("learn", "-v", "0", "-l", "pairs", "-c", "1", train, model), check=True)
        _, classify_s, classify_mb = time_v(svmstruct("classify", big, model, predictions))
        print(f"classify of {big.name}: {classify_s:.1f} s, {classify_mb:.0f} MB")
        ours_cmd = svmstruct("eval", *[a for m in MEASURES for a in ("-m", m)], big, predictions)
        theirs_cmd = None
        if trec_eval is not None and trec_eval.exists():
            qrels, run = folder / "big.qrels", folder / "big.run"
            subprocess.run(svmstruct("qrels", big, qrels), check=True)
            with open(run, "w") as f:
                subprocess.run(svmstruct("classify", "--format", "trec", big, model), stdout=f, check=True)
            theirs_cmd = [str(trec_eval), "-m", "map", "-m", "ndcg_cut.10", "-m", "P.10", str(qrels), str(run)]
        (ours_out, ours_s, ours_mb), theirs_timed = alternated(ours_cmd, theirs_cmd, args.runs)
        ours = values(ours_out)
        print("| program | wall (s), median of %d | peak memory (MB) | map | ndcg_cut_10 | P_10 |" % args.runs)
        print("|---|---|---|---|---|---|")
        print(f"| svmstruct eval | {ours_s:.2f} | {ours_mb:.0f} | " + " | ".join(ours[m] for m in MEASURES) + " |")
        if theirs_timed is None:
            print("(ANCHOR_BIN does not hold trec_eval: ours alone)")
            return
        theirs_out, theirs_s, theirs_mb = theirs_timed
        theirs = values(theirs_out)
        print(f"| trec_eval {trec_eval} | {theirs_s:.2f} | {theirs_mb:.0f} | "
              + " | ".join(theirs[m] for m in MEASURES) + " |")
        print(f"\nratio ours / trec_eval: wall {ours_s / theirs_s:.2f}x, peak memory {ours_mb / theirs_mb:.2f}x; "
              f"values {'equal' if ours == theirs else 'DIFFER'} (runs alternated: ours, trec_eval, ours, ...)")


def alternated(ours: list, theirs: list | None, runs: int) -> tuple:
    """(output of the last run, median wall seconds, largest peak MB) of OURS and of THEIRS (None: ours alone), RUNS
    of each alternated, so that the machine's drift over the runs (another process, its caches) weighs on both
    alike."""
    results: dict = {0: [], 1: []}
    for _ in range(runs):
        for side, cmd in enumerate((ours, theirs)):
            if cmd is not None:
                results[side].append(time_v(cmd))
    summary = [(r[-1][0], statistics.median(x[1] for x in r), max(x[2] for x in r)) if r else None
               for r in (results[0], results[1])]
    return summary[0], summary[1]


if __name__ == "__main__":
    main()
