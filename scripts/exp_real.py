"""The ranking losses on three real collections of different shapes, decided on held-out test queries.

- MQ2008 (LETOR 4.0): its five folds (train three parts, validate the next, test the one after); ~19 documents a
  query, grades 0-2, features normalised per query by LETOR.
- MSLR-WEB10K sample: 43 queries of ~116 documents, grades 0-4, 136 raw features (normalised per query here, as
  LETOR does: --normalize query); five folds of its queries, rotated as LETOR's.
- Yahoo sample (LightGBM's example): its 251 queries (train and test files together) of ~15 documents, grades
  0-4, 300 features in [0, 1]; five folds, rotated likewise.
Every run picks its C (and, for a run that names a grid of options, those too) on the validation part by its own
loss's measure, trains on the training part and is tested on the test part; the table pools the test queries of
the five folds: NDCG@10 (gain 2^label - 1), MRR, P@10 and MAP (relevant: label > 0), each against `pairs` with
wins/losses and a Wilcoxon signed-rank p over the queries. Results of each (collection, fold, run) are kept in
OUT/jobs, so a second call computes only what is missing (delete the folder to start over).
Then the confirmation: leave one collection out — each listwise loss's setting chosen on two collections (its mean
gain over `pairs` on its own measure) and reported on the third, which did not choose it, rotated, and pooled over
the three held-out collections' test queries; the default is the setting chosen on all three. Only the
confirmation's figures are reported as what a default gains (README, docs/losses.md).
Usage: python scripts/exp_real.py [--shared ../shared] [--out exp/real] [--jobs 2] [--runs LABEL;LABEL|all]
"""
import argparse
import functools
import json
import multiprocessing
import time
from pathlib import Path

import numpy as np
from scipy import stats

from svmstruct import api, model
from svmstruct.dataset import arrays
from svmstruct.evaluation import measures
from svmstruct.io import data

import experiment

REPORTED = {"ndcg@10": "NDCG@10", "mrr": "MRR", "P_10": "P@10", "map": "MAP"}
GRID = [0.001, 0.01, 0.1, 1, 10, 100, 1000]
# label: (loss, options, grid of C); a label without --position-weights is the loss's default map
WIDE = [0.0001, *GRID]  # the pairwise losses pick the smallest C of GRID on MSLR and Yahoo
# label: (loss, options, grid of C); a label without --pairwise / --position-weights is the loss's default
RUNS = {
    "pairs": ("pairs", {}, WIDE),
    "pairs-avg": ("pairs-avg", {}, WIDE),
    "map": ("map", {}, GRID),
    "ndcg@10": ("ndcg@10", {}, WIDE),
    "ndcg@10 --pairwise 0": ("ndcg@10", {"pairwise": 0.0}, GRID),
    "ndcg@10 --pairwise 0 --position-weights measure": ("ndcg@10", {"pairwise": 0.0, "position_weights": "measure"},
                                                        GRID),
    "ndcg@10 --pairwise 0 --position-weights pairs": ("ndcg@10", {"pairwise": 0.0, "position_weights": "pairs"}, GRID),
    "ndcg@10, --pairwise chosen on validation": ("ndcg@10", {"chosen": (0.0, 0.5, 1.0)}, WIDE),
    "mrr": ("mrr", {}, WIDE),
    "mrr --pairwise 0": ("mrr", {"pairwise": 0.0}, GRID),
    "mrr --pairwise 0 --position-weights measure": ("mrr", {"pairwise": 0.0, "position_weights": "measure"}, GRID),
    "mrr, --pairwise chosen on validation": ("mrr", {"chosen": (0.0, 0.5, 1.0)}, WIDE),
    "precision@10": ("precision@10", {}, WIDE),
    "precision@10 --pairwise 0.5": ("precision@10", {"pairwise": 0.5}, WIDE),
    "precision@10 --pairwise 0": ("precision@10", {"pairwise": 0.0}, GRID),
    "precision@10 --pairwise 0 --position-weights measure": ("precision@10", {"pairwise": 0.0,
                                                                              "position_weights": "measure"}, GRID),
    "precision@10 --pairwise 0 --position-weights pairs": ("precision@10", {"pairwise": 0.0,
                                                                            "position_weights": "pairs"}, GRID),
    "precision@10, --pairwise chosen on validation": ("precision@10", {"chosen": (0.0, 0.5, 1.0)}, WIDE),
    "combo:ndcg@10,mrr,map": ("combo:ndcg@10,mrr,map", {}, WIDE),
    # equal shares (summing to 1, as the default weights do)
    "combo:ndcg@10,mrr,map --combo-weights 1,1,1": ("combo:ndcg@10,mrr,map",
                                                    {"combo_weights": ",".join([str(1 / 3)] * 3)}, WIDE),
}


