"""DORM: direct optimisation of ranking measures (Le & Smola 2007). Examples are queries.

Delta(y, pi) = <a(1), b(y)> - <a(pi), b(y)> (eq. 17) for the measure's position vector a and document
vector b (eqs. 9-16). `mrr` is 1 - 1/rank of the first relevant document (label > rel_threshold), as
`eval` scores it; with one relevant document that is eq. 10, with several it is not of the form <a(pi), b>.

The joint feature map (`--position-weights`):
- `measure` (the default of dcg@k, wta, mwta, eru): the measure's own map. For the <a, b> measures
  Psi(x, pi) = sum_i a_{pi(i)} phi(d_i), c = a: the positions Psi weighs are exactly those Delta counts, with
  the measure's weights, and the most violated ranking is a sort by score - b (dorm_oracles, SORT_PLAN).
  For `mrr`, the first-relevant map (dorm_oracles, MRR_FIRST_PLAN): the documents above the first relevant
  one and that one, weighted by how much each costs in reciprocal rank.
- `pairs` (mrr's default): the pairwise map of SVM-map, SVM-ndcg and SVM-mrr (Chakrabarti, Khanna, Sawant &
  Bhattacharyya 2008), Psi(x, pi) = 1/P sum over the P pairs of documents of different gain b of
  (phi_upper - phi_lower), upper the one pi ranks first. Graded labels: a pair counts when the gains differ
  (as svm_rank's pairs count different labels), so every ideal ranking has the same Psi and there is no latent
  variable. precision@k's gain is a threshold of the labels; its pairs are those of different label
  (LABEL_PAIRS), the target the ranking by label: the grades above the threshold are information the
  relevant-or-not pairs throw away (measured on the noisy lists, `make exp-noisy`: test P@10 0.4793 with the
  relevant-or-not pairs, 0.4952 with the labels' at noise 6; `pairs` 0.5010). wta keeps its gain's pairs (its
  labels' pairs measured worse there: NDCG@10 0.2444 against 0.3445). The oracle is exact (dorm_oracles: the
  truncated program, or mrr's O(l^2) search over the rank of the first relevant document, with the pairs' sum
  added). Measured (`make exp-noisy`, `make exp-longlists`):
  mrr learns with it on both the long lists and the noisy lists (its own first-relevant map barely does on
  the noisy ones); ndcg@k and precision@k do not learn with it there either (see docs/losses.md).
- `top-pairs` (the default of ndcg@k and precision@k): the pairwise map restricted to the pairs whose upper
  document is in the top k of the ranking, 1/P with P those of the ideal ranking. On noisy lists with many
  relevant documents the measure's own map and `pairs` let the most violated ranking put the best-scored
  non-relevant documents on top and pay only for them against the relevant ones (on average, or nothing
  below k): their top order statistics beat the relevant documents' for every w, and w = 0 is the optimum.
  Here the target's top k, the relevant documents of highest score (a latent choice, as below), are
  compared with every document below them, so a w that ranks its best relevant documents above the rest
  lowers the bound. Exact oracle: the truncated program with the top-by-rest pairs in closed form per
  full state.
- `pow:D`, `log`, `loglog`: Le & Smola's map (eq. 20), a decreasing c over every position of the list.
  Delta ignores positions beyond the cut-off k but Psi does not, so a ranking that keeps the high-scoring
  documents near the top but no relevant one in the top k costs the full loss at a small margin; on long
  lists (~100 candidates or more) the optimum is then w ~ 0 for ndcg@10, precision@10 or mrr (docs/losses.md,
  "Listwise losses"). Kept for fidelity with the paper.

The correct output y: every ranking that sorts the documents by the measure's gain b is ideal (Delta 0),
whatever the order among documents of equal gain. A target built from one arbitrary order (the file's)
asks w to reproduce that order with a margin, which no w can do on real data: the optimum collapses to
w ~ 0 (slack = the loss at w = 0). So the order inside a gain level is a latent variable: Psi(x, y) is
that of the ideal ranking most compatible with w (inside a gain level, by score; documents equal in
gain and score share the mean of their positions' c; for mrr's own map, the relevant document of highest
score at the top), trained by CCCP (train.py; Yu & Joachims 2009).
At w = 0 this is Psi averaged over the orders inside each level. The oracle's ranking is likewise
averaged over documents equal in gain and score, so nothing depends on the order of the input lines.

With the svm_struct convention the objective is 1/2|w|^2 + (C/n) sum_q xi_q, n the number of queries
used; the paper's C (a sum over queries) equals our C / n. Queries whose Delta is identically 0 (all
documents of one gain) are skipped and counted.
"""
from __future__ import annotations

