"""`learn --normalize`: LETOR's QueryLevelNorm (applied again by classify) and max-|x| scaling (folded
into the weights), checked against loops written from their definitions."""
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from svmstruct import api, model
from svmstruct.dataset import arrays, normalize
from svmstruct.io import data

from conftest import invoke

SMALL = Path(__file__).resolve().parents[1] / "data" / "mq2008-small"


def _dataset(X, qid):
    d = arrays.from_arrays(X, np.arange(X.shape[0]) % 3, qid)
    return d


@pytest.mark.parametrize("layout", ["sparse", "dense", "wide"])
def test_query_level_is_min_max_within_each_query(layout):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 5)) * (rng.random((12, 5)) < 0.6)  # absent features count as 0
    X[:4, 2] = 7.0  # constant in query 1: becomes 0
    if layout == "wide":
        X = np.hstack([X, np.zeros((12, 5000))])
        X[3, 4000] = 2.0
    qid = np.repeat([1, 2, 3], 4)
    d = _dataset(sp.csr_matrix(X) if layout != "dense" else X, qid)
    if layout == "dense":
        d.X = np.asarray(X)
    out = normalize.query_level(d).X
    out = out if isinstance(out, np.ndarray) else out.toarray()
    expected = np.zeros_like(X)
    for q in (1, 2, 3):
        rows = qid == q
        for j in range(X.shape[1]):
            column = X[rows, j]
            low, high = column.min(), column.max()
            expected[rows, j] = (column - low) / (high - low) if high > low else 0.0
    assert np.allclose(out, expected, rtol=0, atol=1e-15)


def test_sparse_data_is_normalised_sparse_to_the_bit_of_the_dense_path():
    """Random blocks, signs, constant columns and query cuts: the sparse path gives the dense path's numbers."""
    rng = np.random.default_rng(1)
    for trial in range(300):
        n, d = int(rng.integers(1, 12)), int(rng.integers(1, 6))
        X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5)
        X = np.abs(X) if trial % 3 == 0 else X
        X[:, 0] = 3.0 if trial % 5 == 0 else X[:, 0]
        qid = np.sort(rng.integers(1, 4, n))
        given = _dataset(sp.csr_matrix(X.astype(np.float32)), qid)
        sparse = normalize.query_level(given).X
        dense = _dataset(sp.csr_matrix(X.astype(np.float32)), qid)
        dense.X = given.X.toarray()
        assert sp.issparse(sparse) and np.array_equal(sparse.toarray(), normalize.query_level(dense).X), trial


def test_sparse_text_without_queries_stays_sparse():
    """TF-IDF-like data without qid (one query: the whole file), 20,000 x 20,000 at 0.1 %: non-negative features
    keep their zeros, and normalising takes memory of the order of the stored entries, not of the dense matrix
    (3.2 GB in float64)."""
    import tracemalloc

    rng = np.random.default_rng(2)
    nnz = 400_000
    X = sp.csr_matrix((rng.random(nnz, dtype=np.float32) + 0.1, (rng.integers(0, 20_000, nnz),
                                                                 rng.integers(0, 20_000, nnz))), shape=(20_000, 20_000))
    X.sum_duplicates()
    d = arrays.from_arrays(X, rng.integers(0, 2, 20_000))
    tracemalloc.start()
    out = normalize.query_level(d).X
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sp.issparse(out) and out.nnz == X.nnz and peak < 100 * X.nnz * 8, peak
    column = X[:, 7].toarray().ravel()
    assert np.allclose(out[:, 7].toarray().ravel(), column / column.max())


def test_global_scale_is_folded_into_the_weights():
    """A model trained with global normalisation scores raw features exactly as the model trained on the
    scaled features scores scaled ones."""
    train_set = data.read_svmlight(str(SMALL / "train.txt"))
    test_set = data.read_svmlight(str(SMALL / "test.txt"), n_features=train_set.n_features)
    scale = normalize.global_scale(train_set)
    assert np.all(scale > 0) and np.isclose(scale.max(), abs(train_set.X).max())
    folded = api.fit(train_set, "pairs", C=10, normalize="global")
    direct = api.fit(normalize.scaled(train_set, scale), "pairs", C=10)
    assert folded.header["normalize"] == "global"
    assert np.allclose(model.score(folded, test_set), model.score(direct, normalize.scaled(test_set, scale)),
                       rtol=1e-12, atol=1e-12)


def _distorted(dataset, seed):
    """Every query's features mapped by x -> a_q x + b_q (a_q > 0, per query and feature): what
    QueryLevelNorm undoes (MQ2008 is already query-normalised, so normalising it changes nothing)."""
    rng = np.random.default_rng(seed)
    X = dataset.X.toarray()
    for lo, hi in zip(dataset.qptr[:-1], dataset.qptr[1:]):
        X[lo:hi] = X[lo:hi] * rng.uniform(0.5, 1000.0, X.shape[1]) + rng.uniform(-50.0, 50.0, X.shape[1])
    d = arrays.from_arrays(sp.csr_matrix(X), dataset.y, dataset.qid)
    return d


def test_query_normalisation_undoes_per_query_scaling_and_classify_applies_it(tmp_path):
    """Trained with --normalize query on per-query distorted data, the model is the one trained on the
    original (normalised) data, and scoring distorted test queries gives the original scores."""
    train_set = data.read_svmlight(str(SMALL / "train.txt"))
    test_set = data.read_svmlight(str(SMALL / "test.txt"), n_features=train_set.n_features)
    reference = api.fit(train_set, "pairs", C=10)
    normalised = api.fit(_distorted(train_set, 1), "pairs", C=10, normalize="query")
    assert normalised.header["normalize"] == "query"
    # the same problem up to round-off: both within their certified gaps of one optimum, and the objective
    # is 1-strongly convex, so |w - w*| <= sqrt(2 gap) for each
    distance = sum(np.sqrt(2 * (m.result.primal - m.result.dual)) for m in (normalised, reference))
    assert np.linalg.norm(normalised.w - reference.w) <= distance
    assert np.linalg.norm(normalised.w - reference.w) < 1e-4  # and much closer in fact
    assert np.allclose(model.score(normalised, _distorted(test_set, 2)), model.score(reference, test_set), atol=1e-4)
    path = tmp_path / "q.model"  # the CLI writes the transform into the model and classify applies it
    run = invoke("learn", "-l", "pairs", "-c", "10", "-v", "0", "--normalize", "query", SMALL / "train.txt", path)
    assert run.returncode == 0, run.stderr
    assert model.load_model(str(path)).header["normalize"] == "query"
    scored = invoke("classify", SMALL / "test.txt", path)
    assert np.allclose(np.array(scored.stdout.split(), dtype=float), model.score(reference, test_set), atol=1e-4)


def test_normalize_is_checked_before_the_data_is_read():
    assert invoke("learn", "--normalize", "minmax", "missing.txt", "-").returncode == 2
    run = invoke("learn", "-l", "div", "--subtopics", "x.qrels", "--normalize", "query", "missing.txt", "-")
    assert run.returncode == 2 and "normalize" in run.stderr


def test_query_normalisation_cannot_be_written_for_the_originals():
    run = invoke("learn", "--normalize", "query", "--format", "svmlight", SMALL / "train.txt", "-")
    assert run.returncode == 2 and "normalize" in run.stderr
