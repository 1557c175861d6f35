"""SVM-multiclass as a problem of the package (svmstruct.problems.multiclass): its oracles against enumeration, its
all-at-once cut against the one-example-at-a-time one, and its objective against scikit-learn's
LinearSVC(multi_class="crammer_singer") on the same problem (svm_multiclass's Delta = 100 and C/n, liblinear's
Delta = 1 and C: the same optimum with C_liblinear = C / (100 n) and w = 100 w_liblinear)."""
import numpy as np
import pytest
import scipy.sparse as sp

import svmstruct
from svmstruct.problems.multiclass import LOSS, Examples, Multiclass

from conftest import invoke_here


def random_examples(rng, n=30, K=4, D=6):
    X = sp.csr_matrix(np.round(rng.normal(size=(n, D)) * (rng.random((n, D)) < 0.6), 1))
    return Examples(X, rng.integers(1, K + 1, size=n))


def objective(X, y, w, C, K):
    """1/2 |w|^2 + C/n sum_i max_k (100 [k != y_i] + w_k.x_i - w_{y_i}.x_i), by numpy."""
    S = np.asarray(X @ w.reshape(K, -1).T)
    rows = np.arange(len(y))
    margins = S + LOSS - S[rows, y - 1][:, None]
    margins[rows, y - 1] = 0.0
    return 0.5 * w @ w + C / len(y) * margins.max(axis=1).sum()


@pytest.fixture(scope="module")
def digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:1000], order[1000:]
    X = sp.csr_matrix(X / 16.0)
    return Examples(X[train], y[train] + 1), Examples(X[test], y[test] + 1)


@pytest.mark.slow
def test_the_objective_of_liblinears_crammer_singer(digits):
    from sklearn.svm import LinearSVC

    train, test = digits
    C, n, K = 100.0, len(train), 10
    ours = svmstruct.fit_problem(Multiclass(), train, C=C, epsilon=0.01)
    w = np.zeros(K * train.X.shape[1])
    w[:len(ours.w)] = ours.w
    theirs = LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=C / (LOSS * n), tol=1e-8,
                       max_iter=100000).fit(train.X, train.y)
    w_theirs = LOSS * theirs.coef_.ravel()
    p_ours, p_theirs = objective(train.X, train.y, w, C, K), objective(train.X, train.y, w_theirs, C, K)
    assert p_ours == pytest.approx(ours.result.primal, rel=1e-9)
    assert abs(p_ours - p_theirs) <= 1e-3 * p_theirs, (p_ours, p_theirs)
    ours_test = np.mean(svmstruct.problems.predict(ours, test) == test.y)
    theirs_test = np.mean(theirs.predict(test.X) == test.y)
    assert abs(ours_test - theirs_test) <= 0.005 and ours_test > 0.85, (ours_test, theirs_test)


@pytest.mark.slow
def test_learn_and_classify_multiclass_from_the_command_line(digits, tmp_path):
    train, test = digits
    for name, examples in (("train", train), ("test", test)):
        (tmp_path / name).write_text("".join(
            f"{c} " + " ".join(f"{j + 1}:{v:g}" for j, v in zip(x.indices, x.data)) + "\n" for x, c in examples))
    run = invoke_here("learn", "--problem", "multiclass", "-c", "100", "-v", "0", tmp_path / "train", tmp_path / "m")
    assert run.returncode == 0, run.stderr
    assert invoke_here("classify", tmp_path / "test", tmp_path / "m", tmp_path / "pred").returncode == 0
    predicted = np.array([int(line) for line in (tmp_path / "pred").read_text().split()])
    assert np.mean(predicted == test.y) > 0.85
    trained = svmstruct.load_model(str(tmp_path / "m"))
    assert trained.options["classes"] == "10" and trained.options["features"] == "64"
    bad = tmp_path / "bad"
    bad.write_text("1 1:0.5\n0 2:1\n")
    run = invoke_here("learn", "--problem", "multiclass", "-c", "1", "-v", "0", bad, tmp_path / "m2")
    assert run.returncode == 1 and f"{bad}:2: class 0 is not one of 1, 2" in run.stderr


