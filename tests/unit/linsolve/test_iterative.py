"""MINRES, PSOR and BB on KKT systems of real models, against dense linear algebra."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trackdyn as td
from trackdyn.formulations import AbsoluteSystem
from trackdyn.linsolve import SOLVERS, make_solver
from trackdyn.linsolve.iterative import KKTBlocks
from trackdyn.testing import problems as P

ITERATIVE = ["minres", "psor", "bb"]


def kkt_system(builder, seed, joint_coupling="full", h=1e-3):
    """KKT values of a Newton matrix with force and joint-stiffness coupling at a random state, and a rhs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = {"chain": lambda: P.chain(n_links=10),
                 "four_bar": lambda: P.four_bar()[0],
                 "slider_crank": P.slider_crank,
                 "sprung_chain": sprung_chain}[builder]()
        s = AbsoluteSystem(model, joint_coupling=joint_coupling)
    rng = np.random.default_rng(seed)
    v = rng.normal(size=s.v0.shape)
    s.update_kinematics(s.q0, v)
    s.data[:] = s.base_data
    s.eval_forces(0.0, v, h * h, h, s.data)
    s.update_drivers(0.0)
    s.add_constraint_stiffness(rng.normal(size=s.nc) * 50.0, h * h, s.data)
    s.eval_constraints()
    s.fill_jacobian(s.data)
    rhs = rng.normal(size=s.pattern.n)
    return s, s.data.copy(), rhs


def sprung_chain():
    """A 6-link chain with springs between every second link: H has force-element coupling blocks."""
    m = P.chain(n_links=6)
    links = [b for b in m.bodies if not b.is_ground] if hasattr(m, "bodies") else None
    for k in range(0, 4):
        a, b = m.body(f"link[{k}]"), m.body(f"link[{k + 2}]")
        m.add_force(td.TSDA(a, b, [(k + 0.5) * 0.154, 0, 0.05], [(k + 2.5) * 0.154, 0, 0.05], stiffness=5e4,
                            damping=50.0, name=f"spring{k}"))
    return m


def dense(s, data):
    blk = KKTBlocks(s.pattern)
    blk.load(data)
    n = s.pattern.n
    K = np.zeros((n, n))
    e = np.zeros(n)
    for i in range(n):
        e[:] = 0.0
        e[i] = 1.0
        blk.matvec(e, K[:, i])
    return K


def test_registry_and_block_view_match_the_pattern():
    for name in ITERATIVE:
        assert name in SOLVERS
    s, data, _ = kkt_system("chain", 0)
    K = dense(s, data)
    assert np.allclose(K, K.T, atol=0)
    # the block view agrees with the CSC storage the direct solver factors
    d = make_solver("direct", s.pattern)
    d.factor(data)
    rng = np.random.default_rng(0)
    x = rng.normal(size=s.pattern.n)
    b = K @ x
    y = np.zeros_like(b)
    d.solve(b, y)
    assert np.allclose(y, x, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("builder", ["chain", "four_bar", "slider_crank", "sprung_chain"])
@pytest.mark.parametrize("name", ITERATIVE)
def test_solvers_reach_tolerance_and_the_dense_solution(builder, name):
    s, data, rhs = kkt_system(builder, 1)
    K = dense(s, data)
    x_ref = np.linalg.solve(K, rhs)
    sol = make_solver(name, s.pattern, tol=1e-10, warm_start=False, max_iter=200000)
    x = np.zeros_like(rhs)
    sol.factor(data)
    sol.solve(rhs, x)
    res = np.linalg.norm(rhs - K @ x) / np.linalg.norm(rhs)
    assert sol.last_converged and sol.last_residual <= 1e-10
    assert np.isclose(res, sol.last_residual, rtol=1e-3, atol=1e-15)  # the reported residual is the true one
    # forward error within the condition-number bound
    assert np.linalg.norm(x - x_ref) / np.linalg.norm(x_ref) <= np.linalg.cond(K) * max(res, 1e-15)
    assert sol.last_iterations > 0 and sol.n_iterations == sol.last_iterations


@pytest.mark.parametrize("name", ["psor", "bb"])
def test_block_hessian_with_defect_correction_is_exact(name):
    """H replaced by its body blocks inside, the outer correction on the true KKT residual restores the solution."""
    s, data, rhs = kkt_system("sprung_chain", 2)
    assert len(s.pair_blocks) > 0
    K = dense(s, data)
    x_ref = np.linalg.solve(K, rhs)
    sol = make_solver(name, s.pattern, tol=1e-10, warm_start=False, hessian="block", max_iter=200000)
    x = np.zeros_like(rhs)
    sol.factor(data)
    sol.solve(rhs, x)
    assert sol.last_converged
    assert np.linalg.norm(x - x_ref) / np.linalg.norm(x_ref) <= np.linalg.cond(K) * 1e-10


@given(st.integers(0, 2**31 - 1))
@settings(max_examples=10)
def test_minres_on_random_states(seed):
    s, data, rhs = kkt_system("chain", seed)
    sol = make_solver("minres", s.pattern, tol=1e-9, warm_start=False)
    x = np.zeros_like(rhs)
    sol.factor(data)
    sol.solve(rhs, x)
    assert sol.last_residual <= 1e-9


@pytest.mark.parametrize("name", ITERATIVE)
def test_warm_start_starts_from_the_last_multipliers(name):
    """The same system again needs no iteration; a nearby one (rhs within 1e-4) fewer than a cold start."""
    s, data, rhs = kkt_system("chain", 3, joint_coupling="diagonal")
    sol = make_solver(name, s.pattern, tol=1e-7, warm_start=True, max_iter=200000)
    x = np.zeros_like(rhs)
    sol.factor(data)
    sol.solve(rhs, x)
    assert sol.last_converged
    cold = sol.last_iterations
    sol.solve(rhs, x)
    assert sol.last_iterations <= 1
    sol.solve(rhs * (1 + 1e-4), x)
    assert sol.last_converged and sol.last_iterations < cold


def test_unconverged_solve_reports_without_raising():
    s, data, rhs = kkt_system("chain", 4)
    sol = make_solver("bb", s.pattern, tol=1e-12, max_iter=5, warm_start=False)
    x = np.zeros_like(rhs)
    sol.factor(data)
    sol.solve(rhs, x)
    assert not sol.last_converged and sol.last_iterations <= 5 and sol.n_unconverged == 1
    assert np.isfinite(sol.last_residual) and sol.last_residual > 1e-12


@pytest.mark.parametrize("name, opts, field", [
    ("psor", {"omega": 2.0}, "omega"),
    ("bb", {"hessian": "approx"}, "hessian"),
    ("minres", {"tol": 0.0}, "tol"),
    ("psor", {"max_iter": 0}, "max_iter"),
])
def test_bad_options_name_the_field(name, opts, field):
    s, _, _ = kkt_system("chain", 0)
    with pytest.raises(ValueError, match=field):
        make_solver(name, s.pattern, **opts)


def test_dual_methods_refuse_an_indefinite_H():
    s, data, _ = kkt_system("chain", 5)
    bad = data.copy()
    bad[s.pattern.body_slot[3, 2, 2]] = -1.0
    for name in ("psor", "bb"):
        with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
            make_solver(name, s.pattern).factor(bad)
