"""Shared driver of the Makefile experiments: splits x losses x C grid -> table of test measures.

For every split (train, validation, test), every run (a loss with options and a C grid) is trained for
each C; the C with the best validation value of the selection measure is kept and the test queries are
scored. The report (markdown) gives each reported measure per split and its mean, and the per-query
wins/losses of the base run against every other run over all test queries with Wilcoxon signed-rank
p-values (scipy), the layout of Yue et al. 2007 (Tables 9-11) and Le & Smola 2007.
"""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

from svmstruct import api, model
from svmstruct.dataset import arrays
from svmstruct.evaluation import measures
from svmstruct.io import data

# the benchmarks time and measure each command's own process (`/usr/bin/time -v`): not through the resident
# worker (svmstruct.worker.resident), whose caller process is not the one that works; bench_batch times both
os.environ.setdefault("SVMSTRUCT_RESIDENT", "0")


class CpuHogs:
    """Busy processes (two: the cores of the project's machine) for the duration of a `with` block, as other
    jobs on a shared machine would be."""

    def __init__(self, count: int = 2):
        self.count = count

    def __enter__(self):
        self.hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(self.count)]
        time.sleep(0.3)
        return self

    def __exit__(self, *exc):
        for hog in self.hogs:
            hog.kill()
            hog.wait()


def require(*paths: Path) -> None:
    """Exit with one clear line when data an experiment needs is absent (e.g. no ../shared)."""
    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        raise SystemExit(f"error: this experiment needs {missing[0]} (the shared data: ../shared beside the "
                         "repository, or SHARED=... / --shared)")


def time_v_figures(text: str) -> tuple[float, float]:
    """(wall seconds, peak resident MB) from the report of /usr/bin/time -v."""
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", text)
    seconds = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    return seconds, int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024


def time_v(cmd: list) -> tuple[str, float, float]:
    """Run cmd under /usr/bin/time -v: (its stdout and stderr, wall seconds, peak resident MB); exit on failure."""
    run = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(run.stderr[-2000:])
    return run.stdout + run.stderr, *time_v_figures(run.stderr)


def synthetic_ltr(path: Path, queries: int, shared: Path, *options: str) -> None:
    """Generate ../shared/tools/make_synthetic_ltr.py's file of `queries` queries at path once (if absent);
    `options` are the tool's (--docs, --features, --seed)."""
    if path.exists():
        return
    tool = shared / "tools" / "make_synthetic_ltr.py"
    require(tool)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    subprocess.run([sys.executable, str(tool), str(partial), str(queries), *options], check=True)
    partial.rename(path)


def mq2008_folds(shared: Path):
    """LETOR's five folds: FoldK trains on S_k..S_k+2, validates on S_k+3, tests on S_k+4."""
    require(*(shared / "data" / "mq2008" / f"S{k}.txt" for k in range(1, 6)))
    part = lambda k, i: shared / "data" / "mq2008" / f"S{(k - 1 + i) % 5 + 1}.txt"  # noqa: E731
    for k in range(1, 6):
        yield f"MQ2008 F{k}", [part(k, 0), part(k, 1), part(k, 2)], [part(k, 3)], [part(k, 4)]


def load_split(train_files, vali_files, test_files, vali_fraction=None):
    train = arrays.concatenate([data.read_svmlight(str(f)) for f in train_files])
    if vali_files:
        vali = arrays.concatenate([data.read_svmlight(str(f), n_features=train.n_features) for f in vali_files])
    else:  # the last queries of the training file validate
        cut = int(train.qptr[int(round(train.n_examples * (1 - vali_fraction)))])
        train, vali = subset(train, 0, cut), subset(train, cut, train.n_docs)
    test = arrays.concatenate([data.read_svmlight(str(f), n_features=train.n_features) for f in test_files])
    return train, vali, test