import functools

import numpy as np

from svmstruct.compute import threads
from svmstruct.errors import InputError
from svmstruct.evaluation import listwise
from svmstruct.options import between, parse_number
from svmstruct.spec import REL_THRESHOLD, K, Loss, Option
from svmstruct.train.problem import Reference, TrainingProblem

# one-thread nanoseconds a document of the oracle below (scripts/bench_threads.py on this project's 2-core machine)
NS_PER_DOCUMENT, NS_PER_DOCUMENT_LATENT = 103.0, 102.0  # the oracle, the latent target


def _kernels():
    """svmstruct.losses.dorm_oracles (numba), loaded when a DORM loss trains, not with the registry."""
    from svmstruct.losses import dorm_oracles

    return dorm_oracles


MEASURE_MAP = "measure"
PAIRS_MAP = "pairs"  # the pairwise map of SVM-map, SVM-ndcg and SVM-mrr (Chakrabarti et al. 2008)
TOP_PAIRS_MAP = "top-pairs"  # the pairs with a document in the top k (module docstring)
LARGEST_POWER = 100.0  # pow:D: (i+1)^-D stays a normal double for D up to this and lists of millions


def position_weights(spec: str, l: int) -> np.ndarray:
    """c for positions 1..l of Le & Smola's map: `pow:D` (i+1)^-D, `log` 1/ln(i+2), `loglog` 1/ln ln(i+2)."""
    i = np.arange(1, l + 1, dtype=float)
    if spec.startswith("pow:"):
        try:
            D = parse_number(spec[4:])
        except ValueError:
            raise InputError("pow:D needs a finite number D") from None
        if not 0 < D <= LARGEST_POWER:
            raise InputError(f"pow:D needs 0 < D <= {LARGEST_POWER:g} (decreasing weights)")
        return (i + 1) ** -D
    if spec == "log":
        return 1.0 / np.log(i + 2)
    if spec == "loglog":
        return 1.0 / np.log(np.log(i + 2))
    raise InputError(f"is not one of {MEASURE_MAP}, {PAIRS_MAP}, {TOP_PAIRS_MAP}, pow:D, log, loglog")


def _check_position_weights(spec: str) -> str | None:
    """The option's check (options.Option): what is wrong with the spec, or None."""
    if spec in (MEASURE_MAP, PAIRS_MAP, TOP_PAIRS_MAP):
        return None
    try:
        position_weights(spec, 2)
    except InputError as e:
        return e.message
    return None


POSITION_WEIGHTS = Option("position_weights", ("--position-weights",), "str",
                          "the joint feature map: measure (the measure's own position weights; mrr: the "
                          "first-relevant map), pairs (SVM-map's pairwise map over documents of different gain, "
                          "as SVM-ndcg and SVM-mrr) or Le & Smola's decreasing weights c over the whole list, pow:D "
                          "((i+1)^-D), log (1/ln(i+2)) or loglog (1/ln ln(i+2))", default=MEASURE_MAP,
                          check=_check_position_weights, metavar="W", examples=("pow:1", "log", "pairs"))
CUTOFF = K.but(default=10, help="the cut-off k of the measure (also -l ndcg@5)")


def cutoff(a: np.ndarray) -> int:
    """Positions up to the last nonzero a (the measure ignores the rest)."""
    nonzero = np.flatnonzero(a)
    return int(nonzero[-1]) + 1 if len(nonzero) else 0


def oracle_plan(a, b) -> int:
    """How to find the most violated ranking for these measure vectors: the cut-off k for the truncated
    dynamic program when its table is cheaper than the linear assignment (measured: ~5e-9 s per state
    and group against ~2.5e-10 n^3 s, scripts/bench_dorm_oracle.py), -1 for the assignment."""
    k = cutoff(a)
    if k == 0:
        return 0
    states = _kernels().truncated_states(b, k)
    if states and states * len(np.unique(b)) < 0.05 * len(b) ** 3:
        return k
    return -1


def check_gain_labels(data, largest: float) -> None:
    """The measure's gain of every label is a finite double (labels up to `largest`): InputError naming the first
    line beyond."""
    beyond = np.flatnonzero(data.y > largest)
    if len(beyond):
        raise InputError(f"label {data.y[beyond[0]]:g}: its gain 2^label - 1 overflows double precision (labels up to "
                         f"{largest:g})", data.path, int(data.line[beyond[0]]))


