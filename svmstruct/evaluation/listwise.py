"""The listwise measures <a(pi), b(y)> (Le & Smola 2007, eqs. 9-16), each defined once: `eval`'s value of a query,
its batch over many queries and DORM's loss vectors (losses/dorm.py) all come from one ListwiseMeasure.

A measure of a ranking pi of a query's documents is

    value(pi) = 1/N * sum_{i < cut} gain(label at position i) / discount(i)        (positions i from 0)

with N = 1, the cut-off k (Precision@k) or the same sum over the labels sorted down (the ideal ranking: NDCG, ERU;
0 when that is 0). Sums add their terms in rank order from 0.0, as trec_eval does, so a query's value and its batch
are equal to the bit (tests/test_measures.py). DORM's vectors are a_i = 1 / (discount(i) N) for i < cut (N a
constant) and b = gain(labels) (over the ideal value a . b(ideal) when N is that), so <a(pi), b> is the value.

To add one: a ListwiseMeasure in MEASURES. `eval -m NAME` then computes it (`NAME@10` for a cut-off, `NAME:V1:V2` for
its parameters) and, if it names a `loss`, `learn -l` trains DORM on it with its parameters as options.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from svmstruct.evaluation import batch_measures as batch
from svmstruct.evaluation.batch_measures import exp_gains, gain_shift
from svmstruct.options import LARGEST_INTEGER, LARGEST_SCALE, above_at_most, between

NORM_ONE, NORM_K, NORM_IDEAL = "1", "k", "ideal"  # N: none, the cut-off, the ideal ranking's value
LARGEST_GAIN_LABEL = 1023  # 2^label - 1 is a finite double up to this label


@dataclass(frozen=True)
class Parameter:
    """A measure's own number (ERU's alpha): the option `--NAME` of its loss, and `eval`'s NAME:V spelling."""

    name: str  # the loss's keyword, e.g. "eru_alpha" (flag --eru-alpha)
    default: float
    help: str
    check: Callable  # value -> what is wrong, or None (svmstruct.options' checks)
    metavar: str = "X"
    examples: tuple = ()  # values the loss's contract battery tries


@dataclass(frozen=True)
class Settings:
    """What a measure is computed with: its cut-off k (None: the whole list), the relevance threshold and the values
    of its parameters, by name."""

    k: int | None = None
    threshold: float = 0.0
    values: dict = field(default_factory=dict)


@dataclass(frozen=True)
class DormLoss:
    """The DORM loss 1 - the measure (or ideal - the measure where N = 1): its name, and the defaults `make exp-real`
    chose for it (docs/losses.md)."""

    name: str
    aliases: tuple = ()
    summary: str = ""
    position_weights: str = "measure"  # the joint feature map (losses/dorm.py)
    pairwise: float = 0.0  # the weight of svm_rank's pairs mixed in (make exp-real: the listwise bound alone loses)
    label_pairs: bool = False  # the pairwise maps count pairs of different label, not of different gain
    selects_by: str | None = None  # the eval measure a grid of C is chosen by, if not this one


