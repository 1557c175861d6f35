"""The cutting-plane trainer's working set."""
from pathlib import Path

import numpy as np
import pytest

from svmstruct import training
from svmstruct.errors import InputError
from svmstruct.train import line_search, loop
from svmstruct.train.loop_state import LoopState, WorkingSet
from svmstruct.train.problem import Outline


def test_working_set_shift_keeps_the_gram_matrix_exact():
    rng = np.random.default_rng(0)
    ws = WorkingSet(dim=7, capacity=2)
    for _ in range(5):  # grows past its capacity
        ws.add(rng.normal(size=7), float(rng.random()))
    delta = rng.normal(size=7)
    A = ws.A.copy()
    ws.shift(delta)
    assert np.allclose(ws.A, A + delta)
    assert np.allclose(ws.G, ws.A @ ws.A.T, rtol=1e-12, atol=1e-12)
    ws.keep(np.array([True, False, True, True, False]))
    assert np.allclose(ws.G, ws.A @ ws.A.T, rtol=1e-12, atol=1e-12)


def _ranking_data(scale, seed=0, queries=15, docs=8, features=6):
    """A small ranking set whose features are multiplied by `scale` (LETOR features x 1e6)."""
    import scipy.sparse as sp

    from svmstruct.io import data

    rng = np.random.default_rng(seed)
    n = queries * docs
    X = rng.random((n, features))
    y = np.floor(3 * rng.random(n) * X[:, 0]).astype(float)
    qid = np.repeat(np.arange(1, queries + 1), docs)
    docids = data.Docids()
    for i in range(n):
        docids.append(f"d{i}")
    return data.Dataset(sp.csr_matrix(X * scale), y, qid, np.arange(0, n + 1, docs, dtype=np.int64), docids.freeze(),
                        np.arange(1, n + 1), "synthetic", True)


@pytest.mark.parametrize("scale", [1.0, 1e3, 1e6])
def test_converged_means_a_certified_gap(scale):
    """With large feature values every alpha is tiny; the run must not
    prune its working set to nothing and call itself converged. Whatever the scale, `converged` implies
    primal - dual <= C * epsilon, and a run that cannot get there says so."""
    from svmstruct import api

    loss, opts = api.resolve_loss("pairs")
    problem = loss.build(_ranking_data(scale), opts)
    result = training.train(problem, 1e4, 0.001, max_iterations=400)
    eps = 0.001 * problem.epsilon_scale
    if result.converged:
        assert result.primal - result.dual <= 1e4 * eps * (1 + 1e-6) + 1e-12 * abs(result.primal)
    else:
        assert result.status in ("stalled", "iteration limit", "precision limit")
    if scale <= 1e3:
        assert result.converged
    assert np.all(np.isfinite(result.w))


