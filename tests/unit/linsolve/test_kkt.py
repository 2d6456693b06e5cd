"""The fixed-pattern KKT factorisation against dense linear algebra."""

import numpy as np
import pytest

import trackdyn as td
import trackdyn.formulations
from trackdyn.formulations import AbsoluteSystem
from trackdyn.linsolve.block_ldl import BlockSolver
from trackdyn.linsolve.kkt import DirectSolver, unit_ordering
from trackdyn.testing import problems as P
from trackdyn.testing.fd import random_state


def dense_kkt(pattern, data):
    n = pattern.n
    K = np.zeros((n, n))
    inv = np.empty(n, dtype=int)
    inv[pattern.perm] = np.arange(n)
    for j in range(n):
        for p in range(pattern.Ap[j], pattern.Ap[j + 1]):
            i = pattern.Ai[p]
            a, b = pattern.perm[i], pattern.perm[j]
            K[a, b] = K[b, a] = data[p]
    return K


@pytest.mark.parametrize("solver_cls", [DirectSolver, BlockSolver])
@pytest.mark.parametrize("builder", ["chain", "four_bar", "slider_crank"])
def test_direct_solve_matches_dense(builder, solver_cls, recwarn):
    model = {"chain": lambda: P.chain(n_links=12), "four_bar": lambda: P.four_bar()[0],
             "slider_crank": P.slider_crank}[builder]()
    s = AbsoluteSystem(model)
    rng = np.random.default_rng(1)
    q, v = s.q0, rng.normal(size=s.v0.shape)
    s.update_kinematics(q, v)
    s.data[:] = s.base_data
    s.eval_forces(0.0, v, 1e-6, 1e-3, s.data)
    s.add_constraint_stiffness(rng.normal(size=s.nc) * 100, 1e-6, s.data)
    s.eval_constraints()
    s.fill_jacobian(s.data)
    solver = solver_cls(s.pattern)
    solver.factor(s.data)
    b = rng.normal(size=s.pattern.n)
    x = np.zeros_like(b)
    solver.solve(b, x)
    K = dense_kkt(s.pattern, s.data)
    assert np.allclose(K @ x, b, atol=1e-10 * np.abs(b).max() * max(1, np.abs(K).max()))
    # quasi-definite: as many positive pivots as velocities, negative as rows
    assert np.sum(solver.D > 0) == 6 * s.nb and np.sum(solver.D < 0) == s.nc


def test_ordering_eliminates_rows_after_their_bodies():
    s = AbsoluteSystem(P.chain(n_links=20))
    pos = np.empty(s.pattern.n, dtype=int)
    pos[s.pattern.perm] = np.arange(s.pattern.n)
    nd = 6 * s.nb
    for r in range(s.nc):
        first = min(pos[6 * b: 6 * b + 6].max() for b in s.row_body[r] if b >= 0)
        assert pos[nd + r] > first


def test_unit_ordering_respects_precedence_and_is_complete():
    size = [6, 6, 6, 5, 5]
    adj = [{3}, {3, 4}, {4}, {0, 1}, {1, 2}]
    after = [set(), set(), set(), {0, 1}, {1, 2}]
    order = unit_ordering(size, adj, after)
    assert sorted(order) == list(range(5))
    assert order.index(3) > max(order.index(0), order.index(1))
    assert order.index(4) > max(order.index(1), order.index(2))
    # with capacities a joint may go once one of its bodies has (and has room for its rows)
    hub = [6, 6, 6, 6, 5, 5, 5]  # body 0 carries three arms (1..3) on joints 4..6
    adj = [{4, 5, 6}, {4}, {5}, {6}, {0, 1}, {0, 2}, {0, 3}]
    after = [set(), set(), set(), set(), {0, 1}, {0, 2}, {0, 3}]
    strict = unit_ordering(hub, adj, after)
    relaxed = unit_ordering(hub, adj, after, unit_capacity=[6, 6, 6, 6, 0, 0, 0])
    assert sorted(relaxed) == list(range(7))
    assert all(strict.index(j) > strict.index(0) for j in (4, 5, 6))  # every joint waits for the hub
    # each arm then its joint before the hub (at most one joint left for the end): no fill between joints
    assert sum(relaxed.index(j) < relaxed.index(0) for j in (4, 5, 6)) >= 2
    for j, arm in ((4, 1), (5, 2), (6, 3)):
        assert relaxed.index(j) > relaxed.index(arm)


