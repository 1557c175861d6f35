"""Assemble docs/experiments.md from the results the Makefile experiments wrote (exp/*/results.md).

Every table in docs/experiments.md is the output of the command named above it; run the commands, then
this (`make experiments-doc`). A missing result is an error naming the command that makes it.
Usage: python scripts/experiments_doc.py [--exp exp] [--out docs/experiments.md]
"""
import argparse
import datetime
from pathlib import Path

SECTIONS = [  # (directory under exp/, command, title, what it shows)
    ("real", "make exp-real", "The ranking losses on three real collections (the defaults are decided here)",
     "MQ2008 (LETOR 4.0's 5 folds), the MSLR-WEB10K sample (43 queries of ~116 documents, raw features normalised "
     "per query) and the Yahoo sample (251 queries of ~15 documents), the last two in 5 folds of their queries "
     "rotated as LETOR's (train three parts, validate the next, test the one after). Each run's C (and, for "
     "'chosen on validation', its --pairwise in 0, 0.5, 1) is chosen on the validation part by its own loss's "
     "measure; the test queries of the five folds are pooled. A label without --pairwise or --position-weights is "
     "the loss's default. w = 0: folds whose model is w = 0."),
    ("dorm", "make exp-dorm", "DORM: NDCG@k, MRR and WTA directly (Le & Smola 2007)",
     "MQ2008 (5 folds: train on three parts, validate on the fourth, test on the fifth) and the Yahoo LTR "
     "sample. Every loss's C is chosen on the validation part by NDCG@10 (first part) or MRR (second part); "
     "test values per split and their mean, then per-query wins/losses of the DORM model against each other "
     "loss with Wilcoxon signed-rank p-values."),
    ("longlists", "make exp-longlists", "The listwise losses on long candidate lists",
     "120 documents a query (../shared/tools/make_synthetic_ltr.py, 46 features, seed 1): queries 1-200 train, "
     "201-250 validate, 251-300 test, 301-1300 are a held-out set. Each run's C is chosen on the validation part "
     "by its own measure."),
    ("noisy", "make exp-noisy", "The ranking losses on noisy lists with many relevant documents",
     "150 documents a query, 30 % relevant on a 0/1/2 scale (../shared/tools/make_synthetic_ltr.py --cuts 0.70,0.86, "
     "noise 4 and 6): queries 1-200 train, 201-300 validate, 301-1300 test; each run's C chosen on the validation "
     "part by its own measure."),
    ("mq2008", "make exp-mq2008", "SVM-map against the other losses on MQ2008 (Yue et al. 2007, Tables 9-11)",
     "C chosen on validation MAP; test MAP and NDCG@10 per fold and mean."),
    ("div", "make exp-div", "SVM-div on the paper's synthetic data (Yue & Joachims 2008, Figure 4)",
     "Subtopic vocabularies of 30..2000 words; C chosen on the validation sets by subtopic loss."),
    ("div-uniform", "make exp-div", "SVM-div, every subtopic of 200 words", "The second run of `make exp-div`."),
    ("engine", "make bench-engine", "Training engine: the plain cutting-plane loop against OCAS",
     "Iterations, oracle calls, seconds and primal objective of both engines on the same problems in the same "
     "run (svmstruct's trainer with `line_search=False` and `True`). SVM-div's greedy oracle is not exact, so "
     "`learn` does not use the line search for it (the row shows what it would do)."),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--exp", default="exp")
    parser.add_argument("--out", default="docs/experiments.md")
    args = parser.parse_args()
    parts = ["# Experiments", "",
             "Each section is the `results.md` its command writes into `exp/`, assembled by "
             f"`make experiments-doc` on {datetime.date.today().isoformat()}. The commands need the shared "
             "data (`../shared`, or `SHARED=...`).", ""]
    for directory, command, title, what in SECTIONS:
        results = Path(args.exp) / directory / "results.md"
        if not results.exists():
            raise SystemExit(f"error: {results} is missing: run `{command}` first")
        body = results.read_text().strip().replace("\n## ", "\n### ")
        if body.startswith("## "):
            body = "#" + body
        parts += [f"## {title}", "", f"`{command}` — {what}", "", body, ""]
    Path(args.out).write_text("\n".join(parts))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
