"""The contract battery of a document loss (svmstruct.testing.check_loss), as the suite checks every registered loss
(tests/test_loss_contract.py):
- names and options: the registry finds the loss by its name and aliases (any case; `name@7` for a name ending in
  `@k`), every option parses its default, an option of another loss is refused;
- the oracle against enumeration: on tiny random data (1-3 queries of 1-6 documents, graded and binary labels, tied
  scores; subsets: candidate sets of 3-5 documents) for the defaults and each example value of each option, the
  oracle's value Delta - dcoef.scores equals the largest over every output that competes, enumerated by the
  problem's Reference (written from the paper, apart from the oracle: labelings, rankings or subsets; a sum of
  losses part by part); for a unique best output its constraint is the oracle's; a greedy oracle (SVM-div) is
  only bounded by it;
- training: svmstruct.fit converges with a certified duality gap (not a greedy oracle, which may stop at the
  iteration cap), every weight finite, and the model predicts alike after a round trip through its file.
"""
from __future__ import annotations

import itertools
import math
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np

MAX_OUTPUTS = 5040  # outputs of one example enumerated at most (7! rankings, 2^12 labelings)
TOLERANCE = 1e-9


def check_loss(loss: Any, trials: int = 12) -> None:
    """Every check of the battery on LOSS: a registered name or a svmstruct.spec.Loss (registered: the options of
    the registry are those of the loss's family)."""
    from svmstruct import registry

    spec = registry.lookup(loss)[0] if isinstance(loss, str) else loss
    with tempfile.TemporaryDirectory() as folder:
        check_names_and_options(spec)
        check_oracle(spec, Path(folder), trials)
        check_training(spec, Path(folder))


def option_sets(loss) -> Iterator[dict]:
    """The defaults, then each example value each option declares (Option.examples), one at a time."""
    yield {}
    for option in loss.options:
        for value in option.examples:
            yield {option.name: value}
    if loss.option("k") and loss.option("position_weights"):  # the pairwise map with documents below the cut-off
        yield {"k": 2, "position_weights": "pairs"}
        yield {"k": 2, "position_weights": "top-pairs"}
        yield {"position_weights": "top-pairs"}


def check_names_and_options(loss) -> None:
    from svmstruct import registry
    from svmstruct.errors import UsageError

    for alias in (loss.name, *loss.aliases):
        _require(registry.lookup(alias)[0] is loss and registry.lookup(alias.upper())[0] is loss,
                 f"{loss.name}: the registry does not find it as {alias!r}")
    if loss.name.endswith("@k"):
        _require(registry.lookup(loss.name[:-1] + "7") == (loss, {"k": 7}),
                 f"{loss.name}: {loss.name[:-1]}7 is not its k = 7")
    for option in loss.options:
        _require(option.default is None or option.parse(option.default) == option.default,
                 f"{loss.name}: option {option.name} does not parse its default")
    _require(bool(loss.formats) and loss.output in ("labeling", "ranking", "subset") and loss.default_epsilon > 0,
             f"{loss.name}: no formats, an unknown output kind or no positive default epsilon")
    others = [o for o in registry.all_options().values() if loss.option(o.name) is None]
    for option in others[:3]:
        try:
            loss.resolve({option.name: 1})
        except UsageError as e:
            _require("does not apply" in str(e), f"{loss.name}: option {option.name} refused as {e}")
            continue
        raise AssertionError(f"{loss.name}: option {option.name} of another loss was taken")


