"""DORM against other losses on MQ2008 (five folds) and the Yahoo LTR sample (Le & Smola 2007, sec. 6).

ndcg@10 (DORM) against pairs, map, prec@10 per query and error rate, C chosen on validation by
NDCG@10; test NDCG@1..10 and MRR per split and mean, with per-query wins/losses of DORM and Wilcoxon
p-values. A second table answers the paper's section 6.4 questions: `mrr`, `wta` and `mwta` runs,
C chosen by validation MRR, reporting MRR and WTA. The Yahoo sample has no validation part: its last
20% of training queries validate.
Usage: python scripts/exp_dorm.py [--shared ../shared] [--out exp/dorm] [--quick]
"""
import argparse
from pathlib import Path

import experiment

GRID = [0.1, 1, 10, 100, 1000]
RUNS = {
    "ndcg@10 (DORM)": ("ndcg@10", {}, GRID),
    "ndcg@10 --position-weights measure": ("ndcg@10", {"position_weights": "measure"}, GRID),
    "pairs": ("pairs", {}, [0.01, 0.1, 1, 10, 100]),
    "map": ("map", {}, [0.01, 0.1, 1, 10, 100]),
    "prec@10 --per-query": ("prec@10", {"per_query": True, "bias": 1.0}, [0.01, 0.1, 1, 10, 100]),
    "errorrate": ("errorrate", {"bias": 1.0}, [0.01, 0.1, 1, 10, 100]),
}
WTA_RUNS = {
    "mwta (DORM)": ("mwta", {}, GRID),
    "wta (DORM)": ("wta", {}, GRID),
    "mrr (DORM)": ("mrr", {}, GRID),
    "mrr --position-weights measure (DORM)": ("mrr", {"position_weights": "measure"}, GRID),
    "ndcg@10 (DORM)": ("ndcg@10", {}, GRID),
    "pairs": ("pairs", {}, [0.01, 0.1, 1, 10, 100]),
}
REPORTED = [f"ndcg@{k}" for k in range(1, 11)] + ["mrr"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--out", default="exp/dorm")
    parser.add_argument("--quick", action="store_true", help="two C values per loss (a smoke run)")
    args = parser.parse_args()
    shared, out = Path(args.shared), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    yahoo = shared / "data" / "yahoo-sample"
    experiment.require(yahoo / "train.txt", yahoo / "test.txt")
    splits = list(experiment.mq2008_folds(shared)) + [
        ("Yahoo", [yahoo / "train.txt"], [], [yahoo / "test.txt"], 0.2)]
    results = experiment.run(splits, RUNS, "ndcg@10", REPORTED, "ndcg@10 (DORM)", args.quick)
    text = "## NDCG@k and MRR\n\n" + experiment.report(*results, REPORTED, "ndcg@10 (DORM)", "ndcg@10")
    results = experiment.run(splits, WTA_RUNS, "mrr", ["mrr", "wta"], "mwta (DORM)", args.quick)
    text += "\n## MRR and WTA (section 6.4)\n\n" + experiment.report(*results, ["mrr", "wta"], "mwta (DORM)", "mrr")
    (out / "results.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
