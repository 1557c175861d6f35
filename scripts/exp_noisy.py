"""The ranking losses on noisy lists with many relevant documents, where ndcg@10 and precision@10 with their
measure's own map rank at chance, the shape of classic medical and news test collections.

The data: ../shared/tools/make_synthetic_ltr.py, 1300 queries of 150 documents, 45 features, labels 0/1/2 at the
per-query quantiles 0.70 and 0.86 of a hidden linear score plus Gaussian noise of standard deviation 4 or 6
(seed 1). Queries 1-200 train, 201-300 validate, 301-1300 test. Every run chooses C on the validation part by
its own loss's measure (pairs from 0.001 ... 10, the others 0.1 ... 1000); the table gives test NDCG@10, MRR
and P@10 (relevance: label > 0), the chosen C, |w| and whether the model's training measure rose above w = 0's
(`did_not_learn`, judged as `learn` judges it).
Usage: python scripts/exp_noisy.py [--shared ../shared] [--out exp/noisy] [--jobs 2] [--noise 4,6]
"""
import argparse
import multiprocessing
import time
from pathlib import Path

import exp_longlists

import experiment

GRID = [0.1, 1, 10, 100, 1000]
PAIRS_GRID = [0.001, 0.01, 0.1, 1, 10]
RUNS = {  # label: (loss, options, relevance threshold); a label without --position-weights is the default map
    "pairs": ("pairs", {}, 0.0),
    "map": ("map", {}, 0.0),
    "ndcg@10": ("ndcg@10", {}, 0.0),
    "ndcg@10 --position-weights measure": ("ndcg@10", {"position_weights": "measure"}, 0.0),
    "ndcg@10 --position-weights pairs": ("ndcg@10", {"position_weights": "pairs"}, 0.0),
    "precision@10": ("precision@10", {}, 0.0),
    "precision@10 --position-weights measure": ("precision@10", {"position_weights": "measure"}, 0.0),
    "precision@10 --position-weights pairs": ("precision@10", {"position_weights": "pairs"}, 0.0),
    "mrr": ("mrr", {}, 0.0),
    "mrr --position-weights measure": ("mrr", {"position_weights": "measure"}, 0.0),
    "dcg@10": ("dcg@10", {}, 0.0),
    "dcg@10 --position-weights top-pairs": ("dcg@10", {"position_weights": "top-pairs"}, 0.0),
    "mwta": ("mwta", {}, 0.0),
    "mwta --position-weights top-pairs": ("mwta", {"position_weights": "top-pairs"}, 0.0),
    "wta": ("wta", {}, 0.0),
    "wta --position-weights top-pairs": ("wta", {"position_weights": "top-pairs"}, 0.0),
    "eru": ("eru", {}, 0.0),
    "combo:ndcg@10,mrr,map": ("combo:ndcg@10,mrr,map", {}, 0.0),
    "combo:map,mrr": ("combo:map,mrr", {}, 0.0),
}
MEASURES = {"ndcg@10": "ndcg@10", "mrr": "mrr", "P_10": "precision@10"}  # each measure and the loss it stands for


def split_files(out: Path, shared: Path, noise: str) -> dict:
    whole = out / f"noise{noise}.txt"
    experiment.synthetic_ltr(whole, 1300, shared, "--docs", "150", "--features", "45", "--cuts", "0.70,0.86",
                             "--noise", noise, "--seed", "1")
    parts = {name: out / f"noise{noise}.{name}.txt" for name in ("train", "vali", "test")}
    if not all(p.exists() for p in parts.values()):
        files = {name: open(p, "w") for name, p in parts.items()}
        with open(whole) as f:
            for line in f:
                q = int(line.split()[1][4:])
                files["train" if q <= 200 else "vali" if q <= 300 else "test"].write(line)
        for f in files.values():
            f.close()
    return {name: str(p) for name, p in parts.items()}


def report(results: dict, noises: list) -> str:
    lines = ["| run | " + " | ".join(f"noise {n}: C | \\|w\\| | NDCG@10 | MRR | P@10 | learned" for n in noises) + " |",
             "|---|" + "---|---|---|---|---|---|" * len(noises)]
    for label in RUNS:
        cells = []
        for noise in noises:
            r = results.get((noise, label))
            if r is None:
                cells.append(" | | | | | ")
                continue
            t = r["test"]
            cells.append(f"{r['C']:g} | {r['norm']:.3g} | {t['ndcg@10']:.4f} | {t['mrr']:.4f} | {t['P_10']:.4f} | "
                         f"{'yes' if r['learned'] else '**no**'}")
        lines.append(f"| `{label}` | " + " | ".join(cells) + " |")
    lines += ["", "Each loss against `pairs` on its own measure (the bar: >= pairs - 0.01):", ""]
    for noise in noises:
        pairs = results.get((noise, "pairs"))
        for label, (loss, _, _) in RUNS.items():
            r = results.get((noise, label))
            own = next((m for m, prefix in MEASURES.items() if loss.startswith(prefix)), None)
            if pairs and r and own:
                lines.append(f"- noise {noise}, `{label}` {own}: {r['test'][own]:.4f} vs {pairs['test'][own]:.4f} "
                             f"({r['test'][own] - pairs['test'][own]:+.4f})")
    lines += ["", "Each combo against the best single loss on each measure (the bar: within 0.01):", ""]
    for noise in noises:
        singles = {label: r for (n, label), r in results.items() if n == noise and not label.startswith("combo")}
        for label in (label for label in RUNS if label.startswith("combo")):
            r = results.get((noise, label))
            if not (r and singles):
                continue
            cells = []
            for measure in MEASURES:
                best = max(singles, key=lambda s: singles[s]["test"][measure])
                cells.append(f"{measure} {r['test'][measure]:.4f} vs {singles[best]['test'][measure]:.4f} (`{best}`, "
                             f"{r['test'][measure] - singles[best]['test'][measure]:+.4f})")
            lines.append(f"- noise {noise}, `{label}`: " + "; ".join(cells))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--out", default="exp/noisy")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--noise", default="4,6")
    parser.add_argument("--runs", default=None, help="comma-separated run labels (default: all)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    noises = args.noise.split(",")
    runs = {k: v for k, v in RUNS.items() if args.runs is None or k in args.runs.split(";")}
    jobs = [((noise, label), spec, split_files(out, Path(args.shared), noise), PAIRS_GRID if label == "pairs" else GRID)
            for noise in noises for label, spec in runs.items()]
    start = time.perf_counter()
    results = {}
    with multiprocessing.Pool(args.jobs) as pool:
        for key, result in pool.imap_unordered(exp_longlists.one_run, jobs):
            results[key] = result
            print(f"{key}: C {result['C']:g}, test {result['test']}, {result['seconds']:.0f} s", flush=True)
    text = report(results, noises) + f"\n{time.perf_counter() - start:.0f} s in all ({args.jobs} jobs).\n"
    (out / "results.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