def check_oracle(loss, folder: Path, trials: int = 12) -> None:
    """The oracle against enumeration (module docstring), on at least 20 tiny problems."""
    checked = 0
    for opts, problem, rng, trial in tiny_problems(loss, folder, trials):
        reference = problem.reference
        _require(reference is not None, f"{loss.name} gives no Reference to enumerate its outputs")
        rows = problem.X.shape[0]
        for kind, scores in (("random", rng.normal(size=rows) * rng.choice([0.3, 3.0])),
                             ("integer", np.round(rng.normal(size=rows))), ("zero", np.zeros(rows))):
            where = f"{loss.name} with {opts or 'its defaults'}, tiny problem {trial}, {kind} scores"
            dcoef, delta = problem.most_violated(scores)
            _require(dcoef.shape == (rows,) and bool(np.all(np.isfinite(dcoef))) and math.isfinite(delta),
                     f"{where}: the constraint is not {rows} finite coefficients and a finite Delta")
            value = delta - float(dcoef @ scores)
            best, bests = best_total(reference, scores, rows)
            if reference.exact:
                _require(delta >= -1e-12 and math.isclose(value, best, rel_tol=TOLERANCE, abs_tol=TOLERANCE),
                         f"{where}: the oracle's value {value!r}, the best enumerated output's {best!r}")
                if bests and all(b[0] - b[1] > 1e-6 for b in bests):  # a unique best output: its constraint
                    _require(bool(np.allclose(dcoef, sum(b[2] for b in bests), rtol=0, atol=TOLERANCE))
                             and math.isclose(delta, sum(b[3] for b in bests), rel_tol=0, abs_tol=TOLERANCE),
                             f"{where}: not the constraint of the unique best output")
            else:
                _require(value <= best + TOLERANCE, f"{where}: the greedy oracle's value {value!r} is above the best "
                                                    f"enumerated {best!r}")
            checked += 1
    _require(checked >= 20, f"{loss.name}: only {checked} tiny problems could be built")


def check_training(loss, folder: Path, C: float = 0.1) -> None:
    """svmstruct.fit on a small random set converges with a certified gap; the model file round trip."""
    from svmstruct import config, model, training

    rng = np.random.default_rng(7)
    if loss.output == "subset":
        dataset, opts = diversity_dataset(rng, folder, 0, sets=6)
    else:
        dataset, opts = ranking_dataset(rng, 1, 12, queries=20, features=5), {}
    run = config.Run.of(loss.name, C, max_iterations=2000, **opts).check()
    trained = training.train_run(run, training.LocalSource(dataset, None))
    result = trained.result
    where = f"{loss.name} at C {C:g}"
    _require(bool(np.all(np.isfinite(trained.w))), f"{where}: weights that are not finite")
    if loss.output != "subset":  # SVM-div's greedy oracle may stop at the iteration cap
        eps = float(trained.epsilon or loss.default_epsilon) * loss.build(dataset, run.opts).epsilon_scale
        _require(result.converged and result.primal - result.dual <= C * eps * (1 + 1e-6),
                 f"{where}: not converged to a duality gap within C epsilon ({result.status})")
    path = folder / "loss.model"
    trained.save(str(path))
    loaded = model.load_model(str(path))
    _require(loaded.loss == loss.name and np.array_equal(loaded.w, trained.w)
             and loaded.threshold == trained.threshold
             and np.array_equal(loaded.predict(dataset), trained.predict(dataset))
             and config.resolve_loss(loaded.loss, loaded.options)[1] == run.opts,
             f"{where}: the model file does not give back the loss, its options, weights and predictions")


# ---- tiny inputs

def ranking_dataset(rng, trial: int, max_docs: int, queries: int | None = None, features: int = 3):
    """1-3 queries (or QUERIES) of 1..max_docs documents, graded or binary labels, scores with ties on odd trials."""
    from svmstruct.dataset import arrays

    queries = int(rng.integers(1, 4)) if queries is None else queries
    sizes = rng.integers(1, max_docs + 1, size=queries)
    n = int(sizes.sum())
    y = rng.integers(0, 2 if trial % 3 == 0 else 3, size=n).astype(float)
    X = rng.normal(size=(n, features))
    if trial % 2:
        X = np.round(X)  # ties in the scores
    return arrays.from_arrays(X, y, np.repeat(np.arange(1, queries + 1), sizes))