# what `make exp-real` runs: pairs and each listwise loss's default beside the settings its default was chosen among
# (--runs all: also the other maps and --pairwise chosen on validation, about twice the time)
DEFAULT_RUNS = ["pairs", "map", "ndcg@10", "ndcg@10 --pairwise 0", "mrr", "mrr --pairwise 0", "precision@10",
                "precision@10 --pairwise 0.5", "precision@10 --pairwise 0", "combo:ndcg@10,mrr,map",
                "combo:ndcg@10,mrr,map --combo-weights 1,1,1"]


def variants(loss_name: str, opts: dict) -> list:
    """(loss, options) of each candidate of a run: its own, or one for every --pairwise value of `chosen` (the one
    that validates best is kept)."""
    if "chosen" not in opts:
        return [(loss_name, opts)]
    return [(loss_name, {"pairwise": weight}) for weight in opts["chosen"]]


COLLECTIONS = ("MQ2008", "MSLR", "Yahoo")


@functools.lru_cache(maxsize=None)
def folds(collection: str, shared: Path) -> list:
    """The five (train, validation, test) datasets of a collection, and its --normalize."""
    if collection == "MQ2008":
        return [experiment.load_split(train, vali, test) for _, train, vali, test in experiment.mq2008_folds(shared)]
    if collection == "MSLR":
        experiment.require(shared / "data" / "mslr-sample" / "train.txt")
        whole = data.read_svmlight(str(shared / "data" / "mslr-sample" / "train.txt"))
    else:
        files = [shared / "data" / "yahoo-sample" / f"{part}.txt" for part in ("train", "test")]
        experiment.require(*files)
        whole = arrays.concatenate([data.read_svmlight(str(f)) for f in files])
    cuts = [int(whole.qptr[round(i * whole.n_examples / 5)]) for i in range(6)]
    parts = [experiment.subset(whole, cuts[i], cuts[i + 1]) for i in range(5)]
    out = []
    for k in range(5):
        train = arrays.concatenate([parts[(k + i) % 5] for i in range(3)])
        out.append((train, parts[(k + 3) % 5], parts[(k + 4) % 5]))
    return out


def normalization(collection: str) -> str:
    return "query" if collection == "MSLR" else "none"


def per_query(test, scores) -> dict:
    return {m: measures.per_query(measures.lookup(m), test.y, scores, test.qptr, test.docids).tolist()
            for m in REPORTED}


def one_job(job) -> tuple:
    """Train one run on one fold: C (and the run's option grid) chosen on validation by its own measure."""
    collection, k, label, shared, out = job
    path = Path(out) / "jobs" / f"{collection}-{k}-{label.replace(' ', '_').replace('/', '_')}.json"
    if path.exists():
        return collection, k, label, json.loads(path.read_text())
    start = time.perf_counter()
    train, vali, test = folds(collection, Path(shared))[k]
    loss_name, opts, grid = RUNS[label]
    own_loss, own_opts = api.resolve_loss(loss_name, {k: v for k, v in opts.items() if k != "chosen"})
    own = own_loss.measure(own_opts)  # every variant is chosen by the run's own loss's measure
    best, chosen = None, 0
    for i, (name, options) in enumerate(variants(loss_name, opts)):
        loss, full = api.resolve_loss(name, options)
        point, _ = api.select_C(loss, full, train, vali, own, api.Settings(grid, normalize=normalization(collection)))
        if best is None or point.value > best.value:
            best, chosen = point, i
    result = dict(C=best.C, learned=bool(best.result.learned), norm=float(np.linalg.norm(best.model.w)),
                  validation=best.value, test=per_query(test, model.score(best.model, test)),
                  variant=chosen, seconds=time.perf_counter() - start)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))
    return collection, k, label, result


def report(results: dict, runs: list) -> str:
    lines = []
    for collection in COLLECTIONS:
        mine = {label: [results[(collection, k, label)] for k in range(5)] for label in runs
                if all((collection, k, label) in results for k in range(5))}
        if "pairs" not in mine:
            continue
        pooled = {label: {m: np.concatenate([r["test"][m] for r in rs]) for m in REPORTED}
                  for label, rs in mine.items()}
        n = len(pooled["pairs"]["ndcg@10"])
        lines += [f"**{collection}** ({n} test queries over 5 folds; against `pairs`: the difference, wins/losses "
                  "over queries, Wilcoxon p)", "",
                  "| run | " + " | ".join(REPORTED.values()) + " | C per fold | w = 0 |", "|---|" + "---|" * 6]
        for label, values in pooled.items():
            cells = []
            for m in REPORTED:
                a, b = values[m], pooled["pairs"][m]
                if label == "pairs":
                    cells.append(f"{a.mean():.4f}")
                    continue
                p = stats.wilcoxon(a, b).pvalue if np.any(a != b) else 1.0
                cells.append(f"{a.mean():.4f} ({a.mean() - b.mean():+.4f}, {int(np.sum(a > b))}/{int(np.sum(a < b))},"
                             f" p {p:.2g})")
            unlearned = sum(not r["learned"] for r in mine[label])
            lines.append(f"| `{label}` | " + " | ".join(cells) + " | " + ", ".join(f"{r['C']:g}" for r in mine[label])
                         + f" | {unlearned or ''} |")
        lines.append("")
    return "\n".join(lines)


