"""learn -t: a kernel through a low-rank map over a basis of --k vectors (Nystroem), a stage between the data
and the trainer.

Given basis vectors b_1..b_m and their Gram matrix K = [k(b_i, b_j)] = L L' (Cholesky), every document x maps
to phi(x) = L^-1 [k(b_j, x)]_j. Then phi(x).phi(y) is the Nystroem approximation of k(x, y), and a linear
model w on phi is the kernel expansion f(x) = sum_j beta_j k(b_j, x) with beta = L'^-1 w and |w|^2 = |f|^2 in
the kernel's feature space: training the linear SVM on phi solves the kernel SVM restricted to expansions
over the basis, svm_perf's sparse kernel problem (Joachims & Yu 2009, `--i 0 --t 1|2 --f`), exactly, with
every loss, OCAS, --validate, checkpoints and Dask shards unchanged. A basis vector whose pivot vanishes
(linearly dependent in the kernel's feature space, or a non-positive pivot of a kernel that is not positive
definite, the sigmoid) is dropped, as svm_perf's "independent subset of vectors" does.

Cost: the Gram matrix of n documents against m basis vectors (one sparse or BLAS product, the kernel in
parallel) and a triangular solve, O(n m (nnz + m)), once. Memory: the mapped training set is n x m single-
precision floats (n m 4 bytes); beyond it and the data as read, BLOCK rows at a time as a Basis and their BLOCK
x m Gram block in doubles.

Choosing the basis (`--t`), as svm_perf does: 1 (default) --k documents evenly spaced through --f FILE or
the training data (svm_perf's "random sample": every (n/k)-th; all of them when there are at most --k, so a
basis can be given exactly); 2 pivoted incomplete Cholesky (Fine & Scheinberg 2001): the candidate with the
largest residual k(x, x) - |phi(x)|^2 next, among --f FILE's vectors or at most cholesky_candidates(--k)
evenly spaced training documents. On svm_perf's reference cases both choose its very basis vectors.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from svmstruct.errors import InputError
from svmstruct.kernels import table
from svmstruct.kernels.kernel_functions import BLOCK, Basis, KernelExpansion, Rows, gram
from svmstruct.kernels.table import POLYNOMIAL, RBF, TYPES, Kernel

SPREAD, CHOLESKY = 1, 2  # --t
DEFAULT_SIZE = 500  # --k (svm_perf's default)
PIVOT_TOLERANCE = 1e-9  # relative to the largest k(b, b): smaller pivots drop their vector
LAPACK_PASSES = 16  # dropped vectors handled by restarting LAPACK's Cholesky on the rest
SIMILARITY_FLOOR = 1e-6  # an RBF kernel below this between most distinct basis vectors: a warning
CHOLESKY_WORK = 4e9  # candidates x --k^2 of --t 2 over training documents (its time), at least 2 --k candidates
CHOLESKY_CANDIDATES = 20_000  # and at most this many


@dataclass(frozen=True)
class Spec:
    """What learn -t ... asks for (checked by check())."""
    kernel: Kernel
    size: int = DEFAULT_SIZE  # --k
    method: int = SPREAD  # --t
    basis_file: str | None = None  # --f
    size_given: bool = True  # False: --k not given, and the default is capped at the training set's size

    def check(self) -> Spec:
        from svmstruct.errors import UsageError

        problem = table.problem(self.kernel)
        if problem:
            raise UsageError(problem)
        if self.size < 1:
            raise UsageError(f"--k {self.size}: the basis needs at least one vector")
        if self.method not in (SPREAD, CHOLESKY):
            raise UsageError(f"--t {self.method}: the basis is chosen evenly spaced (1) or by incomplete Cholesky (2)")
        return self

    def check_for(self, loss, normalize: str) -> Spec:
        """check(), and UsageError unless the loss scores the documents' own features, unnormalised."""
        from svmstruct.errors import UsageError

        if not loss.plain_features or normalize != "none":
            raise UsageError(f"a kernel applies to a loss scoring the documents' own features, without "
                             f"normalisation (loss {loss.name}, normalize {normalize!r})")
        return self.check()


