"""Small inputs without numba: the numpy twins of the numba kernels give the kernels' results to the bit.

A training run on a small file never loads numba (its import and the kernels' cache cost ~0.45 s, more than
the whole run); it is the same run: each twin is checked against its kernel here on random inputs with
wide-ranging values, ties, zero coefficients and -0.0.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from svmstruct import small, sparse_kernels, sparse_ops

BITS = dict(deadline=None, database=None, max_examples=300)
VALUE = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5]),
                  st.floats(-1e30, 1e30, allow_nan=False, allow_infinity=False).map(lambda v: float(np.float32(v))))


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


@st.composite
def dense_problem(draw):
    n = draw(st.integers(1, 12))
    m = draw(st.integers(1, 11))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    X = np.array(draw(st.lists(VALUE, min_size=n * m, max_size=n * m)), dtype=dtype).reshape(n, m)
    w = np.array(draw(st.lists(VALUE, min_size=m, max_size=m)), dtype=np.float64)
    coef = np.array(draw(st.lists(VALUE, min_size=n, max_size=n)), dtype=np.float64)
    return X, w, coef


@settings(**BITS)
@given(problem=dense_problem())
def test_the_dense_products_in_numpy_are_the_kernels_to_the_bit(problem):
    X, w, coef = problem
    with np.errstate(all="ignore"):
        out = np.empty(X.shape[0])
        sparse_kernels._dense_matvec(X, w, out)
        assert bits(sparse_ops._small_dense_matvec(X, w)) == bits(out)
        out = np.zeros(X.shape[1])
        sparse_kernels._dense_rmatvec(X, coef, out)
        assert bits(sparse_ops._small_dense_rmatvec(X, coef)) == bits(out)


@pytest.mark.parametrize("n, m", [(1000, 1), (1000, 46), (20000, 46), (3000, 200)])
def test_the_numpy_transposed_product_adds_in_row_order_at_every_size(n, m):
    """At sizes where numpy could block or reorder a reduction: magnitudes 1e-8..1e16 of both signs, so that
    any other order of additions shows in the last bits."""
    rng = np.random.default_rng(n + m)
    X = (rng.normal(size=(n, m)) * 10.0 ** rng.integers(-8, 16, size=(n, m))).astype(np.float32)
    coef = rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, size=n)
    coef[rng.random(n) < 0.3] = 0.0
    out = np.zeros(m)
    sparse_kernels._dense_rmatvec(X, coef, out)
    assert bits(sparse_ops._small_dense_rmatvec(X, coef)) == bits(out)
    pairwise = np.sum(coef[:, None] * X.astype(np.float64), axis=0, dtype=np.float64)  # not the same order:
    assert m == 1 or bits(np.add.reduce(np.ascontiguousarray((coef[:, None] * X).T), axis=1)) != bits(out) \
        or bits(pairwise) != bits(out)  # the test can tell orders apart


def test_small_dense_matrices_are_multiplied_in_numpy_and_large_ones_by_the_kernels(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 46)).astype(np.float32)
    w, coef = rng.normal(size=46), rng.normal(size=300)
    in_numpy = sparse_ops.matvec(X, w), sparse_ops.rmatvec(X, coef)
    monkeypatch.setattr(small, "VALUES", 0)
    by_kernels = sparse_ops.matvec(X, w), sparse_ops.rmatvec(X, coef)
    assert bits(in_numpy[0]) == bits(by_kernels[0]) and bits(in_numpy[1]) == bits(by_kernels[1])


@st.composite
def ranking_problem(draw):
    sizes = draw(st.lists(st.integers(0, 9), min_size=1, max_size=6))
    n = sum(sizes)
    grades = draw(st.sampled_from([[0.0], [0.0, 1.0], [0.0, 1.0, 2.0, 3.5], [-1.0, 0.0, -0.0, 2.0]]))
    y = np.array(draw(st.lists(st.sampled_from(grades), min_size=n, max_size=n)), dtype=np.float64)
    # scores on a grid of 0.5 make s_i - 1 = s_j ties; wide values make the subtraction round
    score = st.one_of(st.integers(-6, 6).map(lambda k: k / 2), st.floats(-1e17, 1e17, allow_nan=False))
    s = np.array(draw(st.lists(score, min_size=n, max_size=n)), dtype=np.float64)
    qptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return y, s, qptr


@settings(**BITS)
@given(problem=ranking_problem(), per_query_average=st.booleans(), padded=st.sampled_from([1, 50, 1 << 22]),
       by_level=st.booleans())
def test_the_pairs_oracle_in_numpy_is_the_kernels_to_the_bit(problem, per_query_average, padded, by_level):
    from svmstruct.losses import rank_numpy, rank_oracles

    y, s, qptr = problem
    labels = rank_oracles.query_label_ranks(y, qptr)
    twin = rank_numpy.query_label_ranks(y, qptr)
    for a, b in zip(labels, twin):
        assert a.tolist() == b.tolist()
    dcoef, delta = rank_oracles.pairs_most_violated(s, qptr, *labels, per_query_average)
    # level by level, or all pairs in batches of one query, a few, all
    kept = rank_numpy.PADDED, rank_numpy.LEVELS
    rank_numpy.PADDED, rank_numpy.LEVELS = padded, 16 if by_level else 0
    try:
        dcoef_twin, delta_twin = rank_numpy.PairsOracle(qptr, *labels, per_query_average)(s)
    finally:
        rank_numpy.PADDED, rank_numpy.LEVELS = kept
    assert bits(dcoef_twin) == bits(dcoef) and bits(np.array(delta_twin)) == bits(np.array(delta))


@settings(**BITS)
@given(problem=ranking_problem(), one_example=st.booleans())
def test_the_error_rate_oracle_in_numpy_is_the_kernels_to_the_bit(problem, one_example):
    from svmstruct.losses import perf_codes, perf_numpy, perf_oracles

    y, s, qptr = problem
    assume(np.all(np.diff(qptr) > 0))  # examples are never empty (the kernel divides by their size)
    y = np.where(y > 0, 1.0, -1.0)
    if one_example:
        qptr = np.array([0, len(y)], dtype=np.int64)
    want = perf_oracles.examples_most_violated(y, s, qptr, perf_codes.ERRORRATE, 0, 0.0, 1.0)
    got = perf_numpy.errorrate_examples(y, s, qptr)
    assert bits(got[0]) == bits(want[0]) and bits(got[1]) == bits(want[1])
    assert got[2].tolist() == want[2].tolist()


@settings(**BITS)
@given(problem=ranking_problem())
def test_the_map_oracle_in_numpy_is_the_kernels_to_the_bit(problem):
    """SVM-map's oracle (map_numpy, a query at a time) against map_oracles: the same dcoef and Delta bit for bit,
    ties in score (the grid of 0.5), queries with one class only, empty queries."""
    from svmstruct.losses import map_numpy, map_oracles

    y, s, qptr = problem
    relevant = np.where(y > 0, 1.0, -1.0)
    want = map_oracles.map_most_violated(relevant, s, qptr)
    got = map_numpy.map_most_violated(relevant, s, qptr)
    assert bits(got[0]) == bits(want[0]) and bits(np.array(got[1])) == bits(np.array(want[1]))


# ---- the reader: quick.read_dataset against the parsing kernels (data._read)

NUMBER = st.one_of(st.sampled_from(["0", "-0", "-0.0", "1", ".5", "1e-3", "2.5E+2", "+3", "1e-50", "3.4e38"]),
                   st.floats(-1e6, 1e6, allow_nan=False).map(repr),
                   st.integers(-10**6, 10**6).map(str))


@st.composite
def plain_file(draw):
    with_qid = draw(st.booleans())
    lines = []
    qid = 0
    for _ in range(draw(st.integers(1, 12))):
        if draw(st.integers(0, 6)) == 0:
            lines.append(draw(st.sampled_from(["", "# a comment line", "  "])))
            continue
        if with_qid and draw(st.booleans()):
            qid += 1
        dense = draw(st.sampled_from([0, 5, 8]))  # features per line at least: sparse files go to the full reader
        indices = sorted(draw(st.sets(st.integers(1, 8), min_size=dense, max_size=8)))
        tokens = [draw(st.sampled_from(["0", "1", "2", "-1", "0.5"]))] + ([f"qid:{qid + 1}"] if with_qid else [])
        disorder = draw(st.sampled_from(["", "", "", "", "swap", "repeat", "zero"]))  # the full reader's errors
        if disorder == "swap" and len(indices) > 1:
            indices[0], indices[1] = indices[1], indices[0]
        elif disorder == "repeat" and indices:
            indices.append(indices[-1])
        elif disorder == "zero":
            indices.insert(0, 0)
        tokens += [f"{j}:{draw(NUMBER)}" for j in indices]
        comment = draw(st.sampled_from(["", " # docid = D{}", " #d{}", "#"])).format(len(lines))
        lines.append(" ".join(tokens) + comment)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    return eol.join(lines) + (eol if draw(st.booleans()) else "")


@settings(**BITS)
@given(text=plain_file(), dtype=st.sampled_from([np.float32, np.float64]), layout=st.sampled_from(["auto", "dense"]),
       n_features=st.sampled_from([None, 3, 12]))
def test_the_small_reader_gives_the_kernels_dataset(tmp_path_factory, text, dtype, layout, n_features):
    from svmstruct import data, quick
    from svmstruct.errors import InputError

    path = tmp_path_factory.mktemp("small") / "f.txt"
    path.write_text(text)
    small = quick.read_dataset(str(path), n_features, dtype, layout)
    try:
        full = data._read(str(path), n_features, dtype, layout)
    except InputError:
        assert small is None  # the full reader reports it
        return
    if small is None:  # left to the full reader (sparse data, values beyond single precision, ...)
        return
    assert isinstance(full.X, np.ndarray) and full.X.dtype == small.X.dtype and full.X.shape == small.X.shape
    assert full.X.tobytes() == small.X.tobytes()
    for name in ("y", "qid", "qptr", "line"):
        assert getattr(full, name).tobytes() == getattr(small, name).tobytes(), name
    assert list(full.docids) == list(small.docids)
    assert (full.path, full.has_qid, full.columns) == (small.path, small.has_qid, small.columns)


# ---- whole runs: a small file trains without numba, scipy or osqp, to the same model bytes

SMALL_TRAIN = Path(__file__).resolve().parents[1] / "data" / "mq2008-small" / "train.txt"
LOADED = ("import sys; from svmstruct import cli; {call}; "
          "print(sorted(m for m in ('numba', 'scipy', 'osqp') if m in sys.modules))")


def _few_queries(folder: Path) -> Path:
    """The first small.MAP_QUERIES queries of SMALL_TRAIN (SVM-map's numpy oracle takes them)."""
    lines, qids = [], []
    for line in SMALL_TRAIN.read_text().splitlines():
        qid = line.split()[1]
        if qid not in qids:
            if len(qids) == small.MAP_QUERIES:
                break
            qids.append(qid)
        lines.append(line)
    path = folder / "few.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("loss", ["pairs", "pairs-avg", "errorrate", "map"])
def test_a_small_file_trains_without_numba_scipy_or_osqp(tmp_path, loss):
    model = tmp_path / "m.model"
    train = _few_queries(tmp_path) if loss == "map" else SMALL_TRAIN
    call = f"cli.main(['learn', '-l', '{loss}', '-c', '1', '-v', '0', {str(train)!r}, {str(model)!r}])"
    done = subprocess.run([sys.executable, "-c", LOADED.format(call=call)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]" and model.exists()


@pytest.mark.parametrize("loss", ["pairs", "pairs-avg", "errorrate", "map"])
def test_the_numpy_path_trains_the_numba_paths_model(tmp_path, loss):
    from conftest import invoke

    train = _few_queries(tmp_path) if loss == "map" else SMALL_TRAIN
    args = ["learn", "-l", loss, "-c", "3", "-e", "0.01", str(train)]
    assert invoke(*args, str(tmp_path / "small.model")).returncode == 0
    with small.numba_paths():
        assert invoke(*args, str(tmp_path / "full.model")).returncode == 0
    assert (tmp_path / "small.model").read_bytes() == (tmp_path / "full.model").read_bytes()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(min_size=0, max_size=80), min_size=1, max_size=40))
def test_docid_hashes_in_numpy_are_the_kernels(names):
    """documents.Docids.hashes (numpy, FNV-1a byte position by byte position) and eval_kernels.fnv_hashes (numba,
    docid by docid): the same 64-bit hashes, also of docids longer than the 64 bytes hashed and of empty ones."""
    from svmstruct.documents import Docids

    docids = Docids()
    docids.extend(names)
    docids.freeze()
    in_numpy = docids.hashes()
    with small.numba_paths():
        np.testing.assert_array_equal(docids.hashes(), in_numpy)
