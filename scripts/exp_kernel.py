"""Linear against RBF kernel models (learn -t 2) with C, gamma and the basis size K chosen on validation data.

Data sets (each of another shape):
- MQ2008 (LETOR 4.0): its five folds, loss map; 46 query-normalised features in [0, 1].
- ring: a nonlinear ranking task generated here (seed 0): 10 features uniform in [0, 1), hidden score
  sum_{j<=5} cos(2 pi x_j) + N(0, 0.5^2), graded labels 0-4 from per-query quantiles (50/25/15/7/3 %, as
  ../shared/tools/make_synthetic_ltr.py), 40 documents a query; 200 queries train, 100 validate, 200 test.
  A document's relevance is not monotone in any feature: no linear scorer can rank it well.
- corn (Reuters-21578 ModApte, TF-IDF text, 9603/3299 documents), loss f1: every fifth training document
  validates. Sparse text, where linear models are known to be hard to beat.
Every run picks C from GRID and, for RBF, gamma from GAMMAS and K from SIZES, by the loss's own measure
on the validation part; the table gives the test measure (mean over the folds for MQ2008).
Usage: python scripts/exp_kernel.py [--shared ../shared] [--out exp/kernel] [--jobs 2] [--quick]
"""
import argparse
import multiprocessing
import time
from pathlib import Path

import numpy as np

from svmstruct import api, model
from svmstruct.evaluation import measures
from svmstruct.kernels.nystroem import Spec
from svmstruct.kernels.table import Kernel

import experiment

GRID = [0.1, 1, 10, 100, 1000]
GAMMAS = [0.03, 0.1, 0.3, 1, 3]
SIZES = [500, 2000]


def ring_files(out: Path) -> dict:
    """The nonlinear ranking task (module docstring), written once."""
    paths = {part: out / f"ring-{part}.txt" for part in ("train", "vali", "test")}
    if all(p.exists() for p in paths.values()):
        return paths
    rng = np.random.default_rng(0)
    cuts = np.array([0.50, 0.75, 0.90, 0.97])
    query = 0
    for part, queries in (("train", 200), ("vali", 100), ("test", 200)):
        with open(paths[part], "w") as f:
            for _ in range(queries):
                query += 1
                X = rng.random((40, 10))
                s = np.cos(2 * np.pi * X[:, :5]).sum(1) + rng.normal(scale=0.5, size=40)
                labels = np.searchsorted(np.quantile(s, cuts), s, side="right")
                for i in range(40):
                    features = " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(X[i]))
                    f.write(f"{labels[i]} qid:{query} {features} # docid=q{query}d{i}\n")
    return paths


def corn_files(out: Path, shared: Path) -> dict:
    """corn's training file split: every fifth line validates."""
    train = shared / "data" / "reuters" / "corn.train.svm"
    experiment.require(train)
    paths = {"train": out / "corn-train.svm", "vali": out / "corn-vali.svm",
             "test": shared / "data" / "reuters" / "corn.test.svm"}
    if not paths["vali"].exists():
        lines = train.read_text().splitlines(keepends=True)
        paths["train"].write_text("".join(line for i, line in enumerate(lines) if i % 5 != 4))
        paths["vali"].write_text("".join(line for i, line in enumerate(lines) if i % 5 == 4))
    return paths


def splits(out: Path, shared: Path, quick: bool) -> list:
    """(data set, split name, loss, train files, vali files, test files)."""
    jobs = []
    folds = list(experiment.mq2008_folds(shared))[: 1 if quick else 5]
    jobs += [("MQ2008", name, "map", t, v, s) for name, t, v, s in folds]
    ring = ring_files(out)
    for loss in ("map", "ndcg@10"):
        jobs.append(("ring", "ring", loss, [ring["train"]], [ring["vali"]], [ring["test"]]))
    corn = corn_files(out, shared)
    jobs.append(("corn", "corn", "f1", [corn["train"]], [corn["vali"]], [corn["test"]]))
    return jobs


