"""The listwise losses on long candidate lists (Le & Smola's maps collapse to w ~ 0 with ~100+ documents a query).

The data: ../shared/tools/make_synthetic_ltr.py with 120 documents a query, 46 features, seed 1, labels 0-4
(50/25/15/7/3 %) from a hidden linear model plus noise. Queries 1-200 train, 201-250 validate, 251-300 test
(the split of the original report); queries 301-1300 of the same generator are a larger held-out set (the 50-query test
part is noisy: differences of 0.01 are within its noise). Every run chooses C from 0.01 ... 1000 on the
validation part by its own loss's measure; the table gives the chosen C, the model's |w|, slack xi and gain
over the objective at w = 0, and test NDCG@10, MRR and P@10 on both test sets, with relevance at
--rel-threshold 0 (half the documents relevant) and, for the binary measures, 2 (labels 3-4: one in ten).
Usage: python scripts/exp_longlists.py [--shared ../shared] [--out exp/longlists] [--jobs 2] [--quick]
"""
import argparse
import multiprocessing
import time
from pathlib import Path

import numpy as np

from svmstruct import api, model
from svmstruct.evaluation import measures
from svmstruct.io import data

import experiment

GRID = [0.01, 0.1, 1, 10, 100, 1000]
REPORTED = ["ndcg@10", "mrr", "P_10"]
# label: (loss, options, relevance threshold)
RUNS = {
    "ndcg@10": ("ndcg@10", {}, 0.0),
    "dcg@10": ("dcg@10", {}, 0.0),
    "precision@10": ("precision@10", {}, 0.0),
    "mrr": ("mrr", {}, 0.0),
    "mrr --position-weights measure": ("mrr", {"position_weights": "measure"}, 0.0),
    "wta": ("wta", {}, 0.0),
    "mwta": ("mwta", {}, 0.0),
    "eru": ("eru", {}, 0.0),
    "pairs": ("pairs", {}, 0.0),
    "map": ("map", {}, 0.0),
    "ndcg@10 --position-weights pow:0.5": ("ndcg@10", {"position_weights": "pow:0.5"}, 0.0),
    "precision@10 --position-weights pow:0.5": ("precision@10", {"position_weights": "pow:0.5"}, 0.0),
    "mrr --position-weights pow:0.5": ("mrr", {"position_weights": "pow:0.5"}, 0.0),
    "ndcg@10 --position-weights measure": ("ndcg@10", {"position_weights": "measure"}, 0.0),
    "precision@10 --position-weights measure": ("precision@10", {"position_weights": "measure"}, 0.0),
    "ndcg@10 --position-weights pairs": ("ndcg@10", {"position_weights": "pairs"}, 0.0),
    "precision@10 --position-weights pairs": ("precision@10", {"position_weights": "pairs"}, 0.0),
    "precision@10 --rel-threshold 2": ("precision@10", {"rel_threshold": 2.0}, 2.0),
    "precision@10 --rel-threshold 2 --position-weights measure": ("precision@10", {"rel_threshold": 2.0,
                                                                    "position_weights": "measure"}, 2.0),
    "mrr --rel-threshold 2": ("mrr", {"rel_threshold": 2.0}, 2.0),
    "mrr --rel-threshold 2 --position-weights pow:0.5": ("mrr", {"rel_threshold": 2.0, "position_weights": "pow:0.5"},
                                                         2.0),
    "mrr --rel-threshold 2 --position-weights measure": ("mrr", {"rel_threshold": 2.0, "position_weights": "measure"},
                                                         2.0),
    "pairs (measured at --rel-threshold 2)": ("pairs", {}, 2.0),
}


def split_files(out: Path, shared: Path) -> dict:
    """train/vali/test/heldout files of the synthetic set, made once."""
    whole = out / "syn1300.txt"
    experiment.synthetic_ltr(whole, 1300, shared, "--docs", "120", "--features", "46", "--seed", "1")
    parts = {name: out / f"{name}.txt" for name in ("train", "vali", "test", "heldout")}
    if not all(p.exists() for p in parts.values()):
        files = {name: open(p, "w") for name, p in parts.items()}
        with open(whole) as f:
            for line in f:
                q = int(line.split()[1][4:])
                part = "train" if q <= 200 else "vali" if q <= 250 else "test" if q <= 300 else "heldout"
                files[part].write(line)
        for f in files.values():
            f.close()
    return {name: str(p) for name, p in parts.items()}


