"""Prescribing unknowns of a stored KKT system (integrators/synthesis.py, the tracked synthesis' track step):
the free unknowns must solve the reduced system ``A_ff x_f = b_f - A_fp x_p`` -- checked against a dense NumPy
solve of that system, built independently from the same random matrix."""

import numpy as np
import pytest

from trackdyn.integrators.synthesis import prescribe_rows, prescribed_entries
from trackdyn.linsolve import make_solver
from trackdyn.linsolve.kkt import KKTPattern


def _random_kkt(pattern, rng):
    """A dense symmetric quasi-definite matrix with the pattern's structure, and its stored upper triangle."""
    p = pattern
    n = p.n
    cols = np.repeat(np.arange(n), np.diff(p.Ap))
    r, c = p.perm[p.Ai], p.perm[cols]
    A = np.zeros((n, n))
    vals = rng.normal(size=len(r)) * 0.3
    A[r, c] = vals
    A[c, r] = vals
    nd = 6 * p.n_body
    for i in range(n):
        A[i, i] = 4.0 + rng.random() if i < nd else -(1e-3 + 0.01 * rng.random())
    data = A[r, c].copy()
    return A, data


def test_free_unknowns_solve_the_reduced_system():
    rng = np.random.default_rng(7)
    # four bodies: 0-1 coupled by a force element, 1-2 by a joint, 2-3 by a force element; body 0 on the ground
    pattern = KKTPattern(4, np.array([[0, 1], [2, 3]]), np.array([[0, -1], [0, -1], [1, 2], [1, 2], [1, 2]]),
                         np.array([0, 0, 1, 1, 1]))
    A, data = _random_kkt(pattern, rng)
    n, nd = pattern.n, 24
    kind = np.zeros(n, np.int8)
    kind[0:6] = 1          # body 0's velocity prescribed
    kind[nd:nd + 2] = 2    # its ground joint's rows (they touch body 0 only)
    xf = np.zeros(n)
    xf[0:6] = rng.normal(size=6)
    b = rng.normal(size=n)
    ent, er, ec = prescribed_entries(pattern, kind)
    rhs = b.copy()
    prescribe_rows(ent, er, ec, kind, xf, data, rhs)
    x = np.zeros(n)
    solver = make_solver("direct", pattern)
    solver.factor(data)
    solver.solve(rhs, x)
    free = kind == 0
    fixed = kind == 1
    ref = np.linalg.solve(A[np.ix_(free, free)], b[free] - A[np.ix_(free, fixed)] @ xf[fixed])
    assert np.max(np.abs(x[free] - ref)) < 1e-12 * (1.0 + np.max(np.abs(ref)))
    assert np.array_equal(x[fixed], xf[fixed])      # the prescribed velocities come back exactly
    assert np.all(x[kind == 2] == 0.0)               # and the prescribed multipliers are zero
    # the coupling moved to the right-hand side is not negligible here (the check would pass without it else)
    assert np.max(np.abs(A[np.ix_(free, fixed)] @ xf[fixed])) > 0.1


def test_an_unknown_without_stored_diagonal_is_refused():
    pattern = KKTPattern(2, np.zeros((0, 2), np.int64), np.array([[0, 1]]), np.array([0]))
    kind = np.zeros(pattern.n + 1, np.int8)  # one index past the matrix: no diagonal stored there
    kind[-1] = 1
    with pytest.raises(ValueError, match="no diagonal"):
        prescribed_entries(pattern, kind)
