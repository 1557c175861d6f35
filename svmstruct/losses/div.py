"""SVM-div (Yue & Joachims 2008) as a loss family: examples are candidate sets (qids).

The design matrix stacks the coverage units of every candidate set (and, with document features, one
row per document); see svmstruct.diversity. The "correct" subset y of a candidate set is the greedy
subset of K documents that covers the most subtopic weight (the paper's choice), ties between documents
adding the same weight going to the one covering more words; the oracle is the greedy algorithm on
Delta + w . Psi (section 5.1) or on w . Psi, whichever is more violated: approximate, so training stops
when that constraint is violated by at most epsilon or at the iteration cap.
"""
from __future__ import annotations

import numpy as np

from svmstruct.diversity import features, qrels
from svmstruct.diversity.features import candidate_sets, split_scores
from svmstruct.errors import InputError
from svmstruct.options import at_least, positive_int
from svmstruct.spec import K, Loss, Option
from svmstruct.train.problem import Reference, TrainingProblem


def _check_config(levels: str | None = None, thresholds: str | None = None):
    def check(value):
        try:
            features.FeatureConfig.parse(value if levels else None, value if thresholds else None)
        except InputError as e:
            return e.message
        return None

    return check


SUBTOPICS = Option("subtopics", ("--subtopics",), "str", "TREC diversity qrels `qid subtopic docid judgment`",
                   required=True, metavar="QRELS")
RETRIEVAL_SIZE = K.but(default=5, help="the retrieval size K")
LEVELS = Option("levels", ("--levels",), "str", "importance levels, e.g. tf>=1,tf>=2,tf>=5,rf>=0.02,title,tfidf-top:10",
                default=features.DEFAULT_LEVELS, check=_check_config(levels="x"), metavar="LEVELS")
DF_THRESHOLDS = Option("df_thresholds", ("--df-thresholds",), "str",
                       "thresholds on |D_l(v)|/n of the word features", default=features.DEFAULT_THRESHOLDS,
                       check=_check_config(thresholds="x"), metavar="LIST")
TITLE_OFFSET = Option("title_offset", ("--title-offset",), "int",
                      "feature ids above this are title words (id - offset)", default=0, check=at_least(0), metavar="T")
DOC_FEATURES_FROM = Option("doc_features_from", ("--doc-features-from",), "int",
                           "feature ids from this on are document features psi", check=positive_int, metavar="F")


def config_from(opts: dict) -> features.FeatureConfig:
    return features.FeatureConfig.parse(opts.get("levels"), opts.get("df_thresholds"), opts.get("title_offset"),
                                        opts.get("doc_features_from"))




# The oracle runs the greedy on Delta + w.Psi (section 5.1) and on w.Psi alone (the prediction itself) and
# keeps, per candidate set, the subset that violates its constraint more: both are approximations of the
# argmax, and the prediction's own constraint is the one whose violation bounds the training loss.
ORACLE_LOSS_WEIGHTS = (1.0, 0.0)


def tie_break(cs, units: int) -> np.ndarray:
    """Unit benefits that make the greedy cover the most subtopic weight first and, among documents
    adding the same weight, the most coverage units: subtopic weights are multiples of 1/(document-subtopic
    pairs), and all units together are worth less than that."""
    return np.full(units, 1.0 / (cs.doc_topics.nnz * (units + 1.0)))