def test_a_wide_problem_keeps_its_constraints_apart_and_sparse_and_trains_the_same(monkeypatch):
    """K D >= 2^17 weights: the working set keeps each constraint in arrays of its own, sparse where smaller
    (loop_state.WideWorkingSet), and solves the same problem as a single buffer: the two runs differ only by
    round-off, which the QP's solutions amplify, so both are compared as certified solutions of one objective (to
    C epsilon)."""
    from svmstruct.train import loop_state

    rng = np.random.default_rng(5)
    K, D, n, C = 4, 40000, 120, 100.0
    X = sp.random(n, D, density=0.002, format="csr", random_state=6) * 5
    y = rng.integers(1, K + 1, n)
    eps = 0.01  # each run's objective is within C eps of the optimum: they differ by at most that
    wide = svmstruct.fit_problem(Multiclass(classes=K, features=D), Examples(X, y), C=C, epsilon=eps)
    state = loop_state.LoopState.at_zero(1, K * D, 1.0, 0.1, 0.0)
    assert isinstance(state.working_set, loop_state.WideWorkingSet)
    monkeypatch.setattr(loop_state.WideWorkingSet, "WIDTH", 1 << 40)
    narrow = svmstruct.fit_problem(Multiclass(classes=K, features=D), Examples(X, y), C=C, epsilon=eps)
    assert wide.result.converged and narrow.result.converged
    objectives = [objective(X, y, model.w, C, K) for model in (wide, narrow)]
    assert abs(objectives[0] - objectives[1]) <= C * eps
    assert wide.result.primal == pytest.approx(objectives[0], rel=1e-6)
    ws = loop_state.WideWorkingSet(10)
    a, b = np.array([0, 0, 1.0, 0, 0, 0, 0, 0, 0, 2.0]), np.arange(10.0)
    ws.add(a, 1.0)
    ws.add(b, 2.0)
    assert ws.rows[0][0] is not None and ws.rows[1][0] is None  # the first sparse, the second dense
    np.testing.assert_allclose(ws.G, np.array([[a @ a, a @ b], [a @ b, b @ b]]))
    np.testing.assert_allclose(ws.combination(np.array([2.0, 0.5])), 2 * a + 0.5 * b)
    np.testing.assert_allclose(ws.A, np.vstack([a, b]))


def test_structured_svm_is_a_scikit_learn_estimator_over_the_multiclass_problem():
    """StructuredSVM(problem, C): clone and get_params as scikit-learn's contract asks, GridSearchCV over C picks
    the C whose folds score best (score: minus the mean Delta = -100 x the error rate), and its refit is
    fit_problem's model at that C on a copy of the problem (the caller's problem keeps its options)."""
    from sklearn.base import clone
    from sklearn.datasets import load_digits
    from sklearn.model_selection import GridSearchCV, KFold

    digits = load_digits()
    X, y = sp.csr_matrix(digits.data[:300] / 16), digits.target[:300] + 1
    problem = Multiclass()
    svm = svmstruct.StructuredSVM(problem, C=10.0, epsilon=0.01)
    copy = clone(svm)
    assert copy.get_params()["C"] == 10.0 and copy.get_params()["problem"] is not problem
    assert copy.get_params()["problem"].options == problem.options
    search = GridSearchCV(svm, {"C": [0.1, 10.0, 1000.0]}, cv=KFold(3)).fit(X, y)
    means = search.cv_results_["mean_test_score"]
    assert search.best_params_["C"] == [0.1, 10.0, 1000.0][int(np.argmax(means))]
    assert means.max() > -20  # an error rate under 20% on held-out folds (measured: 0.07 at C 10 and 1000)
    assert problem.options["classes"] is None  # fits trained copies
    direct = svmstruct.fit_problem(Multiclass(), Examples(X, y), C=search.best_params_["C"], epsilon=0.01)
    np.testing.assert_allclose(search.best_estimator_.model_.w, direct.w, atol=1e-9)
    predicted = search.best_estimator_.predict(X)
    assert search.best_estimator_.score(X, y) == pytest.approx(-100 * np.mean(np.array(predicted) != y))
    with pytest.raises(ValueError, match="invalid parameter"):
        svm.set_params(gamma=1)