@dataclass(frozen=True)
class ListwiseMeasure:
    """One measure: gain(labels, their query's largest label, settings) of documents, discount(positions, settings) of
    positions from 0, its cut-off and N (module docstring)."""

    name: str  # eval's name; "p@k": a cut-off k, written p@10
    formula: str  # what it computes, with the paper's equation
    gain: Callable
    discount: Callable
    norm: str = NORM_ONE
    spellings: tuple = ()  # other eval names, e.g. trec_eval's "P_k"
    parameters: tuple = ()  # Parameter values, in eval's NAME:V1:V2 order
    uses_threshold: bool = False  # its gain reads the relevance threshold
    largest_label: float = float("inf")  # labels beyond this overflow its gain
    fixed_k: int | None = None  # the cut-off of a measure without one in its name (wta: 1)
    query_cutoff: Callable | None = None  # the cut-off from the query's labels (mwta), in place of k
    loss: DormLoss | None = None

    @property
    def has_cutoff(self) -> bool:
        return self.name.endswith("@k") or self.name.endswith("_k")

    def settings(self, k=None, threshold: float = 0.0, **values) -> Settings:
        """Settings with the measure's fixed cut-off and its parameters' defaults where none is given."""
        own = {p.name: float(values.get(p.name, p.default)) for p in self.parameters}
        return Settings(self.fixed_k if self.fixed_k is not None else k, threshold, own)

    def printed_name(self, s: Settings) -> str:
        """The name eval prints for these settings: ndcg@10, eru, eru:3:1."""
        name = self.name[:-1] + str(s.k) if self.has_cutoff else self.name
        values = [s.values[p.name] for p in self.parameters]
        if values != [p.default for p in self.parameters]:
            name += "".join(f":{v:g}" for v in values)
        return name

    def _norm_k(self, s: Settings) -> float:
        if s.k is None:
            raise ValueError(f"{self.name}: N = k needs a cut-off")
        return float(s.k)

    def _cut(self, n: int, labels: np.ndarray, s: Settings) -> int:
        if self.query_cutoff is not None:
            return min(self.query_cutoff(labels), n)
        return n if s.k is None else min(s.k, n)

    def value(self, ranked: np.ndarray, labels: np.ndarray, s: Settings) -> float:
        """The measure of one query: its labels in ranked order and in file order."""
        n = self._cut(len(ranked), labels, s)
        top = labels.max()
        discounts = self.discount(np.arange(n, dtype=float), s)
        total = batch.sequential_sum(self.gain(ranked[:n], top, s) / discounts)
        if self.norm == NORM_K:
            return total / self._norm_k(s)
        if self.norm == NORM_IDEAL:
            ideal = np.sort(labels)[::-1][:n].copy()  # a copy: numpy's power can differ in the last bit on a view
            best = batch.sequential_sum(self.gain(ideal, top, s) / discounts)
            return total / best if best > 0 else 0.0
        return total

    def batch(self, ranked: np.ndarray, labels: np.ndarray, qptr: np.ndarray, s: Settings) -> np.ndarray:
        """The measure of every query q (rows qptr[q]:qptr[q + 1], in ranked order and in file order), equal to value's
        to the bit."""
        top = np.repeat(np.maximum.reduceat(labels, qptr[:-1]), np.diff(qptr))
        sizes = np.diff(qptr)
        if self.query_cutoff is not None:
            cuts = np.array([self._cut(hi - lo, labels[lo:hi], s) for lo, hi in zip(qptr[:-1], qptr[1:])],
                            dtype=np.int64)
        else:
            cuts = sizes if s.k is None else np.minimum(sizes, s.k)
        positions = batch.positions(qptr)
        kept = positions < np.repeat(cuts, sizes)
        discounts = self.discount(positions[kept].astype(float), s)

        def sums(gains):
            return batch.sums(gains[kept] / discounts, cuts)

        total = sums(self.gain(ranked, top, s))
        if self.norm == NORM_K:
            return total / self._norm_k(s)
        if self.norm == NORM_IDEAL:
            return batch.ratio(total, sums(self.gain(batch.sorted_down(labels, qptr), top, s)))
        return total

    def vectors(self, labels: np.ndarray, s: Settings) -> tuple[np.ndarray, np.ndarray]:
        """DORM's (a over positions 1..l, b over the documents) of a query's labels: <a(pi), b> is value(pi)."""
        n = len(labels)
        cut = self._cut(n, labels, s)
        a = np.zeros(n)
        scale = self._norm_k(s) if self.norm == NORM_K else 1.0
        a[:cut] = 1.0 / (self.discount(np.arange(cut, dtype=float), s) * scale)
        b = self.gain(labels, labels.max(), s)
        if self.norm == NORM_IDEAL:
            best = float(a @ b[np.argsort(-labels, kind="mergesort")])
            b = b / best if best > 0 else np.zeros(n)
        return a, b


def mwta_cutoff(labels: np.ndarray) -> int:
    """The paper's section 6.4 truncation: 3 if the ideal top 3 hold two or more grades, else the position after the
    last document of the top grade (so one lower document is included)."""
    ideal = labels[np.argsort(-labels, kind="mergesort")]
    if len(np.unique(ideal[:3])) >= 2:
        return 3
    return min(int(np.sum(ideal == ideal[0])) + 1, len(labels))


def _log_discount(positions, s):
    return np.log2(positions + 2.0)


def _flat(positions, s):
    return np.ones(len(positions))


def _exp_gain(labels, top, s):
    return exp_gains(labels, gain_shift(top))


def _relevant(labels, top, s):
    return (labels > s.threshold).astype(float)


def _eru_discount(positions, s):
    return 2.0 ** (positions / (s.values["eru_alpha"] - 1.0))


NDCG = ListwiseMeasure(
    "ndcg@k", "NDCG@k: gain 2^label - 1, discount log2(1 + rank), over the ideal ranking's (Le & Smola eq. 14)",
    _exp_gain, _log_discount, NORM_IDEAL, largest_label=LARGEST_GAIN_LABEL,
    loss=DormLoss("ndcg@k", ("ndcg",), "1 - NDCG@k, gain 2^label - 1 (DORM, Le & Smola eq. 14; the top-k pairs map)",
              position_weights="top-pairs", pairwise=0.5))
