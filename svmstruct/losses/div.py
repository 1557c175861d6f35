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
import scipy.sparse as sp

from svmstruct import diversity
from svmstruct.errors import InputError
from svmstruct.losses import Loss, TrainingProblem


def config_from(opts: dict) -> diversity.FeatureConfig:
    return diversity.FeatureConfig.parse(opts.get("levels"), opts.get("df_thresholds"), opts.get("title_offset"),
                                         opts.get("doc_features_from"))


def candidate_sets(data, config, covering=None, subtopics_path=""):
    """Prepared candidate sets and the design matrix Z (units, then document rows for psi)."""
    if not data.has_qid:
        raise InputError("diversity data needs qid:<candidate set> on every line", data.path)
    n_word = diversity.n_word_features(config)
    psi = diversity.document_features(data.X, config)
    width = n_word + (psi.shape[1] if psi is not None else 0)
    sets, blocks = [], []
    for lo, hi in zip(data.qptr[:-1], data.qptr[1:]):
        doc_units, unit_features = diversity.build_candidate_set(data.X, int(lo), int(hi), config, width)
        topics = weights = None
        if covering is not None:
            topics, weights = diversity.subtopic_matrix(data, int(lo), int(hi), covering, subtopics_path)
        sets.append(diversity.CandidateSet(int(lo), int(hi), doc_units, unit_features, topics, weights))
        blocks.append(unit_features)
    unit_rows = sum(b.shape[0] for b in blocks)
    if psi is not None:
        blocks.append(sp.hstack([sp.csr_matrix((psi.shape[0], n_word)), psi]).tocsr())
    Z = sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, width))
    return sets, Z, unit_rows


def split_scores(scores, sets, unit_rows):
    """Per candidate set: (unit benefits, document benefits) from scores = Z w."""
    offset = 0
    for cs in sets:
        units = cs.doc_units.shape[1]
        unit_benefit = scores[offset: offset + units]
        doc_benefit = scores[unit_rows + cs.lo: unit_rows + cs.hi] if len(scores) > unit_rows else np.zeros(cs.hi - cs.lo)
        yield cs, offset, unit_benefit, doc_benefit
        offset += units


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
    path = opts.get("subtopics")
    if not path:
        raise InputError("the div loss needs --subtopics QRELS (qid subtopic docid judgment)")
    K = int(opts.get("k") or 5)
    if K < 1:
        raise InputError(f"-k must be at least 1, got {K}")
    config = config_from(opts)
    covering = diversity.read_subtopics(path)
    diversity.check_docids(data, covering, path)
    sets, Z, unit_rows = candidate_sets(data, config, covering, path)
    zero = np.zeros(Z.shape[0])
    target = np.zeros(Z.shape[0])  # cover(y) of the correct subsets
    target_loss = 0.0  # their own loss: Delta is taken relative to it (Le & Smola's z0, Lemma 1)
    for cs, offset, unit_benefit, doc_benefit in split_scores(zero, sets, unit_rows):
        chosen, covered, own = diversity.select(cs, tie_break(cs, len(unit_benefit)), doc_benefit, K, loss_weight=-1.0)
        target[offset: offset + len(covered)] = covered
        target_loss += own
        if Z.shape[0] > unit_rows:
            target[unit_rows + cs.lo + chosen] = 1.0

    def most_violated(scores):
        cover = np.zeros(Z.shape[0])
        delta = 0.0
        for cs, offset, unit_benefit, doc_benefit in split_scores(scores, sets, unit_rows):
            best = None
            for weight in ORACLE_LOSS_WEIGHTS:
                chosen, covered, loss = diversity.select(cs, unit_benefit, doc_benefit, K, loss_weight=weight)
                violation = loss + float(covered @ unit_benefit) + float(doc_benefit[chosen].sum())
                if best is None or violation > best[0] + 1e-12:
                    best = (violation, chosen, covered, loss)
            _, chosen, covered, loss = best
            cover[offset: offset + len(covered)] = covered
            if Z.shape[0] > unit_rows:
                cover[unit_rows + cs.lo + chosen] = 1.0
            delta += loss
        return target - cover, delta - target_loss

    return TrainingProblem(Z, len(sets), most_violated,
                           info={"candidate sets": len(sets), "coverage units": unit_rows, "K": K})


