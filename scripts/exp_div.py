"""SVM-div on the paper's synthetic data (Yue & Joachims 2008, section 6 and Figure 4).

100 candidate sets (scripts/make_div_synthetic.py, subtopic vocabularies of `--support` words), split
15/10/75 into training, validation and test.
For each retrieval size K = 1..10: SVM-div trained for every C of the grid, C chosen by the validation
subtopic loss; baselines Essential Pages, unweighted word coverage and random (mean of 20 draws).
Prints and writes OUT/results.md (test loss per K) and OUT/loss_vs_k.png (if matplotlib is installed),
with training time per iteration and in total.
Usage: python scripts/exp_div.py [--out exp/div] [--support 30,2000] [--quick]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from svmstruct import api, training
from svmstruct.diversity import baselines, features, measures  # noqa: E402
from svmstruct.diversity import qrels as qrels_io
from svmstruct.io import data  # noqa: E402
from svmstruct.losses import div  # noqa: E402

from experiment import subset  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GRID = [0.1, 1, 10]


def mean_loss(dataset, covering, qrels, subsets):
    """Mean subtopic loss over the candidate sets of [(qid, row indices)], one entry per set in order."""
    losses_ = []
    for lo, hi, (_, rows) in zip(dataset.qptr[:-1], dataset.qptr[1:], subsets):
        topics, weights = qrels_io.subtopic_matrix(dataset, int(lo), int(hi), covering, qrels)
        losses_.append(measures.subtopic_loss(topics, weights, [r - int(lo) for r in rows]))
    return float(np.mean(losses_))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="exp/div")
    parser.add_argument("--support", default="30,2000", help="MIN,MAX words of a subtopic's vocabulary")
    parser.add_argument("--quick", action="store_true", help="K = 1, 5 and one C (a smoke run)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prefix = out / "synth"
    made_with = out / "synth.args"
    if not Path(f"{prefix}.svm").exists() or not made_with.exists() or made_with.read_text() != args.support:
        import subprocess

        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_div_synthetic.py"), str(prefix),
                        "--support", args.support], check=True)
        made_with.write_text(args.support)
    qrels = f"{prefix}.qrels"
    everything = data.read_svmlight(f"{prefix}.svm")
    covering = qrels_io.read_subtopics(qrels)
    cuts = [int(everything.qptr[q]) for q in (15, 25)]
    train_set = subset(everything, 0, cuts[0])
    vali_set = subset(everything, cuts[0], cuts[1])
    test_set = subset(everything, cuts[1], everything.n_docs)
    config = features.FeatureConfig.parse(None, None)
    ks = [1, 5] if args.quick else list(range(1, 11))
    grid = [1.0] if args.quick else GRID
    rows, timing = [], []
    for K in ks:
        loss, opts = api.resolve_loss("div", {"subtopics": qrels, "k": K})
        best = None
        settings = api.Settings(grid, max_iterations=500)
        for trained in training.train_grid(training.LocalSource(train_set), loss, opts, settings):
            C, result = float(trained.C), trained.result
            timing.append((K, C, result.iterations, result.seconds))
            value = mean_loss(vali_set, covering, qrels, div.selections(trained, vali_set))
            if best is None or value < best[0]:
                best = (value, C, trained)
        test_loss = lambda subsets: mean_loss(test_set, covering, qrels, subsets)  # noqa: E731
        svm = test_loss(div.selections(best[2], test_set))
        ep = test_loss(baselines.baseline(test_set, "essential-pages", K, config))
        unweighted = test_loss(baselines.baseline(test_set, "unweighted", K, config))
        random = np.mean([test_loss(baselines.baseline(test_set, "random", K, config, seed)) for seed in range(20)])
        rows.append((K, best[1], svm, ep, unweighted, random))
        print(f"K={K}: C {best[1]:g}  SVM-div {svm:.4f}  Essential Pages {ep:.4f}  unweighted {unweighted:.4f}  "
              f"random {random:.4f}", file=sys.stderr, flush=True)
    iterations = sum(t[2] for t in timing)
    seconds = sum(t[3] for t in timing)
    lines = ["| K | C | SVM-div | Essential Pages | unweighted coverage | random |", "|---|---|---|---|---|---|"]
    lines += [f"| {K} | {C:g} | {s:.4f} | {e:.4f} | {u:.4f} | {r:.4f} |" for K, C, s, e, u, r in rows]
    lines.append(f"\nTest subtopic loss (weighted fraction of subtopics not covered; lower is better) on the 75 test "
                 f"candidate sets, subtopic vocabularies of {args.support.replace(',', '..')} words. "
                 f"Training: {len(timing)} runs, {iterations} iterations, {seconds:.0f} s in all, "
                 f"{1000 * seconds / max(iterations, 1):.0f} ms per iteration.")
    text = "\n".join(lines) + "\n"
    (out / "results.md").write_text(text)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for index, label in enumerate(["SVM-div", "Essential Pages", "unweighted coverage", "random"], 2):
            ax.plot([r[0] for r in rows], [r[index] for r in rows], marker="o", label=label)
        ax.set_xlabel("retrieval size K")
        ax.set_ylabel("test subtopic loss")
        ax.set_title(f"Synthetic data, subtopic vocabularies {args.support.replace(',', '..')} words", fontsize=10)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "loss_vs_k.png", dpi=120)
    except ImportError:
        print("matplotlib is not installed (pip install matplotlib): no plot written", file=sys.stderr)
    print(text)


if __name__ == "__main__":
    main()
