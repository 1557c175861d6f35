"""The contract of every registered loss, checked generically over the registry (a new loss is tested the
moment it is registered): names, options, the oracle against exhaustive enumeration of its outputs on
tiny inputs (one checker per output kind: labelings, rankings, subsets), convergence with a certified
gap, the model file round trip, and learn/classify through the command line.

The brute-force side is the problem's Reference (written from the papers, independently of the oracle):
the oracle's value Delta - dcoef.scores must equal the largest value over every output that competes
(svm_perf lets only outputs with Delta > 0 compete; with none the oracle returns the zero constraint).
"""
import itertools
import math

import numpy as np
import pytest

from svmstruct import api, model, registry
from svmstruct.dataset import arrays
from svmstruct.errors import UsageError
from svmstruct.io import data

from conftest import ROOT, invoke

LOSSES = sorted(registry.REGISTRY)
SMALL_RANKING = ROOT / "data" / "mq2008-small"
SMALL_DIV = ROOT / "data" / "div" / "small"

def option_sets(loss):
    """The defaults, then each example value each option declares (Option.examples), one at a time."""
    yield {}
    for option in loss.options:
        for value in option.examples:
            yield {option.name: value}
    if loss.option("k") and loss.option("position_weights"):  # the pairwise map with documents below the cut-off
        yield {"k": 2, "position_weights": "pairs"}
        yield {"k": 2, "position_weights": "top-pairs"}
        yield {"position_weights": "top-pairs"}


# ---- tiny inputs

def ranking_dataset(rng, trial, max_docs):
    """1-3 queries of 1..max_docs documents, 3 features, graded or binary labels, scores with ties."""
    queries = int(rng.integers(1, 4))
    sizes = rng.integers(1, max_docs + 1, size=queries)
    n = int(sizes.sum())
    grades = 2 if trial % 3 == 0 else 3
    y = rng.integers(0, grades, size=n).astype(float)
    X = rng.normal(size=(n, 3))
    if trial % 2:
        X = np.round(X)  # ties in the scores
    qid = np.repeat(np.arange(1, queries + 1), sizes)
    return arrays.from_arrays(X, y, qid)


def diversity_dataset(rng, tmp_path, trial):
    """1-2 candidate sets of 3-5 documents over 6 words, subtopic judgments written as qrels."""
    rows, lines = [], []
    sets = int(rng.integers(1, 3))
    for q in range(1, sets + 1):
        for d in range(int(rng.integers(3, 6))):
            words = np.flatnonzero(rng.random(6) < 0.5) + 1
            rows.append((q, f"q{q}d{d}", {int(w): int(rng.integers(1, 4)) for w in words}))
            for topic in np.flatnonzero(rng.random(3) < 0.5):
                lines.append(f"{q} t{topic} q{q}d{d} 1")
        lines.append(f"{q} t0 q{q}d0 1")  # every set has a judged subtopic
    path = tmp_path / f"div{trial}.svm"
    path.write_text("".join(f"0 qid:{q} " + " ".join(f"{w}:{c}" for w, c in sorted(words.items())) + f" # {doc}\n"
                            for q, doc, words in rows))
    qrels = tmp_path / f"div{trial}.qrels"
    qrels.write_text("\n".join(lines) + "\n")
    return data.read_svmlight(str(path)), {"subtopics": str(qrels), "levels": "tf>=1,tf>=2", "df_thresholds": "0,0.5"}


MAX_OUTPUTS = 5040  # outputs of one example enumerated at most (7! rankings, 2^12 labelings)


def n_outputs(reference, e):
    size = reference.size(e)
    if reference.kind == "labeling":
        return 2 ** size
    if reference.kind == "ranking":
        return math.factorial(size)
    return math.comb(size, reference.subset_size(e))


def tiny_problems(loss, tmp_path, trials=12):
    """Problems of the loss on tiny random data, every option variant, small enough to enumerate."""
    rng = np.random.default_rng(sum(map(ord, loss.name)))
    for variant in option_sets(loss):
        made = attempts = 0
        while made < trials and attempts < 20 * trials:
            attempts += 1
            if loss.output == "subset":
                dataset, extra = diversity_dataset(rng, tmp_path, attempts)
                opts = {**extra, **variant}
            else:
                dataset, opts = ranking_dataset(rng, attempts, 6), variant
            try:
                problem = api.problem(dataset, loss.name, **opts)
            except UsageError:
                raise
            except ValueError:  # the data has nothing this loss can learn from (e.g. no positive)
                continue
            reference = problem.reference
            if reference is not None and not enumerable(reference):
                continue
            made += 1
            yield opts, problem, rng


# ---- one exhaustive checker per output kind

def outputs(reference, e):
    size = reference.size(e)
    if reference.kind == "labeling":
        return itertools.product([-1, 1], repeat=size)
    if reference.kind == "ranking":
        return itertools.permutations(range(size))
    if reference.kind == "subset":
        return itertools.combinations(range(size), reference.subset_size(e))
    raise AssertionError(f"unknown output kind {reference.kind}")


def best_output(reference, e, scores, rows):
    """(value, runner-up value, dcoef, Delta) of the best output that competes (by Delta - dcoef.scores);
    the zero constraint, value 0, when none competes."""
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


