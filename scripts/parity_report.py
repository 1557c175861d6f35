"""Compare our training with every shared reference run; print a markdown table.

Columns: objective (ours, theirs), certified distance of the two weight vectors
(|w_ours - w_ref| against sqrt(2 gap_ours) + sqrt(2 gap_ref): the primal is 1-strongly convex, so
a solution with duality gap g lies within sqrt(2 g) of the optimum), Spearman of the test scores, and
the test accuracy / F1 / PRBEP of both models as our eval computes them (svm_perf cases).
Usage: python scripts/parity_report.py [--shared ../shared] [--only SUBSTRING]
"""
import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    from scipy.stats import spearmanr

    from svmstruct import model
    from svmstruct.evaluation import measures
    from svmstruct.io import data

    import reference
    from reference import all_cases, case, certified_weight_distance, classify_log, train_case

    reference.use_shared(args.shared)
    reference.require_shared()

    print("| case | pval ours | pval ref | rel. diff | ‖Δw‖ | certified bound | Spearman | acc ours/ref | F1 ours/ref "
          "| PRBEP ours/ref |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    names = [name for name in all_cases() if args.only in name]
    if not names:
        raise SystemExit(f"error: no reference case matches '{args.only}'")
    for name in names:
        c = case(name)
        trained, result = train_case(c)
        distance, bound = certified_weight_distance(c, trained, result)
        test = data.read_svmlight(str(c.test))
        scores = model.score(trained, test)
        rho = spearmanr(scores, c.pred).statistic
        row = (f"| {name} | {result.primal:.5f} | {c.pval:.5f} | {(result.primal - c.pval) / c.pval:+.1e} | "
               f"{distance:.4f} | {bound:.4f} | {rho:.4f} |")
        if "-perf-" in name:
            ref = classify_log(name)
            ours = {"Accuracy": measures.accuracy(test.y, scores, 0.0), "F1": measures.fbeta(1.0)(test.y, scores, 0.0),
                    "PRBEP": measures.prbep(test.y, scores, 0.0)}
            row += "".join(f" {100 * ours[k]:.2f}/{ref[k]:.2f} |" for k in ("Accuracy", "F1", "PRBEP"))
        else:
            row += " | | |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