def predict(model, data, K: int | None = None) -> list:
    """Greedy subsets (Algorithm 1) of every candidate set under the model: [(qid, [row indices])]."""
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
        chosen, _, _ = diversity.select(cs, unit_benefit, doc_benefit, K, loss_weight=0.0)
        out.append((int(data.qid[cs.lo]), [cs.lo + int(c) for c in chosen]))
    return out


LOSSES = [
    Loss("div", ("svmdiv",), "div", "weighted fraction of subtopics not covered by K documents (SVM-div)", build, 0.01),
]


def format_selections(model, data, fmt: str = "scores", tag: str = "svmstruct") -> str:
    """`qid docid docid ...` per candidate set (the K selected, in selection order), or with fmt 'trec' a
    TREC run ranking the whole candidate set by continuing the greedy selection (the K first)."""
    return format_subsets(data, predict(model, data, None if fmt != "trec" else 10 ** 9), fmt, tag)


def format_subsets(data, subsets, fmt: str = "scores", tag: str = "svmstruct") -> str:
    """[(qid, [row indices])] as `qid docid ...` lines, or with fmt 'trec' as a TREC run in that order."""
    lines = []
    for qid, rows in subsets:
        docids = [data.docids[r] for r in rows]
        if fmt == "trec":
            lines.extend(f"{qid} Q0 {d} {rank} {len(docids) - rank + 1} {tag}\n" for rank, d in enumerate(docids, 1))
        else:
            lines.append(f"{qid} " + " ".join(docids) + "\n")
    return "".join(lines)


BASELINES = ("unweighted", "essential-pages", "random")


def baseline(data, method: str, K: int, config: diversity.FeatureConfig, seed: int = 0) -> list:
    """The paper's baselines (section 6) on every candidate set: [(qid, [row indices])] of K documents
    chosen by unweighted word coverage, Essential Pages or at random (numpy seed). A word's term
    frequency is its body plus title count; document features are not words."""
    if not data.has_qid:
        raise InputError("diversity data needs qid:<candidate set> on every line", data.path)
    rng = np.random.default_rng(seed)
    out = []
    for lo, hi in zip(data.qptr[:-1], data.qptr[1:]):
        lo, hi = int(lo), int(hi)
        body, titles = diversity.split_columns(data.X[lo:hi], config)
        words = body if titles is None else body + titles
        if method == "unweighted":
            rows = diversity.unweighted_coverage(words, K)
        elif method == "essential-pages":
            rows = diversity.essential_pages(words, K)
        elif method == "random":
            rows = rng.choice(hi - lo, size=min(K, hi - lo), replace=False)
        else:
            raise InputError(f"unknown baseline '{method}' (one of {', '.join(BASELINES)})")
        out.append((int(data.qid[lo]), [lo + int(r) for r in rows]))
    return out


def read_selections(path: str) -> dict:
    """{qid: [docid, ...]} from `qid docid docid ...` lines."""
    from svmstruct.evaluate import open_predictions

    out = {}
    with open_predictions(path) as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            try:
                out[int(parts[0])] = parts[1:]
            except ValueError:
                raise InputError(f"expected 'qid docid ...', found '{line.strip()[:60]}'", path, lineno) from None
    return out


def evaluate_selections(data, subtopics_path: str, selections_path: str, alpha: float = 0.5) -> dict:
    """Measure table of diversity measures per candidate set and their means."""
    covering = diversity.read_subtopics(subtopics_path)
    chosen = read_selections(selections_path)
    table = {"subtopic-loss": {}, "s-recall": {}, "alpha-ndcg": {}}
    for lo, hi in zip(data.qptr[:-1], data.qptr[1:]):
        qid = int(data.qid[lo])
        topics, weights = diversity.subtopic_matrix(data, int(lo), int(hi), covering, subtopics_path)
        if qid not in chosen:
            raise InputError(f"no selection for candidate set {qid}", selections_path)
        index = {d: i for i, d in enumerate(data.docids[lo:hi])}
        unknown = [d for d in chosen[qid] if d not in index]
        if unknown:
            raise InputError(f"docid {unknown[0]} is not in candidate set {qid}", selections_path)
        rows = [index[d] for d in chosen[qid]]
        table["subtopic-loss"][str(qid)] = diversity.subtopic_loss(topics, weights, rows)
        table["s-recall"][str(qid)] = diversity.subtopic_recall(topics, rows)
        table["alpha-ndcg"][str(qid)] = diversity.alpha_ndcg(topics, rows, alpha)
    for row in table.values():
        row["all"] = float(np.mean(list(row.values())))
    return table
