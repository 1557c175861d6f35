"""Adding a kernel is adding a row to svmstruct.kernels.table: with a toy kernel registered here (the cosine of
the angle between two documents, a kernel svm_light lacks), `learn -t` trains with it, its help lists it, model
files keep it, classify scores with it, and the estimators take it by name; svm_light's model format refuses it."""
import numpy as np
import pytest

from svmstruct import SVMRank, model
from svmstruct.io import data
from svmstruct.kernels import table

from conftest import ROOT, invoke_here

TRAIN = ROOT / "data" / "mq2008-small" / "train.txt"
COSINE = table.KernelType(5, "cosine", "a.b / (|a| |b|)", (),
                          lambda dot, na, nb, k: dot / np.sqrt(np.maximum(na * nb, 1e-300)),
                          svm_light=False)


@pytest.fixture
def cosine_registered(monkeypatch):
    monkeypatch.setitem(table.TYPES, COSINE.code, COSINE)


def cosine(X, Y):
    """The toy kernel written directly: cos(x, y) for every pair of rows."""
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    return (X @ Y.T) / np.outer(np.linalg.norm(X, axis=1), np.linalg.norm(Y, axis=1))


def test_learn_and_classify_train_and_score_with_a_kernel_added_to_the_table(cosine_registered, tmp_path):
    m, scores = tmp_path / "cosine.model", tmp_path / "scores"
    run = invoke_here("learn", "-l", "map", "-t", "5", "--k", "40", "-c", "10", "-v", "0", TRAIN, m)
    assert run.returncode == 0, run.stderr
    trained = model.load_model(str(m))
    assert trained.kernel.kernel.kind == 5 and "kernel cosine" in m.read_text().splitlines()
    run = invoke_here("classify", TRAIN, m, scores)
    assert run.returncode == 0, run.stderr
    dataset = data.read_svmlight(str(TRAIN), dtype=np.float64)
    # the model's scores are its expansion over the basis, with the kernel written out by hand
    basis = trained.kernel.basis
    B = np.zeros((basis.size, dataset.n_features))
    for j in range(basis.size):
        B[j, basis.indices[basis.indptr[j]:basis.indptr[j + 1]]] = basis.values[basis.indptr[j]:basis.indptr[j + 1]]
    by_hand = cosine(dataset.X.toarray() if hasattr(dataset.X, "toarray") else dataset.X, B) @ trained.kernel.coef \
        - trained.threshold
    np.testing.assert_allclose(np.loadtxt(scores), by_hand, rtol=1e-6, atol=1e-6)
    run = invoke_here("learn", "--help")
    assert "5 cosine a.b / (|a| |b|)" in " ".join(run.stdout.split())


def test_svm_light_model_files_refuse_a_kernel_svm_light_lacks(cosine_registered, tmp_path):
    run = invoke_here("learn", "-l", "map", "-t", "5", "--k", "10", "-v", "0", "--format", "svmlight",
                                 TRAIN, tmp_path / "m")
    assert run.returncode == 2 and "svm_light has no cosine kernel" in run.stderr and not (tmp_path / "m").exists()


def test_the_estimators_take_a_kernel_added_to_the_table_by_name(cosine_registered, tmp_path):
    dataset = data.read_svmlight(str(TRAIN), dtype=np.float64)
    ranker = SVMRank(loss="map", C=10.0, kernel="cosine", n_basis=40).fit(dataset.X, dataset.y, qid=dataset.qid)
    assert ranker.model_.kernel.kernel.kind == 5
    ranker.save(str(tmp_path / "m"))
    back = SVMRank.load(str(tmp_path / "m"))
    assert back.kernel == "cosine"
    np.testing.assert_array_equal(back.predict(dataset.X), ranker.predict(dataset.X))


def test_without_the_row_the_kernel_is_unknown(tmp_path):
    run = invoke_here("learn", "-l", "map", "-t", "5", "-v", "0", TRAIN, tmp_path / "m")
    assert run.returncode == 2 and "-t 5: the kernel is 0 (linear), 1 polynomial" in run.stderr