def values(dataset, scores, threshold: float) -> dict:
    return {m: float(measures.per_query(measures.lookup(m), dataset.y, scores, dataset.qptr, dataset.docids,
                                        threshold).mean()) for m in REPORTED}


def one_run(job):
    label, (loss_name, opts, threshold), files, grid = job
    start = time.perf_counter()
    train, vali, test = (data.read_svmlight(files[p]) for p in ("train", "vali", "test"))
    heldout = data.read_svmlight(files["heldout"]) if "heldout" in files else None
    loss, full = api.resolve_loss(loss_name, opts)
    own = loss.measure(full)
    best, points = api.select_C(loss, full, train, vali, own, api.Settings(grid))
    r = best.result
    return label, dict(
        own=own, C=best.C, norm=float(np.linalg.norm(best.model.w)), xi=r.xi, gain=r.gain, learned=r.learned,
        iterations=r.iterations, test=values(test, model.score(best.model, test), threshold),
        heldout=values(heldout, model.score(best.model, heldout), threshold) if heldout else None, threshold=threshold,
        not_learned=[p.C for p in points if not p.result.learned], seconds=time.perf_counter() - start)


def report(results: dict) -> str:
    lines = ["| run | chosen by | C | \\|w\\| | ξ | gain over w = 0 | test NDCG@10 | test MRR | test P@10 | "
             "held-out NDCG@10 | held-out MRR | held-out P@10 | grid points that did not learn |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, r in results.items():
        t, h = r["test"], r["heldout"]
        lines.append(f"| `{label}` | {r['own']} | {r['C']:g} | {r['norm']:.3g} | {r['xi']:.4f} | "
                     f"{100 * r['gain']:.1f} %{'' if r['learned'] else ' (did not learn)'} | "
                     + " | ".join(f"{t[m]:.4f}" for m in REPORTED) + " | "
                     + " | ".join(f"{h[m]:.4f}" for m in REPORTED) + " | "
                     + (", ".join(f"{c:g}" for c in r["not_learned"]) or "none") + " |")
    lines.append("")
    pairs = results.get("pairs")
    if pairs:
        lines.append("Against `pairs` on the test part (the bar: >= pairs - 0.005) and on the held-out set:")
        lines.append("")
        for label, measure in (("ndcg@10", "ndcg@10"), ("mrr", "mrr"), ("precision@10", "P_10")):
            if label in results:
                r = results[label]
                lines.append(f"- `{label}` {measure}: test {r['test'][measure]:.4f} vs {pairs['test'][measure]:.4f} "
                             f"({r['test'][measure] - pairs['test'][measure]:+.4f}); held-out "
                             f"{r['heldout'][measure]:.4f} vs {pairs['heldout'][measure]:.4f} "
                             f"({r['heldout'][measure] - pairs['heldout'][measure]:+.4f})")
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--out", default="exp/longlists")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="C 0.1 and 10 only, the main runs (a smoke run)")
    parser.add_argument("--runs", default=None, help="comma-separated run labels (default: all)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = split_files(out, Path(args.shared))
    runs = {k: v for k, v in RUNS.items() if args.runs is None or k in args.runs.split(",")}
    if args.quick:
        runs = {k: v for k, v in runs.items() if k in ("ndcg@10", "mrr", "precision@10", "pairs")}
    grid = [0.1, 10] if args.quick else GRID
    jobs = [(label, spec, files, grid) for label, spec in runs.items()]
    start = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        results = {}
        for label, result in pool.imap_unordered(one_run, jobs):
            results[label] = result
            print(f"{label}: C {result['C']:g}, test {result['test']}, {result['seconds']:.0f} s", flush=True)
    ordered = {label: results[label] for label in runs}
    text = report(ordered) + f"\n{time.perf_counter() - start:.0f} s in all ({args.jobs} jobs).\n"
    (out / "results.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
