"""SVM-combo (Chakrabarti, Khanna, Sawant & Bhattacharyya 2008): one model trained on several losses at once.

`-l combo:ndcg@10,mrr,map` trains w on the weighted sum of the components' structural hinge bounds, each with
its own joint feature map and oracle:

    min 1/2 |w|^2 + C sum_m lambda_m (1/n) sum_q xi_qm,   xi_qm >= Delta_m(y_q, ybar) - w.(Psi_m(y_q) - Psi_m(ybar)),

n the queries of the training data (a query a loss leaves out, e.g. map's without a relevant document, adds 0
to its sum). In the 1-slack form the constraint is the weighted sum of the components' 1-slack constraints, so
the most violated one is each component's most violated output (every oracle exact): most_violated sums
lambda_m times each component's (dcoef, Delta sum). Every weight is independent of how the queries are split,
so shards of whole queries train the same model (svmstruct.train.distributed). The weights
lambda (--combo-weights) sum to 1 by default, so Delta and C are on the scale of one loss: 1/2 for the first
loss, the measure the model is judged and C selected by, and 1/(2(M - 1)) for each of the others (on real
collections an equal share let the other losses pull the first one's measure below its own loss's: make exp-real,
docs/experiments.md). Components are the
losses that rank the documents of a query by w.x (needs qid); a component with a latent target (DORM's
positional maps) contributes its re-imputed target with the same weight. C is selected (--validate) and the
estimators score by the first component's measure.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from svmstruct.errors import InputError, UsageError
from svmstruct.options import parse_number
from svmstruct.spec import REL_THRESHOLD, Loss, Option
from svmstruct.train.problem import Reference, TrainingProblem

DEFAULT_COMPONENTS = "ndcg@10,mrr,map"


# the registry's lookup of a loss by name, handed over by svmstruct.registry when it loads this family (a combo's
# components are other registered losses; a family module never imports the registry)
registry_lookup: Callable[[str], tuple] | None = None


def _lookup(name: str):
    if registry_lookup is None:  # a combo unpickled where the registry was never read (a Dask worker): read it now
        import importlib

        importlib.import_module("svmstruct.registry").REGISTRY.get("")
    assert registry_lookup is not None
    return registry_lookup(name)


def components(spec: str) -> list:
    """[(loss, options its name implies)] of a comma-separated list of loss names; UsageError if one cannot
    be a component (it must rank a query's documents by w.x)."""
    out = []
    for name in (part.strip() for part in spec.split(",")):
        try:
            loss, implied = _lookup(name)
        except InputError as e:
            raise UsageError(f"combo: {e.message}") from None
        if loss.name == "combo" or not (loss.needs_qid and loss.plain_features):
            raise UsageError(f"combo: {name} cannot be a component (the components rank the documents of a query "
                             "by w.x: the rank, map and dorm families)")
        out.append((loss, implied))
    if len(out) < 2:
        raise UsageError("combo needs at least two losses, e.g. combo:ndcg@10,map")
    return out


def weights(spec: str | None, count: int) -> np.ndarray:
    """lambda: the --combo-weights values (comma-separated, finite, >= 0, not all 0), or 1/2 for the first loss and
    1/(2 (count - 1)) for each of the others."""
    if spec is None:
        return np.array([0.5] + [0.5 / (count - 1)] * (count - 1))
    try:
        values = np.array([parse_number(part) for part in spec.split(",")])
    except ValueError:
        raise UsageError(f"--combo-weights {spec}: needs comma-separated numbers") from None
    if len(values) != count:
        raise UsageError(f"--combo-weights {spec}: {len(values)} weights for {count} losses")
    if not (np.all(np.isfinite(values)) and np.all(values >= 0) and values.sum() > 0):
        raise UsageError(f"--combo-weights {spec}: weights must be finite, >= 0 and not all 0")
    return values


def _check_components(spec: str) -> str | None:
    try:
        components(spec)
    except UsageError as e:
        return f"is not a list of ranking losses ({e})"
    return None


def _check_weights(spec: str) -> str | None:
    try:
        weights(spec, len(spec.split(",")))
    except UsageError:
        return "needs comma-separated finite numbers >= 0, not all 0"
    return None


COMPONENTS = Option("combo_losses", ("--combo-losses",), "str",
                    "the losses of combo, comma-separated (also -l combo:ndcg@10,mrr,map)", default=DEFAULT_COMPONENTS,
                    check=_check_components, metavar="LOSSES")
WEIGHTS = Option("combo_weights", ("--combo-weights",), "str",
                 "combo: the weight of each loss, comma-separated (default 1/2 the first, whose measure selects C; "
                 "the others share the other half)", default=None,
                 check=_check_weights, metavar="W")


@dataclass
class Part:
    weight: float  # lambda_m
    problem: TrainingProblem


def build(data, opts: dict) -> TrainingProblem:
    chosen = components(opts.get("combo_losses") or DEFAULT_COMPONENTS)
    lambdas = weights(opts.get("combo_weights"), len(chosen))
    problems = []
    shared = {"pairs_per_query": opts["pairs_per_query"]} if "pairs_per_query" in opts else {}  # on shards
    for loss, implied in chosen:
        given = {"rel_threshold": opts.get("rel_threshold")} if loss.option("rel_threshold") else {}
        problems.append(loss.build(data, {**loss.resolve(given, implied), **shared}))
    return combined(data, [Part(float(lam), p) for lam, p in zip(lambdas, problems)],
                    {"queries": data.n_examples, "combo": ",".join(loss.name for loss, _ in chosen)})


def with_pairs(listwise: Callable) -> Callable:
    """The build of a listwise loss with --pairwise lambda: C/n sum_q [(1 - lambda) xi_q + lambda xi_q^pairs / m] over
    the n queries (combined's sum; a query the listwise loss leaves out adds its pairs only), svm_rank's pairs
    divided by m, the mean number of pairs a query of the whole training data, so that both are on the scale of one
    query's loss (on shards the driver hands m over as opts["pairs_per_query"]: svmstruct.train.distributed). lambda
    = 0 is the listwise loss alone (its own problem, not a mixture); 1 is -l pairs at C n_pairs / (n m)."""
    def build(data, opts: dict) -> TrainingProblem:
        weight = float(opts.get("pairwise") or 0.0)
        alone = listwise(data, opts)
        if weight == 0:
            return alone
        pairs_loss, implied = _lookup("pairs")
        pairs = pairs_loss.build(data, pairs_loss.resolve({}, implied))
        mean = opts.get("pairs_per_query") or pairs.info["pairs"] / pairs.info["queries"]
        return combined(data, [Part(1.0 - weight, alone), Part(weight / mean, pairs)],
                        {**alone.info, "pairwise": weight, "pairs": pairs.info["pairs"]})

    return build


def combined(data, parts: list, info: dict) -> TrainingProblem:
    """The TrainingProblem of sum_m lambda_m (1/n) sum_q xi_qm over the queries of data (Part: lambda_m and a
    loss's problem): each oracle's constraint weighted, latent targets likewise (module docstring)."""
    parts = [part for part in parts if part.weight > 0]

    def most_violated(scores):
        dcoef, delta = np.zeros(data.X.shape[0]), 0.0
        for part in parts:
            d, value = part.problem.most_violated(scores)
            dcoef += part.weight * d
            delta += part.weight * value
        return dcoef, delta

    latent = [(part.weight, part.problem.latent_target) for part in parts if part.problem.latent_target is not None]

    def latent_target(scores):
        shift = np.zeros(data.X.shape[0])
        for weight, target in latent:
            shift += weight * target(scores)
        return shift

    references = [(part.weight, part.problem.reference) for part in parts]
    reference = (Reference("sum", 1, lambda e: 0, lambda e, out: None, parts=references)
                 if all(r is not None for _, r in references) else None)
    # skipped: the fewest any loss leaves out (a query every loss leaves out is in none of their sums)
    return TrainingProblem(data.X, data.n_examples, most_violated, skipped=min(p.problem.skipped for p in parts),
                           examples=data.n_examples, info=info, latent_target=latent_target if latent else None,
                           reference=reference)


def _measure(opts: dict) -> str:
    loss, implied = components(opts.get("combo_losses") or DEFAULT_COMPONENTS)[0]
    return loss.measure(loss.resolve({}, implied)) if loss.measure else "map"


LOSSES = [
    Loss("combo", (), "combo", "weighted sum of several ranking losses, each with its own map (SVM-combo, "
         "Chakrabarti et al. 2008; -l combo:ndcg@10,mrr,map)", build, 0.001,
         options=(COMPONENTS, WEIGHTS, REL_THRESHOLD), output="ranking", measure=_measure, needs_qid=True),
]
