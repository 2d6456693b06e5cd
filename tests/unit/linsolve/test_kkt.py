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
        for b in s.row_body[r]:
            if b >= 0:
                assert pos[nd + r] > pos[6 * b: 6 * b + 6].max()


def test_unit_ordering_respects_precedence_and_is_complete():
    size = [6, 6, 6, 5, 5]
    adj = [{3}, {3, 4}, {4}, {0, 1}, {1, 2}]
    after = [set(), set(), set(), {0, 1}, {1, 2}]
    order = unit_ordering(size, adj, after)
    assert sorted(order) == list(range(5))
    assert order.index(3) > max(order.index(0), order.index(1))
    assert order.index(4) > max(order.index(1), order.index(2))


def test_redundant_rows_are_found_and_reported():
    with pytest.warns(td.formulations.RedundantConstraintWarning, match="redundant"):
        s = AbsoluteSystem(P.four_bar()[0])
    assert sum(c for _, c in s.removed_rows) == 3
    s2 = AbsoluteSystem(P.chain(n_links=5))
    assert s2.removed_rows == []
