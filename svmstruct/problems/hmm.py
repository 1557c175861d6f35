"""SVM-hmm (Altun, Tsochantaridis & Hofmann 2003, as svm_hmm states its first-order model with emissions of order 0,
its defaults --t 1 --e 0): a tag per token, one emission weight vector per tag and one weight per pair of adjacent
tags,
    score(x, y) = sum_t w_{y_t}.x_t + sum_{t>1} w_trans[y_{t-1}, y_t],
Delta(y, ybar) the number of misclassified tags, 1/2|w|^2 + C/n sum_i xi_i over the n sequences. The most violated
tagging (margin rescaling) and the prediction are Viterbi's, the loss added to every wrong tag's emission score;
ties go to the smaller tag, earliest first. Files hold SVMlight lines `TAG qid:SEQUENCE index:value ...`, one token
a line, the tokens of a sequence on consecutive lines; tags 1..K (K: the largest tag of the training data)."""
from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
from numba import njit

from svmstruct.errors import InputError
from svmstruct.io.data import read_labelled
from svmstruct.options import Option, positive_int
from svmstruct.problems.base import StructuredProblem


@njit(cache=True)
def viterbi_all(emissions, transitions, bounds, out):
    """For every sequence lo..hi of `bounds`, out[lo:hi] = argmax over tag sequences of sum_t emissions[t, y_t] +
    sum_{t>lo} transitions[y_{t-1}, y_t] (0-based tags; ties: the smaller tag, the backtrace from the end)."""
    K = transitions.shape[0]
    for s in range(bounds.shape[0] - 1):
        lo, hi = bounds[s], bounds[s + 1]
        best = emissions[lo].copy()
        back = np.zeros((hi - lo, K), dtype=np.int64)
        for t in range(1, hi - lo):
            step = np.empty(K)
            for k in range(K):
                arg, value = 0, best[0] + transitions[0, k]
                for j in range(1, K):
                    candidate = best[j] + transitions[j, k]
                    if candidate > value:
                        arg, value = j, candidate
                back[t, k] = arg
                step[k] = value + emissions[lo + t, k]
            best = step
        last = 0
        for k in range(1, K):
            if best[k] > best[last]:
                last = k
        out[hi - 1] = last
        for t in range(hi - lo - 1, 0, -1):
            out[lo + t - 1] = back[t, out[lo + t]]


def viterbi(emissions: np.ndarray, transitions: np.ndarray) -> np.ndarray:
    """The best tag sequence (0-based) of one sequence's emission scores (viterbi_all)."""
    out = np.empty(len(emissions), dtype=np.int64)
    viterbi_all(np.ascontiguousarray(emissions, dtype=np.float64), np.ascontiguousarray(transitions, dtype=np.float64),
                np.array([0, len(emissions)], dtype=np.int64), out)
    return out


