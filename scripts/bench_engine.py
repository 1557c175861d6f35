"""Iterations of the training engine: the plain 1-slack cutting-plane loop against OCAS's line search.

The reference runs' cases (their -c/-e): corn `errorrate -c 10000 -e 0.001` (and at
-e 0.0001, to see how close both engines' objectives are to the optimum), MQ2008 S1
`avgprec -c 1`, MQ2008 S1+S2+S3 `pairs -c 100 -e 0.0001`, and the training runs of `make exp-div` (K = 1..10
x C in 0.1, 1, 10 on its synthetic data, 500 iterations at most, in total). Each case is trained twice in
the same run, `line_search=False` (the loop of svm_struct, the baseline) and `line_search=True`
(Franc & Sonnenburg 2009); grids of five C (MQ2008 S1 map and pairs, corn errorrate) also with each
C warm-started from the previous one's final state, as training.train_grid does for exact oracles. The table gives
iterations, oracle calls, seconds and the primal objectives with their relative difference; for div, whose
greedy oracle certifies each run's objective with its own (different) errors, also every model's objective
measured alike by div_yardstick (the oracle's answers improved by swap local search).
Usage: python scripts/bench_engine.py [--shared ../shared] [--only NAME-SUBSTRING] [--no-div] [--out DIR]
"""
import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from svmstruct import api, training
from svmstruct.dataset import arrays
from svmstruct.diversity import qrels  # noqa: E402
from svmstruct.diversity.features import candidate_sets, split_scores  # noqa: E402
from svmstruct.diversity.greedy import select  # noqa: E402
from svmstruct.io import data
from svmstruct.losses import div  # noqa: E402
from svmstruct.train import loop  # noqa: E402
from svmstruct.train.loop_state import LoopState, working_set  # noqa: E402
from svmstruct.train.qp import DualQP  # noqa: E402

from experiment import require, subset  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# (name, OCAS's line search, each C of a grid warm-started from the previous C's final state)
ENGINES = [("plain", False, False), ("OCAS", True, False), ("plain + warm C", False, True),
           ("OCAS + warm C", True, True)]


class KeepLast(loop.Callback):
    """The loop's state as the run ends (the one state object every iteration hands over)."""

    state = None

    def iteration(self, row, state):
        self.state = state


def rescaled(state, C):
    """The warm start this benchmark measures (train_grid does not use it: each C of a grid trains from w = 0):
    another C's run from a state's end, the working set, w_b and w_t kept, the multipliers scaled to the new C
    (feasible: they sum to at most C), the counters reset."""
    ws = working_set(state.dim)
    for a, b in zip(state.working_set.A, state.working_set.b):
        ws.add(a, float(b))
    ws.idle = np.zeros(ws.m, dtype=np.int64)
    primal = 0.5 * float(state.w_best @ state.w_best) + C * max(0.0, state.value_best)
    return LoopState(state.n, state.dim, C, state.epsilon, ws, state.w_best, state.w_t, state.value_best,
                     state.value_t, state.value_zero, primal, qp=DualQP(np.asarray(state.qp.alpha) * (C / state.C)))


def run(problem, C, eps, line_search, max_iterations=100000, from_state=None, callbacks=()):
    calls = [0]
    oracle = problem.most_violated

    def counted(scores):
        calls[0] += 1
        return oracle(scores)

    problem.most_violated = counted
    try:
        start = time.perf_counter()
        result = training.train(problem, C, eps, max_iterations=max_iterations, line_search=line_search,
                             start=from_state, callbacks=callbacks)
        return result, calls[0], time.perf_counter() - start
    finally:
        problem.most_violated = oracle


