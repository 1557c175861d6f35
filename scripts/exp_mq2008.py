"""MQ2008 (LETOR 4.0), five folds: which training loss gives the best test MAP and NDCG@10?

For each fold (FoldK trains on S_k, S_k+1, S_k+2, validates on S_k+3, tests on S_k+4), each loss is
trained for every C of its grid, the C with the best validation MAP is kept, and the test queries are
scored. Prints (and writes to OUT/results.md) test MAP and NDCG@10 per fold and their mean, and the
per-query wins/losses of `map` against each other loss over all 784 test queries with Wilcoxon
signed-rank p-values (the layout of Yue et al. 2007, Tables 9-11).
Usage: python scripts/exp_mq2008.py [--shared ../shared] [--out exp/mq2008] [--quick]
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

from svmstruct import data, losses, measures, model, selection

RUNS = {  # label: (loss, options, C grid)
    "map": ("map", {}, [0.01, 0.1, 1, 10, 100]),
    "pairs": ("pairs", {}, [0.01, 0.1, 1, 10, 100]),
    "rocarea --per-query": ("rocarea", {"per_query": True, "bias": 1.0}, [0.01, 0.1, 1, 10, 100]),
    "errorrate": ("errorrate", {"bias": 1.0}, [0.01, 0.1, 1, 10, 100]),
}
REPORTED = ["map", "ndcg@10"]


def fold_files(shared: Path, k: int):
    part = lambda i: shared / "data" / "mq2008" / f"S{(k - 1 + i) % 5 + 1}.txt"  # noqa: E731
    return [part(0), part(1), part(2)], part(3), part(4)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--out", default="exp/mq2008")
    parser.add_argument("--quick", action="store_true", help="two C values per loss (a smoke run)")
    args = parser.parse_args()
    shared, out = Path(args.shared), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    per_query = {label: {m: [] for m in REPORTED} for label in RUNS}
    per_fold = {label: {m: [] for m in REPORTED} for label in RUNS}
    chosen = {label: [] for label in RUNS}
    start = time.perf_counter()
    for k in range(1, 6):
        train_files, vali_file, test_file = fold_files(shared, k)
        train = data.concatenate([data.read_svmlight(str(f)) for f in train_files], name=f"Fold{k} train")
        vali = data.read_svmlight(str(vali_file), n_features=train.n_features)
        test = data.read_svmlight(str(test_file), n_features=train.n_features)
        for label, (loss_name, opts, grid) in RUNS.items():
            loss, _ = losses.lookup(loss_name)
            grid = grid[1:4:2] if args.quick else grid
            best, _ = selection.select_C(loss, opts, train, vali, "map", grid, loss.default_epsilon)
            chosen[label].append(best.C)
            scores = model.score(best.model, test)
            for m in REPORTED:
                values = measures.per_query(measures.lookup(m), test.y, scores, test.qptr, test.docids)
                per_query[label][m].append(values)
                per_fold[label][m].append(values.mean())
        print(f"fold {k} done ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
    lines = ["| loss | C chosen per fold | " + " | ".join(f"{m} F{k}" for m in REPORTED for k in range(1, 6)) +
             " | " + " | ".join(f"{m} mean" for m in REPORTED) + " |",
             "|---|---|" + "---|" * (len(REPORTED) * 6)]
    for label in RUNS:
        cells = [f"{v:.4f}" for m in REPORTED for v in per_fold[label][m]]
        means = [f"**{np.mean(per_fold[label][m]):.4f}**" for m in REPORTED]
        lines.append(f"| {label} | {', '.join(f'{c:g}' for c in chosen[label])} | " + " | ".join(cells + means) + " |")
    lines += ["", "`map` against each loss over all test queries (wins/losses of map; Wilcoxon signed-rank p):", "",
              "| against | " + " | ".join(REPORTED) + " |", "|---|" + "---|" * len(REPORTED)]
    for label in RUNS:
        if label == "map":
            continue
        cells = []
        for m in REPORTED:
            a, b = np.concatenate(per_query["map"][m]), np.concatenate(per_query[label][m])
            p = stats.wilcoxon(a, b).pvalue if np.any(a != b) else 1.0
            cells.append(f"{int(np.sum(a > b))}/{int(np.sum(a < b))} (p = {p:.3g})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append(f"\n{sum(len(v) for v in per_query['map']['map'])} "
                 f"test queries; total time {time.perf_counter() - start:.0f} s.")
    text = "\n".join(lines) + "\n"
    (out / "results.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