def measure_of(loss: str) -> str:
    return {"map": "map", "ndcg@10": "ndcg@10", "f1": "f1"}[loss]


def one_split(job) -> tuple:
    dataset_name, split, loss_name, train_files, vali_files, test_files, quick = job
    start = time.perf_counter()
    train, vali, test = experiment.load_split(train_files, vali_files, test_files)
    loss, opts = api.resolve_loss(loss_name, {})
    measure = measure_of(loss_name)
    grid = [1, 100] if quick else GRID
    rows = {}
    candidates = [("linear", None)] + [
        (f"rbf g={g:g} K={k}", Spec(Kernel(2, 3, g, 1.0, 1.0), size=min(k, train.n_docs)))
        for g in ([0.3, 1] if quick else GAMMAS) for k in ([500] if quick else SIZES)]
    best_rbf = None
    for label, kernel in candidates:
        t0 = time.perf_counter()
        best, _ = api.select_C(loss, opts, train, vali, measure, api.Settings(grid), kernel)
        seconds = time.perf_counter() - t0
        value = float(measures.measure_table(test, model.score(best.model, test), [measure])[measure]["all"])
        row = dict(C=best.C, vali=best.value, test=value, seconds=seconds, learned=best.result.learned)
        if kernel is None:
            rows["linear"] = row
        elif best_rbf is None or best.value > best_rbf[1]["vali"]:
            best_rbf = (label, row)
    rows["rbf"] = dict(best_rbf[1], chosen=best_rbf[0])
    return dataset_name, split, loss_name, rows, time.perf_counter() - start


def report(results: list) -> str:
    lines = ["| data | loss (test measure) | linear: test | RBF: test | RBF - linear | RBF's gamma, K, C (per split) |",
             "|---|---|---|---|---|---|"]
    groups: dict = {}
    for dataset_name, split, loss, rows, _ in results:
        groups.setdefault((dataset_name, loss), []).append((split, rows))
    for (dataset_name, loss), items in groups.items():
        linear = np.mean([rows["linear"]["test"] for _, rows in items])
        rbf = np.mean([rows["rbf"]["test"] for _, rows in items])
        chosen = "; ".join(f"{rows['rbf']['chosen'].replace('rbf ', '')} C={rows['rbf']['C']:g}" for _, rows in items)
        where = f"{dataset_name} ({len(items)} folds)" if len(items) > 1 else dataset_name
        lines.append(f"| {where} | {loss} ({measure_of(loss)}) | {linear:.4f} | {rbf:.4f} | {rbf - linear:+.4f} | "
                     f"{chosen} |")
    lines.append("")
    lines.append("Per split (validation value of the chosen model, test value, seconds for the C grid):")
    lines.append("")
    for _, split, loss, rows, seconds in results:
        lin, rbf = rows["linear"], rows["rbf"]
        lines.append(f"- {split} {loss}: linear C={lin['C']:g} vali {lin['vali']:.4f} test {lin['test']:.4f} "
                     f"({lin['seconds']:.1f} s); {rbf['chosen']} C={rbf['C']:g} vali {rbf['vali']:.4f} test "
                     f"{rbf['test']:.4f} ({rbf['seconds']:.1f} s); split {seconds:.0f} s")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--out", default="exp/kernel")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="one fold, two gammas, K 500, C 1 and 100 (a smoke run)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(*job, args.quick) for job in splits(out, Path(args.shared), args.quick)]
    start = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        results = []
        for result in pool.imap_unordered(one_split, jobs):
            results.append(result)
            _, split, loss, rows, seconds = result
            print(f"{split} {loss}: linear {rows['linear']['test']:.4f}, {rows['rbf']['chosen']} "
                  f"{rows['rbf']['test']:.4f} ({seconds:.0f} s)", flush=True)
    order = {tuple(job[:3]): i for i, job in enumerate(jobs)}
    results.sort(key=lambda r: order[(r[0], r[1], r[2])])
    text = report(results) + f"\n{time.perf_counter() - start:.0f} s in all ({args.jobs} jobs).\n"
    (out / "results.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
