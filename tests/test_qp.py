"""The dual QP solver against hand-solved cases, exhaustive active-set enumeration and the KKT conditions."""
import itertools

import numpy as np
import pytest

from svmstruct.train.qp import DualQP, solve_dual


def kkt_violation(G, b, C, alpha):
    """Largest violation of: alpha >= 0, sum <= C, gradient g = b - G alpha equal to lambda on the
    support, <= lambda off it, lambda >= 0 and lambda (C - sum alpha) = 0."""
    g = b - G @ alpha
    support = alpha > 1e-9 * max(1.0, alpha.max())
    lam = max(0.0, g[support].mean()) if support.any() else max(0.0, g.max())
    worst = max(0.0, -alpha.min(), alpha.sum() - C)
    if support.any():
        worst = max(worst, np.abs(g[support] - lam).max())
    worst = max(worst, (g - lam).max(), lam * abs(C - alpha.sum()))
    return worst


def exhaustive_optimum(G, b, C):
    """Best objective over every active set (support S, sum bound active or not): exact for tiny m."""
    m = len(b)
    best = 0.0
    for size in range(1, m + 1):
        for S in itertools.combinations(range(m), size):
            S = list(S)
            GS = G[np.ix_(S, S)]
            candidates = []
            K = np.block([[GS, np.ones((size, 1))], [np.ones((1, size)), np.zeros((1, 1))]])
            candidates.append(np.linalg.lstsq(K, np.append(b[S], C), rcond=None)[0][:size])
            candidates.append(np.linalg.lstsq(GS, b[S], rcond=None)[0])
            for x in candidates:
                if x.min() < -1e-12 or x.sum() > C + 1e-9:
                    continue
                alpha = np.zeros(m)
                alpha[S] = np.maximum(x, 0)
                best = max(best, alpha @ b - 0.5 * alpha @ G @ alpha)
    return best


def test_unconstrained_optimum_inside_the_simplex():
    G = np.diag([2.0, 1.0])
    sol = solve_dual(G, np.array([1.0, 1.0]), C=10.0)
    np.testing.assert_allclose(sol.alpha, [0.5, 1.0], atol=1e-10)
    assert sol.dual_objective == pytest.approx(0.75, abs=1e-12)


def test_sum_constraint_active():
    # 1 - 2 a1 = 1 - a2 = lambda, a1 + a2 = 1/2  ->  a = (1/6, 1/3)
    sol = solve_dual(np.diag([2.0, 1.0]), np.array([1.0, 1.0]), C=0.5)
    np.testing.assert_allclose(sol.alpha, [1 / 6, 1 / 3], atol=1e-10)


def test_negative_offsets_give_zero():
    sol = solve_dual(np.eye(3), np.array([-1.0, -2.0, -0.5]), C=1.0)
    np.testing.assert_allclose(sol.alpha, 0.0, atol=1e-12)


def test_duplicate_constraints_singular_gram():
    a = np.array([[1.0, 2.0], [1.0, 2.0], [0.5, -1.0]])
    sol = solve_dual(a @ a.T, np.array([3.0, 3.0, 1.0]), C=100.0)
    assert kkt_violation(a @ a.T, np.array([3.0, 3.0, 1.0]), 100.0, sol.alpha) < 1e-8


@pytest.mark.parametrize("seed", range(200))
def test_random_problems_reach_the_exhaustive_optimum_and_kkt(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 7))
    d = int(rng.integers(1, 6))
    A = rng.normal(size=(m, d)) * rng.choice([0.01, 1.0, 100.0])
    b = rng.normal(size=m) + rng.choice([0.0, 2.0])
    C = float(rng.choice([0.01, 1.0, 100.0, 1e4]))
    G = A @ A.T
    sol = solve_dual(G, b, C)
    # alpha' G alpha can be ~C^2 |G| while the optimum is ~C |b|: allow for that cancellation
    scale = max(1.0, np.abs(b).max() * C) + 1e-5 * C * C * np.abs(G).max()
    # never below the best active set (that enumeration may miss optima on singular faces, so >=)
    assert sol.dual_objective >= exhaustive_optimum(G, b, C) - 1e-9 * scale
    assert kkt_violation(G, b, C, sol.alpha) <= 1e-7 * max(1.0, np.abs(b).max(), C * np.abs(G).max())


def test_warm_start_gives_the_same_solution():
    rng = np.random.default_rng(7)
    A = rng.normal(size=(6, 4))
    b = rng.normal(size=6) + 1
    first = solve_dual(A[:5] @ A[:5].T, b[:5], 3.0)
    cold = solve_dual(A @ A.T, b, 3.0)
    warm = solve_dual(A @ A.T, b, 3.0, np.append(first.alpha, 0.0), np.concatenate([first.y[:-1], [0.0], first.y[-1:]]))
    assert warm.dual_objective == pytest.approx(cold.dual_objective, rel=1e-12, abs=1e-12)


def test_the_dual_qp_keeps_its_warm_start_through_added_and_dropped_constraints():
    """DualQP pads its multipliers for appended constraints, prunes them with the working set and rescales them for
    another C: every solve is the optimum of its working set (KKT, the cold solve's objective)."""
    rng = np.random.default_rng(11)
    A = rng.normal(size=(9, 5))
    b = rng.normal(size=9) + 1
    problem = DualQP()
    rows = np.arange(0)
    for m in (1, 4, 6, 9):  # constraints appended, as the loop adds its cutting planes
        rows = np.arange(m)
        G = A[rows] @ A[rows].T
        solution = problem.solve(G, b[rows], 3.0)
        assert len(problem.alpha) == m and problem.duals is not None and len(problem.duals) == m + 1
        assert kkt_violation(G, b[rows], 3.0, solution.alpha) < 1e-8
        assert solution.dual_objective == pytest.approx(solve_dual(G, b[rows], 3.0).dual_objective, rel=1e-10)
    keep = problem.alpha > 0
    keep[0] = False  # one dropped however it stands
    problem.keep(keep)
    assert len(problem.alpha) == keep.sum() and len(problem.duals) == keep.sum() + 1
    G = A[rows[keep]] @ A[rows[keep]].T
    assert kkt_violation(G, b[rows[keep]], 3.0, problem.solve(G, b[rows[keep]], 3.0).alpha) < 1e-8
    other = DualQP(10.0 * problem.alpha)  # a warm start for another C (scripts/bench_engine.py's): multipliers dropped
    assert kkt_violation(G, b[rows[keep]], 30.0, other.solve(G, b[rows[keep]], 30.0).alpha) < 1e-8


def test_ctrl_c_caught_by_osqp_is_passed_on(monkeypatch):
    """OSQP installs its own SIGINT handler while it solves and returns with status OSQP_SIGINT: that must
    become a KeyboardInterrupt (else Ctrl-C during training is lost and the run goes on to the end)."""
    from types import SimpleNamespace

    import osqp

    class Interrupted:
        def setup(self, *args, **kwargs):
            pass

        def warm_start(self, **kwargs):
            pass

        def solve(self, raise_error=False):
            return SimpleNamespace(x=np.zeros(2), y=np.zeros(3),
                                   info=SimpleNamespace(status_val=osqp.SolverStatus.OSQP_SIGINT,
                                                        status="interrupted"))

    monkeypatch.setattr(osqp, "OSQP", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        solve_dual(np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([1.0, 0.3]), 1.0)