class HMM(StructuredProblem):
    """SVM-hmm: a first-order hidden Markov model trained as a structural SVM (Hamming loss)."""

    declared = (Option("tags", ("--tags",), "int", "the number of tags K (default: the training data's largest)",
                       check=positive_int),
                Option("features", ("--features",), "int", "the number of features D (default: the training "
                       "data's highest index)", check=positive_int))

    def __init__(self, tags: int | None = None, features: int | None = None):
        super().__init__(tags=tags, features=features)
        self._stack: tuple = (None,)  # (examples, their stacked tokens, bounds, tags): see _stacked

    def read(self, path: str) -> list:
        """[(the tokens' features as a CSR matrix, their tags as an array), ...] per sequence (qid)."""
        dataset, X, y = read_labelled(path, "tag")
        if not dataset.has_qid:
            raise InputError("SVM-hmm's files need qid:<sequence> on every line", path)
        return [(X[lo:hi], y[lo:hi]) for lo, hi in zip(dataset.qptr[:-1], dataset.qptr[1:])]

    def dimension(self, examples: list) -> int:
        if self.options.get("tags") is None:
            self.options["tags"] = int(max(int(tags.max()) for _, tags in examples))
        if self.options.get("features") is None:
            self.options["features"] = int(max(x.shape[1] for x, _ in examples))
        return self.K * self.D + self.K * self.K

    @property
    def K(self) -> int:
        return int(self.options["tags"])

    @property
    def D(self) -> int:
        return int(self.options["features"])

    def _parts(self, x, w: np.ndarray) -> tuple:
        """(emission scores, tokens x tags; transition weights, tags x tags)."""
        x = sp.csr_matrix(x)[:, :self.D]
        W = w[:self.K * self.D].reshape(self.K, self.D)[:, :x.shape[1]]
        return np.asarray(x @ W.T), w[self.K * self.D:].reshape(self.K, self.K)

    def psi(self, x, y):
        x = sp.csr_matrix(x)[:, :self.D].tocoo()
        tags = np.asarray(y, dtype=np.int64) - 1
        emission = tags[x.row] * self.D + x.col
        transition = self.K * self.D + tags[:-1] * self.K + tags[1:]
        return np.concatenate([emission, transition]), np.concatenate([x.data, np.ones(len(transition))])

    def loss(self, y, ybar) -> float:
        return float(np.sum(np.asarray(y) != np.asarray(ybar)))

    def most_violated(self, x, y, w: np.ndarray) -> np.ndarray:
        emissions, transitions = self._parts(x, w)
        emissions = emissions + 1.0
        emissions[np.arange(len(y)), np.asarray(y) - 1] -= 1.0
        return viterbi(emissions, transitions) + 1

    def predict(self, x, w: np.ndarray) -> np.ndarray:
        emissions, transitions = self._parts(x, w)
        return viterbi(emissions, transitions) + 1

    def cut(self, examples: list, w: np.ndarray, rescaling: int) -> tuple:
        """Every sequence's most violated tagging (Viterbi, margin rescaling) from one product of all tokens with
        the emission weights; the cut's emission part as G' X over the tokens, its transition part as counts."""
        X, bounds, truth = self._stacked(examples)
        K, D = self.K, self.D
        W = w[:K * D].reshape(K, D)[:, :X.shape[1]]
        transitions = w[K * D:].reshape(K, K)
        emissions = np.asarray(X @ W.T) + 1.0
        emissions[np.arange(len(truth)), truth] -= 1.0
        ybar = np.empty(len(truth), dtype=np.int64)
        viterbi_all(np.ascontiguousarray(emissions), np.ascontiguousarray(transitions), bounds, ybar)
        tokens = np.arange(len(truth))
        G = sp.csr_matrix((np.concatenate([np.ones(len(truth)), -np.ones(len(truth))]),
                           (np.concatenate([tokens, tokens]), np.concatenate([truth, ybar]))), shape=(len(truth), K))
        emission_cut = np.zeros((K, D))
        emission_cut[:, :X.shape[1]] = np.asarray((G.T @ X).todense())
        inner = np.ones(len(truth), dtype=bool)
        inner[bounds[:-1]] = False  # a token that follows another of its sequence
        pairs = np.flatnonzero(inner)
        transition_cut = np.zeros((K, K))
        np.add.at(transition_cut, (truth[pairs - 1], truth[pairs]), 1.0)
        np.add.at(transition_cut, (ybar[pairs - 1], ybar[pairs]), -1.0)
        return np.concatenate([emission_cut.ravel(), transition_cut.ravel()]), float(np.sum(ybar != truth))

    def _stacked(self, examples: list) -> tuple:
        """(every token's features, the sequences' bounds, 0-based tags) of these examples (kept for the next call)."""
        if self._stack[0] is not examples:
            X = sp.vstack([sp.csr_matrix(x)[:, :self.D] for x, _ in examples], format="csr")
            bounds = np.concatenate([[0], np.cumsum([len(tags) for _, tags in examples])]).astype(np.int64)
            truth = np.concatenate([np.asarray(tags, dtype=np.int64) for _, tags in examples]) - 1
            self._stack = (examples, X, bounds, truth)
        return self._stack[1:]

    def outputs(self, x):
        return (np.array(tags) for tags in itertools.product(range(1, self.K + 1), repeat=sp.csr_matrix(x).shape[0]))

    def format(self, y) -> str:
        """One tag a line, as svm_hmm_classify writes them (a sequence's lines, without a trailing newline)."""
        return "\n".join(str(int(tag)) for tag in y)