def test_overflowing_features_raise_a_numerical_error_at_once():
    """Item 2: a value of 1e200 overflows the Gram matrix; the trainer says so instead of hanging."""
    import time

    import scipy.sparse as sp

    from svmstruct import api
    from svmstruct.errors import NumericalError
    from svmstruct.io import data

    X = sp.csr_matrix(np.array([[1e200, 1.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    docids = data.Docids()
    for i in range(4):
        docids.append(f"d{i}")
    ds = data.Dataset(X, np.array([1.0, -1.0, 1.0, -1.0]), np.zeros(4, dtype=np.int64), np.array([0, 4]),
                      docids.freeze(), np.arange(1, 5), "t", False)
    loss, opts = api.resolve_loss("errorrate")
    start = time.perf_counter()
    with pytest.raises(NumericalError, match="overflows"):
        training.train(loss.build(ds, {"bias": 1.0}), 1.0, 0.1)
    assert time.perf_counter() - start < 10


def test_qp_on_a_non_finite_gram_matrix_fails_at_once():
    from svmstruct.errors import NumericalError
    from svmstruct.train import qp

    for bad in (np.nan, np.inf):
        G = np.array([[1.0, bad], [bad, 1.0]])
        with pytest.raises(NumericalError):
            qp.solve_dual(G, np.ones(2), 1.0)


@pytest.mark.parametrize("close_enough", [0.0, 0.05])
@pytest.mark.parametrize("loss_name, seed", [("errorrate", 0), ("errorrate", 1), ("pairs", 2), ("avgprec", 3),
                                             ("f1", 4)])
def test_line_search_finds_the_best_point_of_the_segment(loss_name, seed, close_enough):
    """OCAS's line search against the objective on a grid of 2001 points of [w_b, w_t]: never worse than
    any grid point (it is exact up to round-off on the piecewise quadratic), or than close_enough above
    them when that is what the loop asks (a tenth of its tolerance C epsilon), and its answer at w_t is the
    oracle's there. The segment's points are random, so most steps are strictly inside (0, 1)."""
    from svmstruct import api
    from svmstruct.compute import products
    from svmstruct.train.evaluator import LocalEvaluator

    dataset = _ranking_data(1.0, seed=seed)
    if loss_name in ("errorrate", "f1"):
        dataset.y[:] = np.where(dataset.y > 0, 1.0, -1.0)
    loss, opts = api.resolve_loss(loss_name)
    problem = loss.build(dataset, opts)
    X, n, C = problem.X, problem.n, 10.0
    rng = np.random.default_rng(seed)

    def value(scores):
        dcoef, delta = problem.most_violated(scores)
        return delta / n - float(dcoef @ scores) / n

    def objective(w):
        return 0.5 * float(w @ w) + C * max(0.0, value(products.matvec(X, w)))

    for _ in range(5):
        w_b, w_t = rng.normal(size=X.shape[1]), 3 * rng.normal(size=X.shape[1])
        points = LocalEvaluator(problem)
        points.restore(w_b, w_t, None)
        at_b, at_t = points.evaluate(0.0), points.evaluate(1.0)
        step, f, slack = line_search.best_on_segment(points.evaluate, C, n, w_b, w_t,
                                                     (at_b.delta / n - at_b.margin / n, at_b.slope), at_t,
                                                     line_search.Stop(close_enough=close_enough * abs(objective(w_b))))
        assert 0.0 <= step <= 1.0
        w = w_b + step * (w_t - w_b)
        assert f == pytest.approx(objective(w), rel=1e-12, abs=1e-12)
        assert slack == pytest.approx(value(products.matvec(X, w)), rel=1e-9, abs=1e-12)
        grid = min(objective(w_b + t * (w_t - w_b)) for t in np.linspace(0.0, 1.0, 2001))
        assert f <= grid + 1e-9 * abs(grid) + close_enough * abs(objective(w_b))
        assert at_t.delta / n - at_t.margin / n == pytest.approx(value(products.matvec(X, w_t)), rel=1e-12,
                                                                 abs=1e-12)


@pytest.mark.parametrize("loss_name", ["errorrate", "pairs", "map"])
def test_ocas_and_the_plain_loop_reach_the_same_optimum(loss_name):
    """Both engines stop with a certified gap, so their objectives lie within C * epsilon of each other
    (and of the optimum); OCAS takes fewer iterations here too."""
    from svmstruct import api

    dataset = _ranking_data(1.0, seed=5, queries=30)
    if loss_name == "errorrate":
        dataset.y[:] = np.where(dataset.y > 0, 1.0, -1.0)
    loss, opts = api.resolve_loss(loss_name)
    C, eps = 100.0, 0.001
    plain = training.train(loss.build(dataset, opts), C, eps, line_search=False)
    ocas = training.train(loss.build(dataset, opts), C, eps, line_search=True)
    tolerance = C * eps * loss.build(dataset, opts).epsilon_scale * (1 + 1e-6)
    assert plain.converged and ocas.converged
    assert ocas.primal - ocas.dual <= tolerance
    assert abs(ocas.primal - plain.primal) <= tolerance
    assert ocas.primal >= plain.dual - 1e-9 and plain.primal >= ocas.dual - 1e-9  # weak duality across runs
    assert ocas.iterations <= plain.iterations


@pytest.mark.parametrize("loss_name, options, stop_at", [
    ("map", {}, 3), ("pairs", {}, 1), ("ndcg@10", {"position_weights": "measure"}, 5),
    ("ndcg@10", {"position_weights": "measure"}, 12), ("ndcg@10", {"pairwise": 0.0}, 5), ("ndcg@10", {}, 2)])
def test_a_run_resumed_from_its_checkpoint_ends_as_an_uninterrupted_one(loss_name, options, stop_at, tmp_path):
    """The state handed to `checkpoint` at the iteration limit, written and read back by
    svmstruct.train.checkpoint, continues to the same model (ndcg@10 across CCCP re-imputations; stopped where it
    was to re-impute, the resumed run spends one iteration re-solving the QP first)."""
    from svmstruct import api
    from svmstruct.train import checkpoint

    dataset = _ranking_data(1.0, seed=7, queries=20)
    loss, opts = api.resolve_loss(loss_name, options)
    C, eps = 10.0, loss.default_epsilon
    whole = training.train(loss.build(dataset, opts), C, eps)
    assert whole.iterations > stop_at
    states: list = []

    class Saved(loop.Callback):
        def resumable(self, state, seconds):
            states.append(state.to_arrays(seconds))

    first = training.train(loss.build(dataset, opts), C, eps, max_iterations=stop_at, callbacks=[Saved()])
    assert first.status == "iteration limit" and int(states[-1]["iteration"]) == stop_at
    path = str(tmp_path / "run.ckpt")
    checkpoint.save(path, states[-1], {"run": loss_name})
    problem = loss.build(dataset, opts)
    outline = Outline.of(problem)

    def resumed_from(saved, C):
        return LoopState.from_arrays(saved.arrays(outline.n, outline.dim), outline.n, outline.dim, C,
                                     eps * outline.epsilon_scale)

    resumed = training.train(problem, C, eps, start=resumed_from(checkpoint.load(path, {"run": loss_name}), C))
    assert resumed.converged and resumed.iterations == whole.iterations + (len(states[-1]["cuts"]) == 0)
    assert resumed.outer_steps == whole.outer_steps
    assert resumed.primal == pytest.approx(whole.primal, rel=1e-9)
    assert np.abs(resumed.w - whole.w).max() <= 1e-7 * np.abs(whole.w).max()
    with pytest.raises(InputError, match="another training problem"):
        training.train(problem, 2 * C, eps, start=resumed_from(checkpoint.load(path, {"run": loss_name}), 2 * C))
    with pytest.raises(InputError, match=r"belongs to another run \(run differ\)"):
        checkpoint.load(path, {"run": "other"})


@pytest.mark.parametrize("loss_name", ["pairs", "map", "errorrate"])
def test_every_c_of_a_grid_trains_the_model_of_that_c_alone(loss_name):
    """training.train_grid trains every C from w = 0 (a warm start from the previous C stops within that C's
    tolerance at another point: the grid's answer would depend on the grid; `make bench-engine` measures it)."""
    from svmstruct import api, training

    dataset = _ranking_data(1.0, seed=11, queries=30)
    if loss_name == "errorrate":
        dataset.y[:] = np.where(dataset.y > 0, 1.0, -1.0)
    loss, opts = api.resolve_loss(loss_name)
    grid = [0.1, 1.0, 10.0, 100.0]
    models = list(training.train_grid(training.LocalSource(dataset), loss, opts, api.Settings(grid, 0.001)))
    for C, trained in zip(grid, models):
        alone = api.train_loss(loss, opts, dataset, C, epsilon=0.001)
        assert trained.result.converged and trained.result.primal == alone.result.primal
        np.testing.assert_array_equal(trained.w, alone.w)


def test_a_latent_target_is_not_warm_started():
    """ndcg@10's CCCP path would depend on the grid: every C of a grid trains as on its own."""
    from svmstruct import api, training

    dataset = _ranking_data(1.0, seed=12, queries=20)
    loss, opts = api.resolve_loss("ndcg@10")
    grid = [1.0, 10.0]
    models = list(training.train_grid(training.LocalSource(dataset), loss, opts, api.Settings(grid)))
    alone = api.train_loss(loss, opts, dataset, 10.0)
    assert models[1].result.primal == alone.result.primal
    np.testing.assert_array_equal(models[1].w, alone.w)


def test_a_callback_sees_every_iteration_without_touching_the_trainer():
    """A Callback of one's own (here: |w_b| after every iteration) plugs into the loop."""
    from svmstruct import api

    dataset = _ranking_data(1.0, seed=3, queries=20)
    loss, opts = api.resolve_loss("map")

    class Norms(loop.Callback):
        def __init__(self):
            self.norms, self.final = [], None

        def iteration(self, row, state):
            self.norms.append((row["iteration"], float(np.linalg.norm(state.w_best))))
            self.final = state

    norms = Norms()
    result = training.train(loss.build(dataset, opts), 10.0, 0.001, callbacks=[norms])
    assert [i for i, _ in norms.norms] == list(range(1, result.iterations + 1))
    assert norms.norms[-1][1] == pytest.approx(float(np.linalg.norm(result.w)))
    assert norms.final is not None and norms.final.iteration == result.iterations


def test_a_callback_stops_a_run_with_status_stopped():
    """Callback.iteration returning True ends the run after that iteration: status "stopped", not converged, the
    model its best point so far (what the same run reaches at that iteration limit)."""
    from svmstruct import api

    dataset = _ranking_data(1.0, seed=3, queries=20)
    loss, opts = api.resolve_loss("map")

    class StopAt(loop.Callback):
        def iteration(self, row, state):
            return row["iteration"] >= 3

    stopped = training.train(loss.build(dataset, opts), 10.0, 0.001, callbacks=[StopAt()])
    capped = training.train(loss.build(dataset, opts), 10.0, 0.001, max_iterations=3)
    assert (stopped.status, stopped.converged, stopped.iterations) == ("stopped", False, 3)
    assert capped.status == "iteration limit" and stopped.primal == capped.primal
    np.testing.assert_array_equal(stopped.w, capped.w)
    assert "stopped by a callback" in loop.summary(stopped)


def test_fit_refuses_weights_that_are_not_finite_as_learn_does(monkeypatch, tmp_path):
    """The check lives in training.train_grid, the one path: the Python API and the command line refuse alike."""
    import svmstruct
    from svmstruct.errors import NumericalError

    from conftest import ROOT
    from conftest import invoke_here as invoke

    real = loop.optimise

    def overflowing(*args, **kwargs):
        result = real(*args, **kwargs)
        result.w = result.w.copy()
        result.w[0] = np.inf
        return result

    monkeypatch.setattr(loop, "optimise", overflowing)
    dataset = _ranking_data(1.0, seed=5, queries=10)
    with pytest.raises(NumericalError, match="not finite") as from_python:
        svmstruct.fit(dataset, loss="pairs", C=1.0)
    result = invoke("learn", "-l", "pairs", "-v", "0", ROOT / "data" / "mq2008-small" / "train.txt", tmp_path / "m")
    assert result.returncode == 3 and str(from_python.value) in result.stderr
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("loss", ["pairs", "map", "ndcg@10", "errorrate", "rocarea"])
@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_single_precision_storage_trains_the_model_of_the_same_values_in_double(loss, layout):
    """learn stores features as float (svm_light's FVAL) by default; training runs in double precision, so
    the float32 matrix and the same values as float64 give the same model, bit for bit."""
    import dataclasses

    import svmstruct
    from svmstruct.io import data

    single = data.read_svmlight(str(Path(__file__).resolve().parents[1] / "data" / "mq2008-small" / "train.txt"),
                                dtype=np.float32, layout=layout)
    double = dataclasses.replace(single, X=single.X.astype(np.float64))
    a, b = svmstruct.fit(single, loss=loss, C=10), svmstruct.fit(double, loss=loss, C=10)
    assert a.result.primal == b.result.primal and np.array_equal(a.w, b.w) and a.threshold == b.threshold