# each listwise loss, judged by its own measure (combo by its first loss's); its candidates are the runs of that loss
OWN_MEASURE = {"map": "map", "ndcg@10": "ndcg@10", "mrr": "mrr", "precision@10": "P_10",
               "combo:ndcg@10,mrr,map": "ndcg@10"}


def gains(results: dict, collection: str, label: str, measure: str) -> np.ndarray:
    """Per test query of a collection (its five folds' test parts in order): the run's measure minus `pairs`'."""
    def pooled(run):
        return np.concatenate([results[(collection, k, run)]["test"][measure] for k in range(5)])
    return pooled(label) - pooled("pairs")


def choose(results: dict, loss: str, collections: list, runs: list) -> str:
    """The run of `loss` with the largest mean gain over `pairs` on its own measure, each collection weighing equally
    (a collection's figure is its test queries' mean): the choice reads only `collections`."""
    measure = OWN_MEASURE[loss]
    candidates = [label for label in runs if RUNS[label][0] == loss]
    return max(candidates, key=lambda label: np.mean([gains(results, c, label, measure).mean() for c in collections]))


def against_pairs(diff: np.ndarray) -> str:
    p = stats.wilcoxon(diff).pvalue if np.any(diff != 0) else 1.0
    return f"{diff.mean():+.4f} ({int(np.sum(diff > 0))}/{int(np.sum(diff < 0))}, p {p:.2g})"


def confirmation(results: dict, runs: list) -> str:
    """Leave one collection out: each loss's setting chosen on two collections, reported on the third (which did
    not choose it), rotated; then pooled over the three held-out collections' test queries."""
    complete = [c for c in COLLECTIONS if all((c, k, label) in results for k in range(5) for label in runs)]
    if len(complete) < 3:
        return ""
    lines = ["**Confirmation: leave one collection out** (each loss's setting chosen on the other two collections "
             "by its mean gain over `pairs` on its own measure, reported on the held-out one; against `pairs`: the "
             "difference, wins/losses over queries, Wilcoxon p)", "",
             "| loss (measure) | held out | chosen on the other two | gain where chosen | held-out: against `pairs` |",
             "|---|---|---|---|---|"]
    pooled_lines = ["", "| loss (measure) | pooled over the held-out test queries | chosen on all three (the default) "
                    "| its gain there |", "|---|---|---|---|"]
    for loss, measure in OWN_MEASURE.items():
        if not any(RUNS[label][0] == loss for label in runs):
            continue
        held = []
        for out in COLLECTIONS:
            others = [c for c in COLLECTIONS if c != out]
            label = choose(results, loss, others, runs)
            diff = gains(results, out, label, measure)
            where = np.mean([gains(results, c, label, measure).mean() for c in others])
            held.append(diff)
            lines.append(f"| `{loss}` ({REPORTED[measure]}) | {out} | `{label}` | {where:+.4f} | "
                         f"{against_pairs(diff)} |")
        default = choose(results, loss, list(COLLECTIONS), runs)
        everywhere = np.mean([gains(results, c, default, measure).mean() for c in COLLECTIONS])
        pooled_lines.append(f"| `{loss}` ({REPORTED[measure]}) | {against_pairs(np.concatenate(held))} | "
                            f"`{default}` | {everywhere:+.4f} |")
    return "\n".join(lines + pooled_lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--out", default="exp/real")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", default=None, help="semicolon-separated run labels, or all (default: DEFAULT_RUNS)")
    parser.add_argument("--collections", default=",".join(COLLECTIONS))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = DEFAULT_RUNS if args.runs is None else list(RUNS) if args.runs == "all" else args.runs.split(";")
    runs = [label for label in RUNS if label in wanted or label == "pairs"]
    collections = args.collections.split(",")
    jobs = [(c, k, label, args.shared, str(out)) for c in collections for k in range(5) for label in runs]
    start = time.perf_counter()
    results = {}
    with multiprocessing.Pool(args.jobs) as pool:
        for collection, k, label, result in pool.imap_unordered(one_job, jobs):
            results[(collection, k, label)] = result
            print(f"{collection} fold {k + 1} {label}: C {result['C']:g}, test NDCG@10 "
                  f"{np.mean(result['test']['ndcg@10']):.4f}, {result['seconds']:.0f} s", flush=True)
    text = (report(results, runs) + confirmation(results, runs)
            + f"\n{time.perf_counter() - start:.0f} s for what was not already in {out}/jobs.\n")
    (out / "results.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