@njit(cache=True)
def _best_swaps(doc_ptr, doc_idx, unit_benefit, doc_benefit, topic_ptr, topic_idx, topic_weight, chosen):
    """Local search from a subset: while some swap of a chosen document for another raises
    H = (weight of the subtopics left uncovered) + (benefits of the covered units) + (chosen documents' own
    benefits), make the best one. Returns how much H rose (>= 0)."""
    n = doc_ptr.shape[0] - 1
    inside = np.zeros(n, dtype=np.bool_)
    units = np.zeros(unit_benefit.shape[0], dtype=np.int64)  # how many chosen documents cover each unit
    topics = np.zeros(topic_weight.shape[0], dtype=np.int64)
    for d in chosen:
        inside[d] = True
        for p in range(doc_ptr[d], doc_ptr[d + 1]):
            units[doc_idx[p]] += 1
        for p in range(topic_ptr[d], topic_ptr[d + 1]):
            topics[topic_idx[p]] += 1
    risen = 0.0
    while True:
        best, best_out, best_in = 1e-12, -1, -1
        for out in range(n):
            if not inside[out]:
                continue
            removed = -doc_benefit[out]  # H's change when `out` leaves
            for p in range(doc_ptr[out], doc_ptr[out + 1]):
                units[doc_idx[p]] -= 1
                if units[doc_idx[p]] == 0:
                    removed -= unit_benefit[doc_idx[p]]
            for p in range(topic_ptr[out], topic_ptr[out + 1]):
                topics[topic_idx[p]] -= 1
                if topics[topic_idx[p]] == 0:
                    removed += topic_weight[topic_idx[p]]
            for d in range(n):
                if inside[d]:
                    continue
                gain = removed + doc_benefit[d]
                for p in range(doc_ptr[d], doc_ptr[d + 1]):
                    if units[doc_idx[p]] == 0:
                        gain += unit_benefit[doc_idx[p]]
                for p in range(topic_ptr[d], topic_ptr[d + 1]):
                    if topics[topic_idx[p]] == 0:
                        gain -= topic_weight[topic_idx[p]]
                if gain > best:
                    best, best_out, best_in = gain, out, d
            for p in range(doc_ptr[out], doc_ptr[out + 1]):
                units[doc_idx[p]] += 1
            for p in range(topic_ptr[out], topic_ptr[out + 1]):
                topics[topic_idx[p]] += 1
        if best_out < 0:
            return risen
        risen += best
        for d, step in ((best_out, -1), (best_in, 1)):
            inside[d] = step > 0
            for p in range(doc_ptr[d], doc_ptr[d + 1]):
                units[doc_idx[p]] += step
            for p in range(topic_ptr[d], topic_ptr[d + 1]):
                topics[topic_idx[p]] += step


def div_yardstick(dataset, options: dict, problem):
    """objective(w, C): the primal objective of a div model with each candidate set's slack from the training
    oracle (greedy on Delta + w.Psi and on w.Psi) improved by local search (best swaps until none helps).
    Still a lower bound of the true objective, but one yardstick for every engine's model: the objectives
    the runs report are each certified by their own greedy answers, which err differently from run to run."""
    config = div.config_from(options)
    covering = qrels.read_subtopics(options["subtopics"])
    sets, _, unit_rows = candidate_sets(
        dataset, config, lambda lo, hi: qrels.subtopic_matrix(dataset, lo, hi, covering, options["subtopics"]))
    K = int(options["k"])

    def objective(w, C):
        scores = problem.X @ w
        dcoef, delta = problem.most_violated(scores)
        risen = 0.0
        for cs, _, unit_benefit, doc_benefit in split_scores(scores, sets, unit_rows):
            best, chosen = -np.inf, None
            for weight in div.ORACLE_LOSS_WEIGHTS:  # the oracle's own answer, as most_violated picks it
                picked, covered, loss = select(cs, unit_benefit, doc_benefit, K, loss_weight=weight)
                violation = loss + float(covered @ unit_benefit) + float(doc_benefit[picked].sum())
                if chosen is None or violation > best + 1e-12:
                    best, chosen = violation, picked
            topics = cs.doc_topics
            risen += _best_swaps(cs.doc_units.indptr, cs.doc_units.indices, np.ascontiguousarray(unit_benefit),
                                 np.ascontiguousarray(doc_benefit), topics.indptr, topics.indices,
                                 cs.topic_weights, chosen)
        slack = (delta - float(dcoef @ scores) + risen) / problem.n
        return 0.5 * float(w @ w) + C * max(0.0, slack)

    return objective


