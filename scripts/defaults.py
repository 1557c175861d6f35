"""What `svmstruct learn` gives without -c: each loss family trained at its default C on the shared data of that
family, beside a grid of C, tested on held-out data (the originals refuse to run without -c; their help says
"default 0.01").

- svm_perf's losses (errorrate, f1, rocarea) on the three Reuters tasks: test accuracy / F1 / ROC area;
- svm_rank's pairs, SVM-map and DORM's ndcg@10 on MQ2008 (Fold1: S1-S3 / S5), the Yahoo sample (train / test)
  and the MSLR sample (its first 30 queries / the other 13, features normalised per query): test NDCG@10 / MAP.
A row is the loss's own measure at each C; `default` is its value at the C `learn` takes without -c, `best` the
grid's best, `w = 0` the value of the scores of w = 0 (every score tied). Usage:
python scripts/defaults.py [--shared ../shared] [--losses ndcg@10,map]
"""
import argparse
from pathlib import Path

import numpy as np

from svmstruct import api, model, registry
from svmstruct.dataset import arrays
from svmstruct.evaluation import measures
from svmstruct.io import data

import experiment

GRID = [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]


def measure_of(dataset, scores, name: str) -> float:
    return float(measures.measure_table(dataset, scores, [name])[name]["all"])


def cases(shared: Path) -> list:
    """(family label, loss, measure, train, test, normalize) for every case."""
    reuters = shared / "data" / "reuters"
    out = []
    for task in ("acq", "corn", "earn"):
        train, test = [reuters / f"{task}.train.svm"], [reuters / f"{task}.test.svm"]
        out += [(f"Reuters {task}", "errorrate", "accuracy", train, test, "none"),
                (f"Reuters {task}", "f1", "f1", train, test, "none"),
                (f"Reuters {task}", "rocarea", "rocarea", train, test, "none")]
    mq, yahoo = shared / "data" / "mq2008", shared / "data" / "yahoo-sample"
    folds = {"MQ2008 Fold1": ([mq / f"S{i}.txt" for i in (1, 2, 3)], [mq / "S5.txt"], "none"),
             "Yahoo": ([yahoo / "train.txt"], [yahoo / "test.txt"], "none"),
             "MSLR": ("mslr", None, "query")}
    for name, (train, test, normalize) in folds.items():
        for loss, measure in (("pairs", "ndcg@10"), ("map", "map"), ("ndcg@10", "ndcg@10")):
            out.append((name, loss, measure, train, test, normalize))
    return out


def read(files, shared: Path, part: str):
    if files == "mslr":  # the first 30 queries train, the other 13 test
        whole = data.read_svmlight(str(shared / "data" / "mslr-sample" / "train.txt"), dtype=np.float64)
        cut = int(whole.qptr[30])
        rows = slice(0, cut) if part == "train" else slice(cut, whole.n_docs)
        return arrays.from_arrays(whole.X[rows], whole.y[rows], whole.qid[rows],
                                [whole.docids[i] for i in range(rows.start, rows.stop)])
    parts = [data.read_svmlight(str(f), dtype=np.float64) for f in files]
    return parts[0] if len(parts) == 1 else arrays.concatenate(parts)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--losses", default=None, help="comma-separated losses to run (default: all)")
    args = parser.parse_args()
    chosen = None if args.losses is None else set(args.losses.split(","))
    shared = Path(args.shared)
    experiment.require(shared / "data" / "reuters", shared / "data" / "mq2008", shared / "data" / "yahoo-sample",
                       shared / "data" / "mslr-sample")
    print(f"{'data':<14} {'loss':<10} {'measure':<9} " + " ".join(f"{f'C {c:g}':>8}" for c in GRID)
          + f" {'w = 0':>8} {'default':>14} {'best':>12}")
    for name, loss, measure, train_files, test_files, normalize in cases(shared):
        if chosen is not None and loss not in chosen:
            continue
        train = read(train_files, shared, "train")
        test = read(test_files or "mslr", shared, "test")
        test = arrays.from_arrays(test.X[:, :train.n_features] if test.n_features > train.n_features else test.X,
                                test.y, test.qid if test.has_qid else None, test.docids)
        default_C = registry.lookup(loss)[0].default_C
        values = []
        for C in GRID:
            trained = api.fit(train, loss=loss, C=C, normalize=normalize)
            values.append(measure_of(test, model.score(trained, test), measure))
        zero = measure_of(test, np.zeros(test.n_docs), measure)
        at_default = api.fit(train, loss=loss, C=default_C, normalize=normalize)
        value = measure_of(test, model.score(at_default, test), measure)
        best = int(np.argmax(values))
        print(f"{name:<14} {loss:<10} {measure:<9} " + " ".join(f"{v:8.4f}" for v in values)
              + f" {zero:8.4f} {f'{value:.4f} (C {default_C:g})':>14} {f'{values[best]:.4f} (C {GRID[best]:g})':>12}",
              flush=True)


if __name__ == "__main__":
    main()