def diversity_dataset(rng, folder: Path, trial: int, sets: int | None = None):
    """1-2 candidate sets (or SETS) of 3-5 documents over 6 words, subtopic judgments written as qrels."""
    from svmstruct.io import data

    rows, lines = [], []
    sets = int(rng.integers(1, 3)) if sets is None else sets
    for q in range(1, sets + 1):
        for d in range(int(rng.integers(3, 6))):
            words = np.flatnonzero(rng.random(6) < 0.5) + 1
            rows.append((q, f"q{q}d{d}", {int(w): int(rng.integers(1, 4)) for w in words}))
            for topic in np.flatnonzero(rng.random(3) < 0.5):
                lines.append(f"{q} t{topic} q{q}d{d} 1")
        lines.append(f"{q} t0 q{q}d0 1")  # every set has a judged subtopic
    path = folder / f"div{trial}.svm"
    path.write_text("".join(f"0 qid:{q} " + " ".join(f"{w}:{c}" for w, c in sorted(words.items())) + f" # {doc}\n"
                            for q, doc, words in rows))
    qrels = folder / f"div{trial}.qrels"
    qrels.write_text("\n".join(lines) + "\n")
    return data.read_svmlight(str(path)), {"subtopics": str(qrels), "levels": "tf>=1,tf>=2", "df_thresholds": "0,0.5"}


def tiny_problems(loss, folder: Path, trials: int = 12) -> Iterator[tuple]:
    """(options, problem, rng, trial) of the loss on tiny random data, every option set, small enough to enumerate."""
    from svmstruct.errors import UsageError

    rng = np.random.default_rng(sum(map(ord, loss.name)))
    for variant in option_sets(loss):
        made = attempts = 0
        while made < trials and attempts < 20 * trials:
            attempts += 1
            if loss.output == "subset":
                dataset, extra = diversity_dataset(rng, folder, attempts)
                opts = {**extra, **variant}
            else:
                dataset, opts = ranking_dataset(rng, attempts, 6), variant
            try:
                problem = loss.build(dataset, loss.resolve(opts))  # this spec's, registered or not
            except UsageError:
                raise
            except ValueError:  # the data has nothing this loss can learn from (e.g. no positive)
                continue
            reference = problem.reference
            if reference is not None and not enumerable(reference):
                continue
            made += 1
            yield opts, problem, rng, attempts


# ---- one exhaustive checker per output kind

def n_outputs(reference, e) -> int:
    size = reference.size(e)
    if reference.kind == "labeling":
        return 2 ** size
    if reference.kind == "ranking":
        return math.factorial(size)
    return math.comb(size, reference.subset_size(e))


def outputs(reference, e):
    size = reference.size(e)
    if reference.kind == "labeling":
        return itertools.product([-1, 1], repeat=size)
    if reference.kind == "ranking":
        return itertools.permutations(range(size))
    if reference.kind == "subset":
        return itertools.combinations(range(size), reference.subset_size(e))
    raise AssertionError(f"unknown output kind {reference.kind}")


def best_output(reference, e, scores, rows) -> tuple:
    """(value, runner-up value, dcoef, Delta) of the best output that competes (by Delta - dcoef.scores);
    the zero constraint, value 0, when none competes (svm_perf lets only outputs with Delta > 0 compete)."""
    best = (0.0, -np.inf, np.zeros(rows), 0.0)
    first = True
    for out in outputs(reference, e):
        constraint = reference.constraint(e, out)
        if constraint is None:
            continue
        dcoef, delta = constraint
        value = delta - float(dcoef @ scores)
        if first or value > best[0]:
            best = (value, best[0] if not first else -np.inf, dcoef, delta)
            first = False
        elif value > best[1]:
            best = (best[0], value, best[2], best[3])
    return best


def best_total(reference, scores, rows) -> tuple:
    """(sum of the examples' best values, [each example's best_output]); a "sum" reference (combo) adds its
    parts' totals with their weights (each part's oracle maximises on its own)."""
    if reference.kind == "sum":
        totals = [(weight, best_total(part, scores, rows)) for weight, part in reference.parts]
        return sum(weight * total[0] for weight, total in totals), []
    bests = [best_output(reference, e, scores, rows) for e in range(reference.examples)]
    return sum(b[0] for b in bests), bests


def enumerable(reference) -> bool:
    if reference.kind == "sum":
        return all(enumerable(part) for _, part in reference.parts)
    return all(n_outputs(reference, e) <= MAX_OUTPUTS for e in range(reference.examples))


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)