def cases(shared: Path, with_div: bool):
    mq = shared / "data" / "mq2008"
    corn = shared / "data" / "reuters" / "corn.train.svm"
    require(corn, *(mq / f"S{k}.txt" for k in (1, 2, 3)))
    read = lambda paths: arrays.concatenate([data.read_svmlight(str(p)) for p in paths])  # noqa: E731
    yield "corn errorrate -c 10000 -e 0.001", [(read([corn]), "errorrate", {}, 10000, 0.001)]
    # the same ten times more precisely: where do both engines' objectives end up?
    yield "corn errorrate -c 10000 -e 0.0001", [(read([corn]), "errorrate", {}, 10000, 0.0001)]
    yield "MQ2008 S1 avgprec -c 1", [(read([mq / "S1.txt"]), "avgprec", {}, 1, None)]
    yield "MQ2008 S1-S3 pairs -c 100 -e 0.0001", [(read([mq / f"S{k}.txt" for k in (1, 2, 3)]), "pairs", {}, 100,
                                                     0.0001)]
    # C grids as --validate trains them (each C cold, or warm-started from the previous C)
    s1 = read([mq / "S1.txt"])
    yield "MQ2008 S1 map, -c 0.1..1000 (5 C)", [(s1, "map", {}, C, None) for C in (0.1, 1, 10, 100, 1000)]
    yield "MQ2008 S1 pairs, -c 0.1..1000 (5 C)", [(s1, "pairs", {}, C, None) for C in (0.1, 1, 10, 100, 1000)]
    corn_set = read([corn])
    yield "corn errorrate, -c 1..10000 (5 C)", [(corn_set, "errorrate", {}, C, None) for C in (1, 10, 100, 1000, 10000)]
    if with_div:
        prefix = ROOT / "exp" / "div" / "synth"
        if not Path(f"{prefix}.svm").exists():  # exp_div.py's default data, generated the same way
            prefix.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([sys.executable, str(ROOT / "scripts" / "make_div_synthetic.py"), str(prefix),
                            "--support", "30,2000"], check=True)
            (prefix.parent / "synth.args").write_text("30,2000")
        everything = data.read_svmlight(f"{prefix}.svm")
        training = subset(everything, 0, int(everything.qptr[15]))
        yield "exp-div training runs (30)", [(training, "div", {"subtopics": f"{prefix}.qrels", "k": K}, C, None)
                                             for K in range(1, 11) for C in (0.1, 1, 10)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--only", default="")
    parser.add_argument("--no-div", action="store_true")
    parser.add_argument("--out", default="", help="also write the table as OUT/results.md (markdown)")
    args = parser.parse_args()
    header = (f"{'case':<38} {'engine':<15} {'iter':>6} {'oracle':>7} {'seconds':>8} {'primal':>16} "
              f"{'rel. diff':>10} {'iter ratio':>10}")
    print(header)
    table = ["| case | engine | iterations | oracle calls | seconds | primal | rel. diff | iterations plain / this |",
             "|---|---|---|---|---|---|---|---|"]
    last: dict = {}  # the previous C's final state (KeepLast)

    for name, runs in cases(Path(args.shared), not args.no_div):
        if args.only not in name:
            continue
        totals = {}
        yardstick: dict = {}  # div: every engine's models measured alike (div_yardstick)
        # several C on one problem: also warm-started as training.train_grid runs them (exact oracles only: train.py)
        grid = len(runs) > 1 and runs[0][1] != "div"
        for engine, line_search, warm in ENGINES if grid else ENGINES[:2]:
            iterations = calls = 0
            seconds = primal = 0.0
            previous = None
            for dataset, loss, options, C, eps in runs:
                spec, opts = api.resolve_loss(loss, options)
                if (id(dataset), loss, str(options)) != previous:  # a new problem: its first C starts cold
                    problem, previous = spec.build(dataset, opts), (id(dataset), loss, str(options))
                    measure = div_yardstick(dataset, opts, problem) if loss == "div" else None
                    last.clear()
                epsilon = spec.default_epsilon if eps is None else eps
                final = last.get("state")
                start = rescaled(final, C) if warm and final is not None and problem.exact and \
                    problem.latent_target is None else None
                keep = KeepLast()
                result, n_calls, secs = run(problem, C, epsilon, line_search,
                                            max_iterations=500 if loss == "div" else 100000, from_state=start,
                                            callbacks=[keep])
                last["state"] = keep.state
                iterations += result.iterations
                calls += n_calls
                seconds += secs
                primal += result.primal
                if measure is not None:
                    yardstick[engine] = yardstick.get(engine, 0.0) + measure(result.w, C)
            totals[engine] = (iterations, calls, seconds, primal)
        base = totals["plain"]
        for engine, (iterations, calls, seconds, primal) in totals.items():
            relative, ratio = (primal - base[3]) / abs(base[3]), base[0] / iterations
            print(f"{name:<38} {engine:<15} {iterations:>6} {calls:>7} {seconds:>8.2f} {primal:>16.6f} "
                  f"{relative:>10.2e} {ratio:>10.2f}", flush=True)
            table.append(f"| {name} | {engine} | {iterations} | {calls} | {seconds:.2f} | {primal:.6f} | "
                         f"{relative:.2e} | {ratio:.2f} |")
        for engine, value in yardstick.items():
            relative = (value - yardstick["plain"]) / abs(yardstick["plain"])
            print(f"{name:<38} {engine:<15} objective by local search (div_yardstick) {value:.6f} "
                  f"{relative:>10.2e}", flush=True)
            table.append(f"| {name}, objective by local search | {engine} | | | | {value:.6f} | {relative:.2e} | |")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.md").write_text("\n".join(table) + "\n")


if __name__ == "__main__":
    main()
