"""MQ2008 (LETOR 4.0), five folds: which training loss gives the best test MAP and NDCG@10?

map, pairs, rocarea per query and error rate; C chosen on each fold's validation part by MAP; test MAP
and NDCG@10 per fold and mean, with per-query wins/losses of `map` against each loss and Wilcoxon
p-values (the layout of Yue et al. 2007, Tables 9-11).
Usage: python scripts/exp_mq2008.py [--shared ../shared] [--out exp/mq2008] [--quick]
"""
import argparse
from pathlib import Path

import experiment

RUNS = {  # label: (loss, options, C grid)
    "map": ("map", {}, [0.01, 0.1, 1, 10, 100]),
    "pairs": ("pairs", {}, [0.01, 0.1, 1, 10, 100]),
    "rocarea --per-query": ("rocarea", {"per_query": True, "bias": 1.0}, [0.01, 0.1, 1, 10, 100]),
    "errorrate": ("errorrate", {"bias": 1.0}, [0.01, 0.1, 1, 10, 100]),
}
REPORTED = ["map", "ndcg@10"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--out", default="exp/mq2008")
    parser.add_argument("--quick", action="store_true", help="two C values per loss (a smoke run)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    splits = list(experiment.mq2008_folds(Path(args.shared)))
    results = experiment.run(splits, RUNS, "map", REPORTED, "map", args.quick)
    text = experiment.report(*results, REPORTED, "map", "map")
    (out / "results.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
