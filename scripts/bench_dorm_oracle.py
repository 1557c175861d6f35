"""DORM oracle time per call, one thread.

1. The losses' whole oracles (problem.most_violated) on 200 queries of 120 documents with labels 0-4 in
   the proportions of ../shared/tools/make_synthetic_ltr.py (50/25/15/7/3 %), at random scores: every
   listwise loss with the measure's own map and with Le & Smola's pow:0.5, the default pairwise maps of
   ndcg@10, precision@10 and mrr, next to pairs and map.
2. The pairwise maps (pairs, top-pairs) and combo on 200 noisy-list queries of 150 documents, labels 0/1/2
   (70/16/14 %, ../shared/tools/make_synthetic_ltr.py --cuts 0.70,0.86), next to pairs and map.
3. The positional map's two exact solvers against the query size: the linear assignment (scipy, O(l^3))
   and the truncated dynamic program (NDCG@10 with grades 0-2 and 0-4), on random queries.
Usage: python scripts/bench_dorm_oracle.py [n ...]
"""
import sys
import time

import numba
import numpy as np

from svmstruct import api
from svmstruct.dataset import arrays
from svmstruct.losses import dorm, dorm_oracles

COMPLEXITY = {  # per query of l documents, k the cut-off, L the number of grades
    "measure": "O(l log l): sort by score - gain",
    "measure-mrr": "O(l log l): the best relevant document, the others by score",
    "pow:0.5": "O(l C(k+L-1, L-1)) truncated program or O(l^3) assignment, whichever is cheaper",
    "pow:0.5-mrr": "O(l^2): every rank of the first relevant document",
    "pairs": "O(l log l) (Fenwick tree over label ranks)",
    "map": "O(l log l) (Yue et al. 2007, divide and conquer over the negatives)",
    "pairs-map": "O(l C(k+L-1, L-1)): truncated program, every pair (one scan per full state)",
    "pairs-map-mrr": "O(l^2): every rank of the first relevant document, one scan each",
    "pairs-mrr": "O(l^2): every rank of the first relevant document, one scan each",
    "top-pairs": "O(C(k+L, L) L^2): truncated program, the top-by-rest pairs in closed form",
    "combo": "the sum of its losses' oracles",
}


def per_call(fn, *args):
    fn(*args)
    reps, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.5 or reps < 3:
        fn(*args)
        reps += 1
    return (time.perf_counter() - start) / reps


def long_list_data(queries=200, docs=120, features=46, seed=1, cuts=(0.5, 0.75, 0.9, 0.97)):
    rng = np.random.default_rng(seed)
    labels = np.concatenate([np.searchsorted(cuts, rng.permutation(docs) / docs, side="right")
                             for _ in range(queries)]).astype(float)
    X = rng.random((queries * docs, features))
    return arrays.from_arrays(X, labels, np.repeat(np.arange(1, queries + 1), docs))


def whole_oracles():
    dataset = long_list_data()
    scores = np.random.default_rng(0).normal(size=dataset.n_docs)
    print(f"Whole oracle, {dataset.n_examples} queries x {dataset.n_docs // dataset.n_examples} documents, 1 thread")
    print(f"{'loss':<14} {'map':<8} {'ms/call':>9} {'us/query':>9}  complexity per query")
    runs = [(name, spec) for name in ("ndcg@10", "precision@10", "mrr", "wta", "mwta", "eru")
            for spec in ("measure", "pow:0.5")] + [("ndcg@10", "top-pairs"), ("precision@10", "top-pairs"),
                                                   ("mrr", "pairs"), ("pairs", None), ("map", None)]
    for name, spec in runs:
        problem = api.problem(dataset, name, **({"position_weights": spec} if spec else {}))
        seconds = per_call(problem.most_violated, scores)
        key = name if spec is None else spec + ("-mrr" if name == "mrr" else "")
        print(f"{name:<14} {spec or '':<8} {1e3 * seconds:9.2f} {1e6 * seconds / problem.n:9.1f}  {COMPLEXITY[key]}",
              flush=True)


def pairwise_maps():
    dataset = long_list_data(docs=150, features=45, cuts=(0.70, 0.86))
    scores = np.random.default_rng(0).normal(size=dataset.n_docs)
    print(f"\nThe pairwise maps, {dataset.n_examples} queries x {dataset.n_docs // dataset.n_examples} documents, "
          "labels 0/1/2 (70/16/14 %), 1 thread")
    print(f"{'loss':<22} {'map':<10} {'ms/call':>9} {'us/query':>9}  complexity per query")
    runs = [("pairs", None, "pairs"), ("map", None, "map"), ("ndcg@10", "top-pairs", "top-pairs"),
            ("precision@10", "top-pairs", "top-pairs"), ("ndcg@10", "pairs", "pairs-map"),
            ("mrr", "pairs", "pairs-map-mrr"), ("ndcg@10", "measure", "measure"),
            ("combo:ndcg@10,mrr,map", None, "combo")]
    for name, spec, key in runs:
        problem = api.problem(dataset, name, **({"position_weights": spec} if spec else {}))
        seconds = per_call(problem.most_violated, scores)
        print(f"{name:<22} {spec or '':<10} {1e3 * seconds:9.2f} {1e6 * seconds / problem.n:9.1f}  {COMPLEXITY[key]}",
              flush=True)


def positional_solvers(sizes):
    rng = np.random.default_rng(0)
    print(f"\nLe & Smola's positional map: the two exact solvers per query\n"
          f"{'n':>6} {'grades':>6} {'assignment ms':>14} {'truncated ms':>13} {'speed-up':>9}")
    for n in sizes:
        for grades in (3, 5):
            labels = rng.integers(0, grades, size=n).astype(float)
            g = rng.normal(size=n)
            a, b = dorm.measure_vectors("ndcg@k", labels, {"k": 10})
            c = dorm.position_weights("pow:0.5", n)
            lsa = per_call(dorm_oracles.assignment_oracle, g, a, b, c)
            fast = per_call(dorm_oracles.truncated_oracle, g, a, b, b, c, 10)
            print(f"{n:6d} {grades:6d} {1e3 * lsa:14.3f} {1e3 * fast:13.3f} {lsa / fast:9.1f}", flush=True)


def main():
    numba.set_num_threads(1)
    whole_oracles()
    pairwise_maps()
    positional_solvers([int(a) for a in sys.argv[1:]] or [50, 100, 200, 500, 1000])


if __name__ == "__main__":
    main()
