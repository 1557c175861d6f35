"""learn -t: the kernels against their definitions, the Nystroem map (svmstruct.kernels.nystroem) against the
Gram matrix it factors, kernel models' files, and the command line's handling of kernels and bad input."""

import numpy as np
import pytest
import scipy.sparse as sp

from svmstruct import api, model
from svmstruct.errors import InputError, UsageError
from svmstruct.io import data
from svmstruct.kernels import kernel_functions, nystroem
from svmstruct.kernels.kernel_functions import Basis, KernelExpansion, Rows, gram
from svmstruct.kernels.table import Kernel

from conftest import ROOT, invoke

SMALL = ROOT / "data" / "mq2008-small"
KERNELS = [Kernel(1, 2, 1.0, 0.5, 1.0), Kernel(1, 3, 1.0, 2.0, 0.0), Kernel(2, 3, 0.7, 1.0, 1.0),
           Kernel(3, 3, 1.0, 0.3, -0.2)]


def by_definition(kernel: Kernel, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """k(a, b) for every pair of rows, straight from svm_light's definitions (dense loops)."""
    out = np.empty((len(A), len(B)))
    for i, a in enumerate(A):
        for j, b in enumerate(B):
            if kernel.kind == 1:
                out[i, j] = (kernel.coef_lin * (a @ b) + kernel.coef_const) ** kernel.degree
            elif kernel.kind == 2:
                out[i, j] = np.exp(-kernel.gamma * ((a - b) @ (a - b)))
            else:
                out[i, j] = np.tanh(kernel.coef_lin * (a @ b) + kernel.coef_const)
    return out


def random_rows(rng, n, d, fill):
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < fill)
    X[0] = 0.0  # an empty vector
    return X


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("fill", [1.0, 0.05])  # dense (BLAS) and sparse products
def test_gram_matrix_equals_the_kernels_definition(kernel, fill):
    rng = np.random.default_rng(3)
    A, B = random_rows(rng, 40, 30, fill), random_rows(rng, 9, 30, fill)
    B[:, 25:] = 0.0  # features only the rows use count in the RBF distance
    got = gram(kernel, Basis.of(A), Basis.of(B))
    np.testing.assert_allclose(got, by_definition(kernel, A, B), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fill", [1.0, 0.05])
def test_rows_taken_block_by_block_are_the_whole(fill):
    """The map and the expansion's scores convert BLOCK rows at a time (kernels.Rows): the same as at once."""
    rng = np.random.default_rng(5)
    X = random_rows(rng, kernel_functions.BLOCK + 37, 12, fill)
    whole = Basis.of(X)
    kernel = Kernel(2, 3, 0.4, 1.0, 1.0)
    rows = Rows.of(sp.csr_matrix(X) if fill < 1 else X)
    mapping = nystroem.KernelMap.over(kernel, rows.select([9, 3, 4000, 4100]))
    np.testing.assert_array_equal(mapping.map(rows), mapping.map(whole))
    expansion = KernelExpansion(kernel, Basis.of(X[[9, 3, 4100]]), np.array([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(expansion.scores(X), by_definition(kernel, X, X[[9, 3, 4100]]) @ expansion.coef,
                               rtol=1e-12, atol=1e-12)


def test_rows_of_a_file_with_compact_columns_keep_their_feature_ids(tmp_path):
    """A file with huge (hashed) feature ids is stored over the columns it uses; its vectors are mapped back."""
    path = tmp_path / "hashed.txt"
    path.write_text("1 5:1 2000000000:2\n-1 5:0.5 1999999999:1\n")
    d = data.read_svmlight(str(path))
    assert d.columns is not None
    rows = Basis.of_dataset(d)
    assert rows.indices.tolist() == [4, 1999999999, 4, 1999999998]
    np.testing.assert_allclose(gram(Kernel(1, 1, 1.0, 1.0, 0.0), rows, rows), [[5.0, 0.5], [0.5, 1.25]])


@pytest.mark.parametrize("kernel", KERNELS[:3])
def test_the_map_reproduces_the_kernel_on_the_basis_and_its_expansion_scores_w_dot_phi(kernel):
    """phi(b_i).phi(b_j) = k(b_i, b_j) on the basis; a model w on phi scores every x as its expansion
    sum_j beta_j k(b_j, x) with |beta|_K = |w|."""
    rng = np.random.default_rng(5)
    A = rng.normal(size=(60, 6)) * 0.5
    mapping = nystroem.KernelMap.over(kernel, Basis.of(A[:8]))
    phi = mapping.map(Basis.of(A)).astype(np.float64)
    keep = mapping.size
    K = gram(kernel, mapping.basis, mapping.basis)
    np.testing.assert_allclose(mapping.map(mapping.basis) @ mapping.map(mapping.basis).T, K, atol=1e-5)
    w = rng.normal(size=keep)
    expansion = mapping.expansion(w)
    np.testing.assert_allclose(expansion.scores(A), phi @ w, rtol=1e-5, atol=1e-5)
    assert expansion.coef @ K @ expansion.coef == pytest.approx(w @ w, rel=1e-8)


def test_dependent_basis_vectors_are_dropped():
    """Copies and, for the linear-like polynomial of degree 1, linear combinations add nothing: dropped."""
    A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [2.0, 3.0]])
    mapping = nystroem.KernelMap.over(Kernel(1, 1, 1.0, 1.0, 0.0), Basis.of(A))
    assert (mapping.size, mapping.dropped) == (2, 2)
    rbf = nystroem.KernelMap.over(Kernel(2, 3, 1.0, 1.0, 1.0), Basis.of(A))
    assert (rbf.size, rbf.dropped) == (3, 1)  # only the copy


def test_incomplete_cholesky_picks_the_largest_residual_and_stops_when_it_vanishes():
    """Pivots by the definition: first the largest k(x, x), then the largest k(x, x) - |phi(x)|^2 over the
    basis so far; among copies of three distinct vectors it stops after three."""
    rng = np.random.default_rng(2)
    distinct = rng.normal(size=(3, 4))
    A = distinct[[0, 1, 2, 1, 0, 2, 2]]
    kernel = Kernel(1, 1, 1.0, 1.0, 0.0)  # linear: residuals are squared distances to the span
    chosen = nystroem.incomplete_cholesky(kernel, Basis.of(A), 6)
    assert len(chosen) == 3 and sorted({tuple(A[i]) for i in chosen}) == sorted(map(tuple, distinct))
    norms = (A ** 2).sum(1)
    assert chosen[0] == int(np.argmax(norms))
    P = A[chosen[:1]].T  # residual of every row after projecting on the first pivot
    residual = norms - ((A @ P) ** 2).sum(1) / (P ** 2).sum()
    residual[chosen[0]] = -np.inf
    assert np.isclose(residual[chosen[1]], residual.max())


def test_select_takes_every_n_over_k_th_document_or_a_small_basis_file_whole():
    """--t 1 is svm_perf's choice: positions floor(0.5 + i n/k) (0, 3, 5, 8 of ten for k = 4)."""
    rows = Basis.of(np.arange(20.0).reshape(10, 2) + 1)
    chosen = nystroem.select(nystroem.Spec(Kernel(), size=4), rows.size, rows.select, None)
    assert chosen.values.reshape(4, 2)[:, 0].tolist() == [1.0, 7.0, 11.0, 17.0]
    assert nystroem.evenly_spaced(2933, 100)[:4].tolist() == [0, 29, 59, 88]
    with pytest.raises(InputError, match="--k 11 is larger than the training set"):
        nystroem.select(nystroem.Spec(Kernel(), size=11), rows.size, rows.select, None)
    small = nystroem.Spec(Kernel(), size=11, basis_file="f")
    assert nystroem.select(small, rows.size, rows.select, lambda path: rows).size == 10


@pytest.mark.parametrize("spec, message", [
    (nystroem.Spec(Kernel(kind=4)), "user-defined"), (nystroem.Spec(Kernel(kind=5)), "0 \\(linear\\)"),
    (nystroem.Spec(Kernel(kind=2, gamma=0.0)), "gamma > 0"), (nystroem.Spec(Kernel(kind=2, gamma=-1.0)), "gamma"),
    (nystroem.Spec(Kernel(kind=1, degree=0)), "degree of at least 1"), (nystroem.Spec(Kernel(), size=0), "--k 0"),
    (nystroem.Spec(Kernel(), method=3), "--t 3")])
def test_bad_kernel_specs_are_usage_errors(spec, message):
    with pytest.raises(UsageError, match=message):
        spec.check()


def trained_kernel_model(loss="errorrate", **options):
    d = data.read_svmlight(str(SMALL / "train.txt"))
    spec = nystroem.Spec(Kernel(2, 3, 0.5, 1.0, 1.0), size=40)
    return api.fit(d, loss=loss, C=10, kernel=spec, **options), d


def test_a_kernel_model_round_trips_exactly_and_exports_for_svm_perf_classify(tmp_path):
    trained, d = trained_kernel_model()
    assert trained.kernel.size == 40 and trained.threshold != 0.0  # a bias by default (svm_perf's --b 1)
    path = tmp_path / "m"
    trained.save(str(path))
    again = model.load_model(str(path))
    assert again.kernel.kernel == trained.kernel.kernel
    assert np.array_equal(again.kernel.coef, trained.kernel.coef)
    assert np.array_equal(model.score(again, d), model.score(trained, d))
    assert model.format_model(again) == path.read_text()
    light = tmp_path / "light"
    trained.save(str(light), "svmlight")
    text = light.read_text().splitlines()
    assert text[1].startswith("2 # kernel type") and text[9].startswith("41 # number of support vectors")
    exported = model.load_model(str(light))  # read as svm_perf_classify reads it: feature values as float
    np.testing.assert_allclose(model.score(exported, d), model.score(trained, d), atol=1e-5)


def test_trained_scores_are_the_mapped_linear_scores():
    """What the trainer optimised (w.phi(x) - b) is what the written expansion scores."""
    trained, d = trained_kernel_model("rocarea")
    spec = nystroem.Spec(Kernel(2, 3, 0.5, 1.0, 1.0), size=40)
    rows = Basis.of_dataset(d)
    mapping = nystroem.KernelMap.over(spec.kernel, nystroem.select(spec, rows.size, rows.select, None))
    phi = mapping.map(rows).astype(np.float64)
    w = trained.result.w[:-1]  # the weights the trainer found for the mapped features (the bias last)
    np.testing.assert_allclose(mapping.factor.T @ trained.kernel.coef, w, atol=1e-9)  # beta = L'^-1 w
    np.testing.assert_allclose(model.score(trained, d), phi @ w - trained.threshold, atol=1e-5)


@pytest.mark.parametrize("broken, message", [
    (("kernel rbf", "kernel rbff"), "unknown kernel 'rbff'"),
    (("kernel.gamma 0.5\n", ""), "lacks 'kernel.gamma'"),
    (("kernel.gamma 0.5", "kernel.gamma x"), "expected a number"),
    (("kernel.degree 3", "kernel.degree 0"), "outside"),
    (("basis 40", "basis 41"), "expected 41 basis lines"),
    (("kernel rbf\n", ""), "needs both a 'kernel' line and 'basis'"),
])
def test_a_damaged_kernel_model_is_one_clear_error(tmp_path, broken, message):
    trained, _ = trained_kernel_model()
    text = model.format_model(trained)
    assert broken[0] in text
    path = tmp_path / "m"
    path.write_text(text.replace(broken[0], broken[1], 1))
    with pytest.raises(InputError, match=message):
        model.load_model(str(path))


def test_basis_lines_need_increasing_indices(tmp_path):
    trained, _ = trained_kernel_model()
    lines = model.format_model(trained).splitlines()
    at = lines.index("basis 40") + 1
    coef, *features = lines[at].split()
    lines[at] = " ".join([coef, *reversed(features)])
    path = tmp_path / "m"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=f"m:{at + 1}: feature index .* is not above"):
        model.load_model(str(path))


@pytest.mark.parametrize("loss", ["pairs", "map", "ndcg@10", "f1", "rocarea"])
def test_learn_t_trains_every_family_and_classify_scores_the_model(tmp_path, loss):
    out, pred = tmp_path / "m", tmp_path / "p"
    result = invoke("learn", "-v", "0", "-l", loss, "-c", "10", "-t", "2", "-g", "0.5", "--k", "30",
                    SMALL / "train.txt", out)
    assert result.returncode == 0, result.stderr
    assert "kernel rbf" in out.read_text()
    assert invoke("classify", SMALL / "test.txt", out, pred).returncode == 0
    assert len(pred.read_text().splitlines()) == data.read_svmlight(str(SMALL / "test.txt")).n_docs


def test_incomplete_cholesky_basis_and_validation_grid(tmp_path):
    out = tmp_path / "m"
    result = invoke("learn", "-v", "1", "-l", "map", "-c", "1,10", "--validate", SMALL / "vali.txt", "-t", "2",
                    "--t", "2", "--k", "25", SMALL / "train.txt", out)
    assert result.returncode == 0, result.stderr
    trained = model.load_model(str(out))
    assert trained.kernel.size == 25 and trained.header["selected_by"] == "map"


@pytest.mark.parametrize("args, message", [
    (["-t", "4"], "user-defined kernels"),
    (["-t", "2", "-g", "0"], "gamma > 0"),
    (["-t", "2", "-g", "-1"], "gamma > 0"),
    (["-t", "1", "-d", "0"], "degree of at least 1"),
    (["-t", "2", "--k", "100000"], "--k 100000 is larger than the training set"),
    (["-g", "2"], "-g applies to a kernel"),
    (["--k", "20"], "--k applies to a kernel"),
    (["-t", "2", "--normalize", "query"], "--normalize applies to linear models"),
    (["-t", "2", "--t", "3"], "--t 3"),
])
def test_bad_kernel_options_are_one_line_and_no_model(tmp_path, args, message):
    out = tmp_path / "m"
    result = invoke("learn", "-v", "0", *args, SMALL / "train.txt", out)
    assert result.returncode != 0 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not out.exists()


def test_a_basis_file_that_does_not_parse_is_one_line_and_no_model(tmp_path):
    basis, out = tmp_path / "basis.svm", tmp_path / "m"
    basis.write_text("0 1:0.5 2:0.25\n0 1:x\n")
    result = invoke("learn", "-v", "0", "-t", "2", "--f", basis, SMALL / "train.txt", out)
    assert result.returncode == 1 and f"{basis}:2:" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()


def test_a_div_loss_takes_no_kernel(tmp_path):
    with pytest.raises(UsageError, match="builds its own features"):
        from svmstruct import config, registry

        config.Run(kernel_type=2)._kernel_spec(registry.lookup("div")[0])


def test_resuming_with_another_kernel_is_refused(tmp_path):
    check, out = tmp_path / "ck", tmp_path / "m"
    first = invoke("learn", "-v", "0", "-#", "2", "-t", "2", "--k", "20", "--checkpoint", check,
                   SMALL / "train.txt", out)
    assert first.returncode == 0 and check.exists(), first.stderr
    other = invoke("learn", "-v", "0", "-t", "2", "-g", "2", "--k", "20", "--checkpoint", check, "--resume",
                   SMALL / "train.txt", out)
    assert other.returncode != 0 and "kernel" in other.stderr, other.stderr
    same = invoke("learn", "-v", "0", "-t", "2", "--k", "20", "--checkpoint", check, "--resume",
                  SMALL / "train.txt", out)
    assert same.returncode == 0, same.stderr


def test_estimators_take_scikit_learn_kernel_parameters():
    from sklearn.base import clone

    from svmstruct import SVMPerf, SVMRank

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.where((X ** 2).sum(1) < 1.0, 1, -1)  # a disc: no linear separator
    linear = SVMPerf(C=100).fit(X, y)
    rbf = SVMPerf(C=100, kernel="rbf", gamma=1.0, n_basis=50).fit(X, y)
    assert rbf.score(X, y) > linear.score(X, y) + 0.2
    assert clone(rbf).get_params()["kernel"] == "rbf" and not hasattr(rbf, "coef_")
    assert rbf.dual_coef_.shape == (50,) and sp.issparse(rbf.basis_vectors_)
    ranker = SVMRank(loss="map", kernel="poly", degree=2, gamma=1.0, coef0=1.0, n_basis=1000).fit(
        X, np.where(y > 0, 1, 0), qid=np.repeat(np.arange(10), 30))
    assert ranker.model_.kernel.size <= 6  # (a.b + 1)^2 on two features spans six dimensions
    with pytest.raises(ValueError, match="kernel must be one of"):
        SVMPerf(kernel="laplacian").fit(X, y)


@pytest.mark.parametrize("passes", [0, 2, 16])
@pytest.mark.parametrize("kernel", KERNELS)
def test_skipping_cholesky_restarted_in_lapack_is_the_one_vector_at_a_time_one(kernel, passes, monkeypatch):
    """Duplicated, dependent and (sigmoid) indefinite basis vectors: LAPACK restarted after each dropped
    vector (then one vector at a time after `passes` drops) keeps the same vectors as the plain loop."""
    monkeypatch.setattr(nystroem, "LAPACK_PASSES", passes)
    rng = np.random.default_rng(11)
    A = random_rows(rng, 60, 6, 0.6)
    A[[7, 19, 33]] = A[[2, 2, 5]]  # duplicates
    A[40] = A[3] + A[4]  # a sum of two others
    K = gram(kernel, Basis.of(A), Basis.of(A))
    limit = nystroem.PIVOT_TOLERANCE * max(float(np.max(np.diag(K))), 0.0)
    expected, _ = nystroem._sequential_skipping(K, limit)
    kept, L = nystroem._cholesky_skipping(K)
    assert kept == expected and len(kept) < 60
    np.testing.assert_allclose(L @ L.T, K[np.ix_(kept, kept)], atol=1e-9 * np.max(np.abs(K)))
    assert np.all(np.triu(L, 1) == 0)


def test_a_kernel_that_cannot_generalise_is_named_with_what_to_try(tmp_path):
    """RBF on raw features of scale 1000 (gamma 1 sees every pair of documents as unrelated) and a
    saturated sigmoid each get a warning; a reasonable RBF none."""
    raw = tmp_path / "raw.txt"
    with open(SMALL / "train.txt") as f, open(raw, "w") as out:
        for line in f:
            head, _, comment = line.partition("#")
            target, qid, *features = head.split()
            scaled = [f"{i}:{float(v) * 1000:g}" for i, v in (x.split(":") for x in features)]
            out.write(" ".join([target, qid, *scaled]) + "\n")
    model = tmp_path / "m"
    far = invoke("learn", "-v", "0", "-l", "map", "-t", "2", "-g", "1", "--k", "100", raw, model)
    assert far.returncode == 0 and "the RBF kernel is below 1e-06" in far.stderr and "try -g near" in far.stderr
    saturated = invoke("learn", "-v", "0", "-l", "map", "-t", "3", "-s", "1", "-r", "0", "--k", "100",
                       SMALL / "train.txt", model)
    assert saturated.returncode == 0 and "dropped as dependent" in saturated.stderr
    fine = invoke("learn", "-v", "0", "-l", "map", "-t", "2", "-g", "0.1", "--k", "100", SMALL / "train.txt", model)
    assert fine.returncode == 0 and "kernel" not in fine.stderr  # (MQ2008's queries without relevant documents:
    assert all("left out of training" in line for line in fine.stderr.splitlines())  # their warning only)