DCG = ListwiseMeasure(
    "dcg@k", "DCG@k: gain 2^label - 1, discount log2(1 + rank) (Jarvelin & Kekalainen)",
    lambda labels, top, s: 2.0 ** labels - 1.0, _log_discount, largest_label=LARGEST_GAIN_LABEL,
    loss=DormLoss("dcg@k", ("dcg",), "DCG@k of the ideal minus DCG@k (DORM)"))
PRECISION = ListwiseMeasure(
    "p@k", "Precision@k: the relevant documents (label > threshold) in the top k, over k (Le & Smola eq. 15)",
    _relevant, _flat, NORM_K, spellings=("P_k",), uses_threshold=True,
    loss=DormLoss("precision@k", ("dorm-prec",), "1 - positional Precision@k (DORM eq. 15; the top-k pairs map)",
              position_weights="top-pairs", pairwise=0.9, label_pairs=True))
WTA = ListwiseMeasure(
    "wta", "winner takes all: 1 if the top document has the query's highest label (Le & Smola eq. 9)",
    lambda labels, top, s: (labels == top).astype(float), _flat, fixed_k=1,
    loss=DormLoss("wta", (), "1 - winner takes all: top document of the highest grade (DORM eq. 9)"))
MWTA = ListwiseMeasure(
    "mwta", "NDCG at the paper's adaptive truncation for WTA (Le & Smola section 6.4: mwta_cutoff)",
    _exp_gain, _log_discount, NORM_IDEAL, largest_label=LARGEST_GAIN_LABEL, query_cutoff=mwta_cutoff,
    loss=DormLoss("mwta", (), "1 - NDCG at the paper's adaptive truncation for WTA (DORM section 6.4)",
                  selects_by="wta"))
ERU = ListwiseMeasure(
    "eru", "normalised expected rank utility: gain max(label - d, 0), discount 2^((rank - 1)/(alpha - 1)), over the "
    "ideal ranking's (Breese et al. 1998; Le & Smola eq. 16)",
    lambda labels, top, s: np.maximum(labels - s.values["eru_neutral"], 0.0), _eru_discount, NORM_IDEAL,
    parameters=(Parameter("eru_alpha", 5.0, "the viewing half-life alpha of ERU", above_at_most(1.0, LARGEST_SCALE),
                          "A", (3.0,)),
                Parameter("eru_neutral", 0.0, "the neutral vote d of ERU", between(-LARGEST_SCALE, LARGEST_SCALE),
                          "D", (1.0,))),
    loss=DormLoss("eru", (), "1 - normalised expected rank utility (DORM eq. 16, --eru-alpha, --eru-neutral)"))
TREC_NDCG = ListwiseMeasure(
    "ndcg_cut_k", "trec_eval's ndcg_cut_k (and ndcg, every document): gain = label (negative ones 0), discount "
    "log2(1 + rank), over the ideal ranking's",
    lambda labels, top, s: np.maximum(labels, 0.0), _log_discount, NORM_IDEAL, spellings=("ndcg",))

MEASURES = (NDCG, DCG, PRECISION, WTA, MWTA, ERU, TREC_NDCG)


def _pattern(name: str, parameters: tuple) -> re.Pattern:
    head = re.escape(name[:-1]) + r"(\d+)" if name.endswith(("@k", "_k")) else re.escape(name) + "()"
    return re.compile(head + r"((?::[^:]+){%d})?$" % len(parameters) if parameters else head + "()$")


def lookup(name: str) -> tuple[ListwiseMeasure, Settings] | None:
    """The measure eval calls `name` (ndcg@10, P_5, eru:3:1, ndcg: the whole list) and its settings, None if it is not
    a listwise measure; KeyError when it is one with a cut-off or parameter out of range."""
    for measure in MEASURES:
        for spelling in (measure.name, *measure.spellings):
            m = _pattern(spelling, measure.parameters).match(name)
            if not m:
                continue
            k = int(m.group(1)) if m.group(1) else None
            if k is not None and k > LARGEST_INTEGER:
                raise KeyError(f"the cutoff of '{name}' is larger than {LARGEST_INTEGER}")
            if k == 0:
                continue
            values = {}
            for parameter, text in zip(measure.parameters, (m.group(2) or "").split(":")[1:]):
                try:
                    values[parameter.name] = float(text)
                except ValueError:
                    raise KeyError(f"'{name}': {parameter.name} is not a number") from None
                problem = parameter.check(values[parameter.name])
                if problem:
                    raise KeyError(f"'{name}': {parameter.name} {problem}")
            return measure, measure.settings(k, **values)
    return None


def by_loss(name: str) -> ListwiseMeasure:
    """The measure whose DORM loss is called `name`."""
    return next(m for m in MEASURES if m.loss is not None and m.loss.name == name)