def with_threads(n: int, call):
    """call() with n threads, every kernel on its parallel path (SVMSTRUCT_PARALLEL_SECONDS=0)."""
    from svmstruct.compute import threads

    threads.set_count(n)
    try:
        return call()
    finally:
        threads.set_count(None)


def test_the_wide_working_sets_kernels_read_a_row_once_and_add_as_numpy_does(monkeypatch):
    """train.row_kernels against numpy: the sparse row's dot product (its own order of sums: to round-off), the
    multiples added to w and the row kept sparse (the same bits); one thread and two give the same bits."""
    from svmstruct.train import row_kernels

    monkeypatch.setenv("SVMSTRUCT_PARALLEL_SECONDS", "0")
    rng = np.random.default_rng(3)
    a = rng.normal(size=5000) * (rng.random(5000) < 0.3)
    indices, values = row_kernels.nonzeros(a)
    np.testing.assert_array_equal(indices, np.flatnonzero(a))
    np.testing.assert_array_equal(values, a[a != 0])
    assert indices.dtype == np.int32
    v = rng.normal(size=5000)
    dots = [with_threads(n, lambda: row_kernels.sparse_dot(indices, values, v)) for n in (1, 2)]
    assert dots[0] == dots[1] == pytest.approx(values @ v[indices], rel=1e-12)
    for n in (1, 2):
        w, reference = v.copy(), v.copy()
        with_threads(n, lambda w=w: row_kernels.sparse_add(indices, values, 0.3, w))
        reference[indices] += 0.3 * values
        np.testing.assert_array_equal(w, reference)
        with_threads(n, lambda w=w: row_kernels.dense_add(a, -1.7, w))
        reference += -1.7 * a
        np.testing.assert_array_equal(w, reference)


def test_the_cut_sums_each_weight_in_row_order_on_any_number_of_threads(monkeypatch):
    """Multiclass.cut's blocks (class_kernels.cut_blocks, over X's columns) equal a pass over the rows in order,
    adding +x_i to the true class's block and -x_i to the most violated one's, to the bit, with one or two threads;
    its columns are made once per set of examples."""
    monkeypatch.setenv("SVMSTRUCT_PARALLEL_SECONDS", "0")
    rng = np.random.default_rng(4)
    K, D = 5, 300
    X = sp.random(400, D, density=0.05, format="csr", random_state=7)
    X.data = np.round(X.data * 7, 2)
    examples = Examples(X, rng.integers(1, K + 1, 400))
    problem = Multiclass(classes=K, features=D)
    w = rng.normal(size=K * D)
    cuts = [with_threads(n, lambda: problem.cut(examples, w, 2)) for n in (1, 2)]
    np.testing.assert_array_equal(cuts[0][0], cuts[1][0])
    S = np.asarray(X @ w.reshape(K, D).T)
    truth = examples.y - 1
    ybar = np.argmax(S + np.where(np.arange(K)[None, :] == truth[:, None], 0.0, LOSS), axis=1)
    blocks = np.zeros((K, D))
    for i in range(400):
        if ybar[i] != truth[i]:
            row = X[i]
            blocks[truth[i], row.indices] += row.data * 1.0
            blocks[ybar[i], row.indices] += row.data * -1.0
    np.testing.assert_array_equal(cuts[0][0], blocks.ravel())
    assert examples.columns(D) is examples.columns(D)