@pytest.mark.slow
@pytest.mark.parametrize("name", LOSSES)
def test_oracle_attains_the_best_enumerated_output(name, tmp_path):
    loss = registry.REGISTRY[name]
    checked = 0
    for opts, problem, rng in tiny_problems(loss, tmp_path):
        reference = problem.reference
        assert reference is not None, f"{name} gives no reference for the tests"
        rows = problem.X.shape[0]
        for scores in (rng.normal(size=rows) * rng.choice([0.3, 3.0]), np.round(rng.normal(size=rows)),
                       np.zeros(rows)):
            dcoef, delta = problem.most_violated(scores)
            assert dcoef.shape == (rows,) and np.all(np.isfinite(dcoef)) and math.isfinite(delta)
            value = delta - float(dcoef @ scores)
            best, bests = best_total(reference, scores, rows)
            if reference.exact:
                assert delta >= -1e-12
                assert value == pytest.approx(best, abs=1e-9, rel=1e-9), (name, opts)
                if bests and all(b[0] - b[1] > 1e-6 for b in bests):  # a unique best output: its constraint
                    np.testing.assert_allclose(dcoef, sum(b[2] for b in bests), atol=1e-9, err_msg=name)
                    assert delta == pytest.approx(sum(b[3] for b in bests), abs=1e-9)
            else:
                assert value <= best + 1e-9, (name, opts)
            checked += 1
    assert checked >= 20, f"{name}: only {checked} tiny problems could be built"


@pytest.mark.parametrize("name", LOSSES)
def test_names_and_options(name):
    loss = registry.REGISTRY[name]
    for alias in (loss.name, *loss.aliases):
        assert registry.lookup(alias)[0] is loss
        assert registry.lookup(alias.upper())[0] is loss
    if loss.name.endswith("@k"):
        assert registry.lookup(loss.name[:-1] + "7") == (loss, {"k": 7})
    for option in loss.options:
        assert option.parse(option.default) == option.default or option.default is None
    assert loss.formats and loss.output in ("labeling", "ranking", "subset")
    assert loss.default_epsilon > 0
    others = [o for o in registry.all_options().values() if loss.option(o.name) is None]
    for option in others[:3]:
        with pytest.raises(UsageError, match="does not apply"):
            loss.resolve({option.name: 1})


def small_training_set(loss):
    if loss.output == "subset":
        return data.read_svmlight(f"{SMALL_DIV}.svm"), {"subtopics": f"{SMALL_DIV}.qrels", "k": 3}
    return data.read_svmlight(str(SMALL_RANKING / "train.txt")), {}


@pytest.mark.slow
@pytest.mark.parametrize("name", LOSSES)
def test_training_converges_with_a_certified_gap_and_the_model_round_trips(name, tmp_path):
    loss = registry.REGISTRY[name]
    dataset, opts = small_training_set(loss)
    trained = api.fit(dataset, name, C=0.1, max_iterations=2000, **opts)
    result = trained.result
    assert np.all(np.isfinite(trained.w))
    if loss.output != "subset":  # SVM-div's greedy oracle may stop at the iteration cap
        problem = api.problem(dataset, name, **opts)
        assert result.converged
        eps = float(trained.header["epsilon"]) * problem.epsilon_scale
        assert result.primal - result.dual <= 0.1 * eps * (1 + 1e-6)
    path = tmp_path / "m.model"
    trained.save(str(path))
    loaded = model.load_model(str(path))
    assert loaded.loss == loss.name
    np.testing.assert_array_equal(loaded.w, trained.w)
    assert loaded.threshold == trained.threshold
    np.testing.assert_array_equal(loaded.predict(dataset), trained.predict(dataset))
    assert api.resolve_loss(loaded.loss, loaded.options)[1] == api.resolve_loss(name, opts)[1]


@pytest.mark.slow
@pytest.mark.parametrize("name", LOSSES)
def test_learn_and_classify_through_the_command_line(name, tmp_path, capsys, run=invoke):
    """learn and classify as the shell runs them (run=invoke_here: in this process, for a loss registered here)."""
    loss = registry.REGISTRY[name]
    dataset, opts = small_training_set(loss)
    train_file = f"{SMALL_DIV}.svm" if loss.output == "subset" else str(SMALL_RANKING / "train.txt")
    flags = []
    for key, value in opts.items():
        flags += [registry.all_options()[key].flag, str(value)]
    model_file, out = tmp_path / "m.model", tmp_path / "out.txt"
    learned = run("learn", "-l", name, "-c", "1", "-#", "200", "-v", "0", *flags, train_file, str(model_file))
    assert learned.returncode == 0, learned.stderr
    classified = run("classify", train_file, str(model_file), str(out))
    assert classified.returncode == 0, classified.stderr
    lines = out.read_text().splitlines()
    if loss.predict is None:
        assert len(lines) == dataset.n_docs
        np.testing.assert_allclose([float(v) for v in lines], model.load_model(str(model_file)).predict(dataset),
                                   atol=5e-9)
    else:
        assert len(lines) == dataset.n_examples