def test_m113_kkt_factor_is_accurate_and_lean(recwarn):
    """The M113's saddle-point matrix: pattern, ordering and supernodes as the speed work left them."""
    from trackdyn.linsolve.kkt import _relax, _zero_fraction, unit_elimination  # noqa: F401
    from trackdyn.testing.benchmarks_vehicle import _prepare, cruise_scenario

    prep = _prepare(cruise_scenario(step=1e-4))
    s = prep.sim.system
    names = s.body_names
    # no coupling block between a track and the other side's sprocket (they are 2.5 m apart)
    for i, j in s.pair_blocks:
        a, b = names[i].split(".")[0], names[j].split(".")[0]
        assert a == b or "chassis" in (names[i], names[j]), (names[i], names[j])
    st = prep.sim.state
    s.update_kinematics(st.q, st.v)
    s.data[:] = s.base_data
    h = 1e-3
    s.eval_forces(st.t, st.v, h * h, h, s.data, st, h)
    s.eval_constraints()
    s.fill_jacobian(s.data)
    solver = DirectSolver(s.pattern)
    solver.factor(s.data)
    sym = solver.sym
    w = sym.sn_w.astype(int)
    m = sym.sn_nr.astype(int) - w
    flops = float((w ** 3 / 3 + m * w * w + m * m * w).sum())
    assert flops < 0.8e6  # 1.42e6 before the cross-side exclusions, the one-body rule and relaxed merging
    assert w.max() <= 48
    rng = np.random.default_rng(3)
    b = rng.normal(size=s.pattern.n)
    x = np.zeros_like(b)
    solver.solve(b, x)
    K = dense_kkt(s.pattern, s.data)
    assert np.linalg.norm(K @ x - b) <= 1e-10 * np.linalg.norm(b) * np.abs(K).max()
    assert np.sum(solver.D > 0) == 6 * s.nb and np.sum(solver.D < 0) == s.nc


def test_redundant_rows_are_found_and_reported():
    with pytest.warns(td.formulations.RedundantConstraintWarning, match="redundant"):
        s = AbsoluteSystem(P.four_bar()[0])
    assert sum(c for _, c in s.removed_rows) == 3
    s2 = AbsoluteSystem(P.chain(n_links=5))
    assert s2.removed_rows == []


def test_direct_solver_rebinds_for_other_arrays_and_names_bad_ones(recwarn):
    """The solver's kernels are bound to the last data / (rhs, out) arrays: other arrays get their own call."""
    s = AbsoluteSystem(P.chain(n_links=8))
    rng = np.random.default_rng(5)
    s.update_kinematics(s.q0, rng.normal(size=s.v0.shape))
    s.data[:] = s.base_data
    s.eval_constraints()
    s.fill_jacobian(s.data)
    solver = DirectSolver(s.pattern)
    b = rng.normal(size=s.pattern.n)
    x1, x2, x3 = np.zeros_like(b), np.zeros_like(b), np.zeros_like(b)
    solver.factor(s.data)
    solver.solve(b, x1)
    d2 = s.data.copy()
    d2[s.pattern.body_slot[0, 0, 0]] *= 3.0  # a heavier first body: another matrix in another array
    solver.factor(d2)
    solver.solve(b, x2)
    solver.factor(s.data)
    solver.solve(2 * b, x3)  # a new rhs array with the first matrix again
    K1, K2 = dense_kkt(s.pattern, s.data), dense_kkt(s.pattern, d2)
    assert np.allclose(K1 @ x1, b) and np.allclose(K2 @ x2, b) and np.allclose(x3, 2 * x1)
    assert not np.allclose(x1, x2)
    with pytest.raises(ValueError, match="rhs: expected a C-contiguous float64 array"):
        solver.solve(b.astype(np.float32), x1)
    with pytest.raises(ValueError, match=r"data: .*shape \(%d,\)" % s.pattern.nnz):
        solver.factor(s.data[:-1])