def build(data, opts: dict) -> TrainingProblem:
    from svmstruct.diversity.greedy import select  # numba: loaded when SVM-div trains, not with the registry

    path = opts["subtopics"]
    K = int(opts.get("k") or 5)
    config = config_from(opts)
    covering = qrels.read_subtopics(path)
    qrels.check_docids(data, covering, path)
    sets, Z, unit_rows = candidate_sets(data, config,
                                        lambda lo, hi: qrels.subtopic_matrix(data, lo, hi, covering, path))
    zero = np.zeros(Z.shape[0])
    target = np.zeros(Z.shape[0])  # cover(y) of the correct subsets
    own_losses = []  # their own losses: Delta is taken relative to them (Le & Smola's z0, Lemma 1)
    for cs, offset, unit_benefit, doc_benefit in split_scores(zero, sets, unit_rows):
        chosen, covered, own = select(cs, tie_break(cs, len(unit_benefit)), doc_benefit, K, loss_weight=-1.0)
        target[offset: offset + len(covered)] = covered
        own_losses.append(own)
        if Z.shape[0] > unit_rows:
            target[unit_rows + cs.lo + chosen] = 1.0
    target_loss = float(np.sum(own_losses))

    def most_violated(scores):
        cover = np.zeros(Z.shape[0])
        delta = 0.0
        for cs, offset, unit_benefit, doc_benefit in split_scores(scores, sets, unit_rows):
            candidates: list[tuple] = []
            for weight in ORACLE_LOSS_WEIGHTS:
                chosen, covered, loss = select(cs, unit_benefit, doc_benefit, K, loss_weight=weight)
                violation = loss + float(covered @ unit_benefit) + float(doc_benefit[chosen].sum())
                if not candidates or violation > candidates[-1][0] + 1e-12:
                    candidates.append((violation, chosen, covered, loss))
            _, chosen, covered, loss = candidates[-1]
            cover[offset: offset + len(covered)] = covered
            if Z.shape[0] > unit_rows:
                cover[unit_rows + cs.lo + chosen] = 1.0
            delta += loss
        return target - cover, delta - target_loss

    return TrainingProblem(Z, len(sets), most_violated,
                           info={"candidate sets": len(sets), "coverage units": unit_rows, "K": K},
                           reference=_reference(sets, Z.shape[0], unit_rows, target, own_losses, K), exact=False)


def _reference(sets: list, rows: int, unit_rows: int, target: np.ndarray, own_losses: list, K: int) -> Reference:
    """Outputs: K documents of the candidate set. Psi (eq. 4) covers the units of every chosen document
    (and its document-feature row); Delta = weighted fraction of the subtopics not covered, relative to
    the correct subset's own. The oracle is greedy, not exact."""
    offsets = np.cumsum([0] + [cs.doc_units.shape[1] for cs in sets])

    def constraint(e, out):
        cs = sets[e]
        chosen = list(out)
        units = slice(offsets[e], offsets[e + 1])
        cover = np.zeros(rows)
        cover[units] = np.asarray(cs.doc_units[chosen].sum(axis=0)).ravel() > 0
        dcoef = np.zeros(rows)
        dcoef[units] = target[units] - cover[units]
        if rows > unit_rows:
            docs = slice(unit_rows + cs.lo, unit_rows + cs.hi)
            cover[unit_rows + cs.lo + np.asarray(chosen, dtype=int)] = 1.0
            dcoef[docs] = target[docs] - cover[docs]
        covered = np.asarray(cs.doc_topics[chosen].sum(axis=0)).ravel() > 0
        return dcoef, float(cs.topic_weights[~covered].sum()) - own_losses[e]

    return Reference("subset", len(sets), lambda e: sets[e].hi - sets[e].lo, constraint,
                     subset_size=lambda e: min(K, sets[e].hi - sets[e].lo), exact=False)


def selections(model, data, K: int | None = None) -> list:
    """Greedy subsets (Algorithm 1) of every candidate set under the model: [(qid, [row indices])]."""
    from svmstruct.diversity.greedy import select

    opts = model.options
    config = config_from(opts)
    K = K or int(opts.get("k") or 5)
    sets, Z, unit_rows = candidate_sets(data, config)
    w = np.zeros(Z.shape[1])
    common = min(len(w), model.n_features)
    w[:common] = model.w[:common]
    scores = Z @ w
    out = []
    for cs, _, unit_benefit, doc_benefit in split_scores(scores, sets, unit_rows):
        chosen, _, _ = select(cs, unit_benefit, doc_benefit, K, loss_weight=0.0)
        out.append((int(data.qid[cs.lo]), [cs.lo + int(c) for c in chosen]))
    return out


def predict(model, data, fmt: str = "selections", tag: str = "svmstruct") -> str:
    """classify's output: `qid docid docid ...` per candidate set (the K selected, in selection order), or
    with fmt 'trec' a TREC run ranking the whole candidate set by continuing the greedy selection."""
    return qrels.format_subsets(data, selections(model, data, None if fmt != "trec" else 10 ** 9), fmt, tag)


LOSSES = [
    Loss("div", ("svmdiv",), "div", "weighted fraction of subtopics not covered by K documents (SVM-div)", build, 0.01,
         options=(SUBTOPICS, RETRIEVAL_SIZE, LEVELS, DF_THRESHOLDS, TITLE_OFFSET, DOC_FEATURES_FROM), output="subset",
         predict=predict, formats=("selections", "trec"), needs_qid=True, plain_features=False),
]