@dataclass
class KernelMap:
    """phi(x) = L^-1 [k(b_j, x)]_j over a basis whose Gram matrix is L L'."""
    kernel: Kernel
    basis: Basis  # the kept basis vectors (double precision, feature ids)
    factor: np.ndarray  # L (m x m, lower triangular)
    dropped: int = 0  # basis vectors whose pivot vanished
    seconds: float = 0.0  # spent choosing the basis, factoring and mapping (for the log)
    similarity: float = 1.0  # median k(b_i, b_j) / sqrt(k(b_i, b_i) k(b_j, b_j)) over distinct kept pairs (advice())

    @classmethod
    def over(cls, kernel: Kernel, basis: Basis) -> KernelMap:
        """The map of this basis: Cholesky of its Gram matrix, vectors with a vanishing pivot dropped."""
        import time

        start = time.perf_counter()
        K = gram(kernel, basis, basis)
        if not np.all(np.isfinite(K)):
            raise InputError(f"the kernel's values overflow double precision on these documents (the largest finite "
                             f"one is {np.max(np.abs(K[np.isfinite(K)]), initial=0.0):.3g}): take a smaller degree -d "
                             "or scale the features")
        kept, L = _cholesky_skipping(K)
        if not kept:
            raise InputError("no basis vector has a positive kernel value k(b, b): this kernel cannot be used on "
                             "these documents")
        return cls(kernel, basis.select(kept), L, basis.size - len(kept), time.perf_counter() - start,
                   _median_similarity(K[np.ix_(kept, kept)]))

    def advice(self) -> str | None:
        """A warning when the kernel, with these parameters on these features, cannot generalise: an RBF
        kernel whose distinct basis vectors are nearly orthogonal (gamma too large for the features' scale:
        every document is near none but itself, the model memorises its basis), or a basis mostly dropped
        as dependent (a saturated sigmoid, a polynomial of huge values)."""
        if self.kernel.kind == RBF and self.size > 1 and self.similarity < SIMILARITY_FLOOR:
            distance = float(np.median(_squared_distances(self.basis)))
            return (f"the RBF kernel is below {SIMILARITY_FLOOR:g} between most pairs of basis vectors (median "
                    f"|a - b|^2 {distance:.3g}, gamma {self.kernel.gamma:g}): every document is near none but "
                    f"itself and the model cannot generalise; try -g near {1 / max(distance, 1e-300):.3g} "
                    f"(1 / the median |a - b|^2) or scale the features")
        total = self.size + self.dropped
        if self.dropped > total / 2:
            return (f"{self.dropped} of {total} basis vectors were dropped as dependent: with these parameters "
                    f"the kernel has rank about {self.size} on these documents (a saturated sigmoid or badly "
                    f"scaled features?)")
        return None

    @property
    def size(self) -> int:
        return self.basis.size

    def map(self, rows: Basis | Rows) -> np.ndarray:
        """phi(x) of every row (n x m, float32), BLOCK rows at a time (the only n x m array). From m ~ 500 on
        the triangular solve, O(m^2) a row on one core, takes most of the time: BLAS is single-threaded here
        (svmstruct/__init__.py), and blocks mapped side by side by Python threads gained 1.2x at most
        (OpenBLAS serialises concurrent calls), so they are mapped one after the other."""
        import time

        import scipy.linalg

        start = time.perf_counter()
        out = np.empty((rows.size, self.size), dtype=np.float32)
        for lo in range(0, rows.size, BLOCK):
            features = gram(self.kernel, rows.block(lo, lo + BLOCK), self.basis)
            out[lo:lo + BLOCK] = scipy.linalg.solve_triangular(self.factor, features.T, lower=True,
                                                                check_finite=False).T
        self.seconds += time.perf_counter() - start
        return out

    def expansion(self, w: np.ndarray) -> KernelExpansion:
        """The kernel expansion sum_j beta_j k(b_j, .) of a linear model w on phi: beta = L'^-1 w."""
        import scipy.linalg

        beta = scipy.linalg.solve_triangular(self.factor.T, np.asarray(w, dtype=float), lower=False)
        return KernelExpansion(self.kernel, self.basis, beta)


def _median_similarity(K: np.ndarray) -> float:
    """Median of k(b_i, b_j) / sqrt(k(b_i, b_i) k(b_j, b_j)) over i < j (1 with a single vector)."""
    m = len(K)
    if m < 2:
        return 1.0
    scale = np.sqrt(np.abs(np.diag(K)))
    i, j = np.triu_indices(m, 1)
    return float(np.median(np.abs(K[i, j]) / np.maximum(scale[i] * scale[j], 1e-300)))


def _squared_distances(basis: Basis) -> np.ndarray:
    """|b_i - b_j|^2 over i < j."""
    from svmstruct.kernels.kernel_functions import squared_norms

    dots = gram(Kernel(POLYNOMIAL, 1, 1.0, 1.0, 0.0), basis, basis)
    norms = squared_norms(basis)
    i, j = np.triu_indices(basis.size, 1)
    return np.maximum(norms[i] + norms[j] - 2 * dots[i, j], 0.0)