def settings(measure: listwise.ListwiseMeasure, opts: dict) -> listwise.Settings:
    """The measure's settings from the loss's options (its cut-off -k, --rel-threshold, its parameters)."""
    return measure.settings(int(opts.get("k") or 10) if measure.has_cutoff else None,
                            float(opts.get("rel_threshold") or 0.0),
                            **{p.name: opts[p.name] for p in measure.parameters if opts.get(p.name) is not None})


def measure_vectors(name: str, labels: np.ndarray, opts: dict) -> tuple[np.ndarray, np.ndarray]:
    """(a over positions 1..l, b over documents) of the loss `name`'s measure <a(pi), b(y)> (Le & Smola eqs. 9-16;
    evaluation/listwise.py defines each)."""
    measure = listwise.by_loss(name)
    return measure.vectors(labels, settings(measure, opts))


def pair_count(grade: np.ndarray, k: int) -> int:
    """P of the pairwise maps: the pairs of documents of different grade in the ranking by grade whose upper
    document is in its top k (k = len(grade): every such pair)."""
    ascending = np.sort(grade)
    return int(np.searchsorted(ascending, ascending[::-1][:k], side="left").sum())


def query_map(name: str, spec: str, a: np.ndarray, b: np.ndarray,
              grade: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """(c over the query's positions, the oracle's plan) of the joint feature map `spec` for one query
    (the pairwise maps, over pairs of different grade, b unless given: c = 0, and their own 1/P weight is
    pair_count's)."""
    grade = b if grade is None else grade
    if spec in (PAIRS_MAP, TOP_PAIRS_MAP):
        if name == "mrr":
            if spec == TOP_PAIRS_MAP:
                raise InputError(f"--position-weights {TOP_PAIRS_MAP} needs a cut-off k (mrr has none: use "
                                 f"{PAIRS_MAP})")
            return np.zeros(len(b)), _kernels().MRR_PLAN
        k = cutoff(a)
        if not _kernels().truncated_states(grade, k):
            raise InputError(f"--position-weights {spec}: a query of {len(np.unique(grade))} grades and cut-off {k} "
                             f"needs more than {_kernels().MAX_STATES:,} states; use a smaller cut-off or "
                             f"--position-weights {MEASURE_MAP}")
        return np.zeros(len(b)), k
    if spec == MEASURE_MAP:
        if name == "mrr":
            return np.zeros(len(b)), _kernels().MRR_FIRST_PLAN
        return a.copy(), _kernels().SORT_PLAN
    c = position_weights(spec, len(b))
    return c, _kernels().MRR_PLAN if name == "mrr" else oracle_plan(a, b)


def _builder(name: str, measure: listwise.ListwiseMeasure | None):
    """The listwise loss's problem (--pairwise is mixed in by the registry: combo.with_pairs); measure None: mrr."""
    def build(data, opts: dict) -> TrainingProblem:
        spec = opts.get("position_weights") or MEASURE_MAP
        threshold = float(opts.get("rel_threshold") or 0.0)
        n_docs = data.n_docs
        if measure is not None:
            check_gain_labels(data, measure.largest_label)
            at = settings(measure, opts)
        label_pairs = measure is not None and measure.loss is not None and measure.loss.label_pairs
        pairwise, top = spec in (PAIRS_MAP, TOP_PAIRS_MAP), spec == TOP_PAIRS_MAP
        # per row: the measure's position vector a and Psi's c (positions of the row's query), gain b
        a_rows, b_rows, grade_rows, c_rows, target_rows = (np.zeros(n_docs) for _ in range(5))
        los, his, best, plans, scales = [], [], [], [], []
        for lo, hi in zip(data.qptr[:-1], data.qptr[1:]):
            labels = data.y[lo:hi]
            if measure is None:
                a, b = np.zeros(hi - lo), (labels > threshold).astype(float)
            else:
                a, b = measure.vectors(labels, at)
            if not np.any(b) or np.all(b == b[0]):
                continue
            grade = labels if pairwise and label_pairs else b
            c, plan = query_map(name, spec, a, b, grade)
            a_rows[lo:hi], b_rows[lo:hi], grade_rows[lo:hi], c_rows[lo:hi] = a, b, grade, c
            scale = 0.0
            if pairwise:  # the pairs counted: those with the upper document in the top k, or all of them
                counted = plan if top else hi - lo
                scale = 1.0 / pair_count(grade, counted)
                target_rows[lo:hi] = scale * _kernels().top_pairs_target(grade, np.zeros(hi - lo), counted)
            else:
                target_rows[lo:hi] = _kernels().target_coefficients(b, np.zeros(hi - lo), c, plan)
            scales.append(scale)
            los.append(lo)
            his.append(hi)
            best.append(1.0 if name == "mrr" else float(a @ np.sort(b)[::-1]))
            plans.append(plan)
        if not los:
            raise InputError("no query has documents that the measure can tell apart", data.path)
        starts, ends = np.array(los, dtype=np.int64), np.array(his, dtype=np.int64)
        best_values, plan_codes, pair_scales = np.array(best), np.array(plans, dtype=np.int64), np.array(scales)
        top_pairs = np.full(len(los), top)

        work = threads.documents(NS_PER_DOCUMENT, n_docs)
        latent_work = threads.documents(NS_PER_DOCUMENT_LATENT, n_docs)

        def most_violated(scores):
            dcoef = np.zeros(n_docs)
            deltas = np.empty(len(starts))
            with threads.for_work(work):
                _kernels().most_violated_all(np.ascontiguousarray(scores, dtype=np.float64), starts, ends, a_rows,
                                               b_rows, grade_rows, c_rows, target_rows, best_values, plan_codes,
                                               pair_scales, top_pairs, dcoef, deltas)
            return dcoef, float(deltas.sum())

        def latent_target(scores):
            shift = np.zeros(n_docs)
            with threads.for_work(latent_work):
                _kernels().latent_shift_all(np.ascontiguousarray(scores, dtype=np.float64), starts, ends, b_rows,
                                              grade_rows, c_rows, target_rows, plan_codes, pair_scales, top_pairs,
                                              shift)
            return shift

        return TrainingProblem(data.X, len(los), most_violated, skipped=data.n_examples - len(los),
                               info={"queries": data.n_examples, "position_weights": spec},
                               latent_target=None if pairwise and not top else latent_target,
                               reference=_reference(name, list(zip(los, his)), a_rows, b_rows, grade_rows, c_rows,
                                                    "first" if name == "mrr" and spec == MEASURE_MAP else
                                                    spec if pairwise else "positions"))

    return build


# a loss that declares --pairwise has svm_rank's pairs mixed into its bound by the registry (combo.with_pairs: a family
# module imports no other family)
PAIRWISE = Option("pairwise", ("--pairwise",), "float", "the weight lambda of svm_rank's pairs in the loss: (1 - "
                  "lambda) Delta + lambda (swapped pairs / their mean number a query); 0: the listwise loss alone, 1: "
                  "pairs", default=0.0, check=between(0.0, 1.0), metavar="LAMBDA")


def first_relevant_map(pos: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Psi coefficients of a ranking (positions, 0-based) under mrr's first-relevant map: 1/j - 1/(j+1) for
    the document at rank j above the first relevant one, 1/p for that one (at rank p)."""
    p = 1 + int(pos[relevant].min())
    coef = np.zeros(len(pos))
    for i, j in enumerate(pos + 1):
        if j < p:
            coef[i] = 1.0 / j - 1.0 / (j + 1)
        elif j == p:
            coef[i] = 1.0 / p
    return coef


def pairwise_map(pos: np.ndarray, grade: np.ndarray, top: int | None = None) -> tuple[np.ndarray, int]:
    """Psi coefficients of a ranking under the pairwise map, straight from its definition: sum over pairs of
    different grade of (phi_upper - phi_lower), with `top` only the pairs whose upper document is at a
    position < top (TOP_PAIRS_MAP); unscaled. Returns (coefficients, number of pairs)."""
    coef = np.zeros(len(grade))
    pairs = 0
    for i in range(len(grade)):
        for j in range(len(grade)):
            if grade[i] != grade[j] and pos[i] < pos[j] and (top is None or pos[i] < top):
                coef[i] += 1.0
                coef[j] -= 1.0
                pairs += 1
    return coef, pairs


def _reference(name: str, queries: list, a_rows, b_rows, grade_rows, c_rows, psi: str) -> Reference:
    """Outputs: a ranking (each document's position). Psi(x, pi) = sum_i c_pi(i) phi_i (eq. 20) against
    the target at w = 0: every document gets the mean c over the positions its gain level occupies in the
    ideal order (see the module docstring); for mrr's first-relevant map (psi "first"), Psi as
    first_relevant_map and the target at w = 0 gives each relevant document 1/#relevant; for the pairwise
    and the top-k pairs maps (pairs of different grade_rows), pairwise_map against its mean over every order
    inside each grade of the ranking by grade (the target at w = 0; for every pair it is the same for all of
    them), 1/P of its pairs.
    Delta = <a(1), b> - <a(pi), b> (eq. 17), for mrr 1 - 1/rank of the first relevant document."""

    @functools.cache
    def target(e):
        """(the target's coefficients at w = 0, the number of pairs P or 1, the cut-off of the top-k pairs, the ideal
        ranking's <a, b>) of example e: the same for every output, so computed once (the contract battery enumerates
        outputs)."""
        lo, hi = queries[e]
        b, c = b_rows[lo:hi], c_rows[lo:hi]
        ideal = np.sort(b)[::-1]
        best = float(a_rows[lo:hi] @ ideal)
        if psi == "first":
            relevant = b > 0
            return relevant / relevant.sum(), 1, None, best
        if psi in (PAIRS_MAP, TOP_PAIRS_MAP):
            k = cutoff(a_rows[lo:hi]) if psi == TOP_PAIRS_MAP else None
            grade = grade_rows[lo:hi]
            ideal_pos = np.empty(len(b), dtype=np.int64)
            ideal_pos[np.argsort(-grade, kind="mergesort")] = np.arange(len(b))
            ideal_map, pairs = pairwise_map(ideal_pos, grade, k)
            # the mean over every order inside the grades: each document of a grade equally likely at each of
            # the grade's positions, so it gets the grade's mean coefficient
            return np.array([ideal_map[grade == level].mean() for level in grade]), pairs, k, best
        return np.array([c[ideal == level].mean() for level in b]), 1, None, best

    def constraint(e, out):
        lo, hi = queries[e]
        b, c = b_rows[lo:hi], c_rows[lo:hi]
        pos = np.asarray(out)
        dcoef = np.zeros(len(b_rows))
        coefficients, pairs, k, best = target(e)
        if psi == "first":
            dcoef[lo:hi] = coefficients - first_relevant_map(pos, b > 0)
        elif psi in (PAIRS_MAP, TOP_PAIRS_MAP):
            dcoef[lo:hi] = (coefficients - pairwise_map(pos, grade_rows[lo:hi], k)[0]) / pairs
        else:
            dcoef[lo:hi] = coefficients - c[pos]
        if name == "mrr":
            return dcoef, 1.0 - 1.0 / (1 + int(pos[b > 0].min()))
        a = a_rows[lo:hi]
        return dcoef, best - float(a[pos] @ b)

    return Reference("ranking", len(queries), lambda e: queries[e][1] - queries[e][0], constraint)


def _dorm(measure: listwise.ListwiseMeasure, defaults: listwise.DormLoss) -> Loss:
    """The DORM loss of a listwise measure: its cut-off, threshold and parameters as options, its loss's defaults."""
    own = tuple(Option(p.name, ("--" + p.name.replace("_", "-"),), "float", p.help, default=p.default, check=p.check,
                       metavar=p.metavar, examples=p.examples) for p in measure.parameters)
    options = (*((CUTOFF,) if measure.has_cutoff else ()), *((REL_THRESHOLD,) if measure.uses_threshold else ()), *own)

    def selected_by(opts: dict) -> str:
        return defaults.selects_by or measure.printed_name(settings(measure, opts))

    return _loss(defaults.name, defaults.aliases, defaults.summary, _builder(defaults.name, measure), selected_by,
                 options, defaults.position_weights, defaults.pairwise)


def _loss(name, aliases, summary, build, measure, options, feature_map, pairwise) -> Loss:
    weights = POSITION_WEIGHTS if feature_map == MEASURE_MAP else POSITION_WEIGHTS.but(default=feature_map)
    return Loss(name, aliases, "dorm", summary, build, 0.001, options=(*options, weights,
                PAIRWISE.but(default=pairwise)), output="ranking", measure=measure, needs_qid=True)


# every listwise measure that names a loss (evaluation/listwise.py), and mrr, which is not of the form <a(pi), b>
LOSSES = [_dorm(measure, measure.loss) for measure in listwise.MEASURES if measure.loss is not None] + [
    _loss("mrr", (), "1 - reciprocal rank of the first relevant document (DORM eq. 10; SVM-mrr's pairwise map)",
          _builder("mrr", None), lambda o: "mrr", (REL_THRESHOLD,), PAIRS_MAP, 0.5)]