def subset(d, lo, hi):
    """Rows lo:hi of a dataset (whole queries)."""
    qptr = d.qptr[(d.qptr >= lo) & (d.qptr <= hi)] - lo
    docids = data.Docids()
    for doc in d.docids[lo:hi]:
        docids.append(doc)
    return data.Dataset(d.X[lo:hi], d.y[lo:hi], d.qid[lo:hi], qptr, docids.freeze(), d.line[lo:hi], d.path, d.has_qid)


def run(splits, runs, select, reported, base, quick=False, log=sys.stderr):
    """Train and evaluate; returns (per-split means, per-query values, chosen models) dictionaries; a chosen
    model is described by its C, slack xi, |w|, iterations and training value of the selection measure."""
    per_query = {label: {m: [] for m in reported} for label in runs}
    per_split = {label: {m: [] for m in reported} for label in runs}
    chosen = {label: [] for label in runs}
    names = []
    start = time.perf_counter()
    for name, train_files, vali_files, test_files, *rest in splits:
        train, vali, test = load_split(train_files, vali_files, test_files, *rest)
        names.append(name)
        for label, (loss_name, opts, grid) in runs.items():
            loss, full_opts = api.resolve_loss(loss_name, opts)
            grid = grid[1:-1:2] if quick else grid
            best, _ = api.select_C(loss, full_opts, train, vali, select, api.Settings(grid))
            train_value = measures.per_query(measures.lookup(select), train.y, model.score(best.model, train),
                                             train.qptr, train.docids).mean()
            chosen[label].append(dict(C=best.C, xi=best.result.xi, norm=float(np.linalg.norm(best.model.w)),
                                      iterations=best.result.iterations, train=float(train_value)))
            scores = model.score(best.model, test)
            for m in reported:
                values = measures.per_query(measures.lookup(m), test.y, scores, test.qptr, test.docids)
                per_query[label][m].append(values)
                per_split[label][m].append(float(values.mean()))
        print(f"{name} done ({time.perf_counter() - start:.0f} s)", file=log, flush=True)
    return names, per_split, per_query, chosen, time.perf_counter() - start


def report(names, per_split, per_query, chosen, seconds, reported, base, select):
    lines = []
    for m in reported:
        lines += [f"**{m}** (test; C chosen by validation {select})", "",
                  "| loss | " + " | ".join(names) + " | mean | C per split |", "|---|" + "---|" * (len(names) + 2)]
        for label in per_split:
            cells = [f"{v:.4f}" for v in per_split[label][m]]
            lines.append(f"| {label} | " + " | ".join(cells) + f" | **{np.mean(per_split[label][m]):.4f}** | "
                         + ", ".join(f"{c['C']:g}" for c in chosen[label]) + " |")
        lines.append("")
    lines += [f"The chosen models: xi / \\|w\\| / iterations / training {select} per split (a model near w = 0 "
              "would show xi near its value at w = 0 and a tiny \\|w\\|)", "",
              "| loss | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for label in chosen:
        lines.append(f"| {label} | " + " | ".join(f"{c['xi']:.3f} / {c['norm']:.3g} / {c['iterations']} / "
                                                   f"{c['train']:.4f}" for c in chosen[label]) + " |")
    lines.append("")
    lines += [f"`{base}` against each run over all test queries: wins/losses of {base}, Wilcoxon signed-rank p", "",
              "| against | " + " | ".join(reported) + " |", "|---|" + "---|" * len(reported)]
    for label in per_split:
        if label == base:
            continue
        cells = []
        for m in reported:
            a, b = np.concatenate(per_query[base][m]), np.concatenate(per_query[label][m])
            p = stats.wilcoxon(a, b).pvalue if np.any(a != b) else 1.0
            cells.append(f"{int(np.sum(a > b))}/{int(np.sum(a < b))} (p = {p:.3g})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    n = sum(len(v) for v in next(iter(per_query.values()))[reported[0]])
    lines.append(f"\n{n} test queries; {seconds:.0f} s in all.")
    return "\n".join(lines) + "\n"