def _cholesky_skipping(K: np.ndarray) -> tuple:
    """(the basis vectors kept, in order; the Cholesky factor of their Gram matrix) by a Cholesky that skips
    every vector whose pivot is at most PIVOT_TOLERANCE times the largest diagonal (dependent, or a kernel
    that is not positive definite). LAPACK factors the leading vectors up to the first such pivot; that
    vector is dropped and the rest goes on from its Schur complement; after LAPACK_PASSES drops the rest is
    factored one vector at a time (many dependent vectors: each LAPACK pass would cost O(m^3))."""
    import scipy.linalg

    m = len(K)
    limit = PIVOT_TOLERANCE * max(float(np.max(np.diag(K), initial=0.0)), 0.0)
    L = np.zeros((m, m))  # L[candidate, column of a kept vector]
    kept: list = []
    rest, S = np.arange(m), np.array(K, dtype=float)  # candidates not decided; their Schur complement
    for _ in range(LAPACK_PASSES):
        if not len(rest):
            break
        F, info = scipy.linalg.lapack.dpotrf(S, lower=1, clean=1)
        valid = len(rest) if info == 0 else info - 1  # a non-positive pivot at info - 1
        small = np.flatnonzero(np.diag(F)[:valid] ** 2 <= limit)
        p = int(small[0]) if len(small) else valid  # rest[:p] kept; rest[p] (if any) dropped
        columns = slice(len(kept), len(kept) + p)
        L[rest[:p], columns] = F[:p, :p]
        kept.extend(rest[:p].tolist())
        if p == len(rest):
            rest = rest[:0]
            break
        below = scipy.linalg.solve_triangular(F[:p, :p], S[p:, :p].T, lower=True).T if p else S[p:, :0]
        L[rest[p:], columns] = below
        S = S[p + 1:, p + 1:] - below[1:] @ below[1:].T
        rest = rest[p + 1:]
    if len(rest):
        chosen, factor = _sequential_skipping(S, limit)
        L[np.ix_(rest, np.arange(len(kept), len(kept) + len(chosen)))] = factor
        kept.extend(rest[chosen].tolist())
    return kept, L[np.ix_(kept, range(len(kept)))]


def _sequential_skipping(S: np.ndarray, limit: float) -> tuple:
    """The same skipping Cholesky one vector at a time: (kept positions, factor's columns for every row)."""
    m = len(S)
    L = np.zeros((m, m))
    kept: list = []
    for j in range(m):
        row = L[j, : len(kept)]
        pivot = S[j, j] - float(row @ row)
        if not pivot > limit:
            continue
        column = len(kept)
        L[j, column] = np.sqrt(pivot)
        later = np.arange(j + 1, m)
        L[later, column] = (S[later, j] - L[later, :column] @ row) / L[j, column]
        kept.append(j)
    return kept, L[:, : len(kept)]


def select(spec: Spec, n: int, sample: Callable[[np.ndarray], Basis], read: Callable[[str], Basis]) -> Basis:
    """The basis of spec: among --f's vectors (read(path)) or the n training documents (sample(sorted
    positions) gives their vectors), evenly spaced (--t 1) or by incomplete Cholesky (--t 2)."""
    if spec.basis_file is not None:
        candidates = read(spec.basis_file)
        if spec.method == SPREAD:
            candidates = candidates.select(evenly_spaced(candidates.size, spec.size))
    else:
        if spec.size > n and spec.size_given:
            raise InputError(f"--k {spec.size} is larger than the training set ({n} documents)")
        count = min(spec.size, n) if spec.method == SPREAD else cholesky_candidates(min(spec.size, n), n)
        candidates = sample(evenly_spaced(n, count))
    if spec.method == SPREAD:
        return candidates
    return candidates.select(incomplete_cholesky(spec.kernel, candidates, min(spec.size, candidates.size)))


def evenly_spaced(n: int, count: int) -> np.ndarray:
    """svm_perf's --t 1 "random sample": positions floor(0.5 + i n / count), i = 0, 1, ... below n (all n
    when count >= n), by its running sum in double."""
    if count >= n:
        return np.arange(n)
    positions = []
    at, step = 0.5, n / count
    while at < n:
        positions.append(int(at))
        at += step
    return np.array(positions, dtype=np.int64)


def cholesky_candidates(size: int, n: int) -> int:
    """How many training documents --t 2 chooses its --k among (bounded time and memory)."""
    return min(n, max(2 * size, min(CHOLESKY_CANDIDATES, int(CHOLESKY_WORK / size**2))))


def incomplete_cholesky(kernel: Kernel, candidates: Basis, size: int) -> list:
    """Up to `size` candidates chosen by pivoted incomplete Cholesky: the one with the largest residual
    diagonal next (ties: the first), until that residual vanishes."""
    n = candidates.size
    diagonal = gram_diagonal(kernel, candidates)
    G = np.zeros((min(size, n), n))  # the factor's columns as rows (contiguous)
    limit = PIVOT_TOLERANCE * float(np.max(diagonal, initial=0.0))
    chosen: list = []
    for m in range(G.shape[0]):
        i = int(np.argmax(diagonal))
        if not diagonal[i] > limit:
            break
        column = gram(kernel, candidates, candidates.select([i]))[:, 0] - G[:m, i] @ G[:m]
        G[m] = column / np.sqrt(diagonal[i])
        diagonal -= G[m] ** 2
        diagonal[chosen + [i]] = -np.inf
        chosen.append(i)
    return chosen


def gram_diagonal(kernel: Kernel, vectors: Basis) -> np.ndarray:
    """k(x, x) of every vector (the Gram matrix's diagonal, without the matrix)."""
    from svmstruct.kernels.kernel_functions import squared_norms

    norms = squared_norms(vectors)
    return np.broadcast_to(TYPES[kernel.kind].value(norms, norms, norms, kernel), (vectors.size,)).astype(np.float64)
