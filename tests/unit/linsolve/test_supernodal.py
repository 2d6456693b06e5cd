"""The supernodal LDLᵀ (``direct``) against dense algebra and the scalar LDLᵀ (``direct-scalar``).

The pattern imitates a tracked vehicle: a chassis, two closed loops of
"shoes" pinned to each other by 5-row joints, "wheels" on 5-row joints to the
chassis, and contact coupling blocks between wheels and shoes that are zero
in some steps and not in others (the supernodal factorisation skips zero row
units and the fill they would cause; a block that switches on must be
factored again, one that switches off must not leave stale values).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trackdyn.linsolve import SOLVERS, make_solver
from trackdyn.linsolve.kkt import DirectSolver, KKTPattern, ScalarDirectSolver


def vehicle_like_pattern(n_shoes=10, n_wheels=3, wheel_rows=5):
    """Pattern, contact pair list and joint rows of a small two-loop 'vehicle' (``wheel_rows`` rows in each
    wheel's joint to the chassis)."""
    bodies = 1
    pairs, row_body, row_unit = [], [], []
    contact = []
    unit = 0
    for _side in range(2):
        shoes = list(range(bodies, bodies + n_shoes))
        bodies += n_shoes
        wheels = list(range(bodies, bodies + n_wheels))
        bodies += n_wheels
        for k, s in enumerate(shoes):
            nxt = shoes[(k + 1) % n_shoes]
            for _ in range(5):
                row_body.append((s, nxt))
                row_unit.append(unit)
            unit += 1
        for k, w in enumerate(wheels):
            for _ in range(wheel_rows):
                row_body.append((0, w))
                row_unit.append(unit)
            unit += 1
            for s in shoes[2 * k: 2 * k + 3]:
                contact.append((min(w, s), max(w, s)))
    pairs = sorted(set(contact))
    pat = KKTPattern(bodies, np.array(pairs, dtype=np.int64).reshape(-1, 2), np.array(row_body, dtype=np.int64),
                     np.array(row_unit, dtype=np.int64))
    return pat, pairs, np.array(row_body)


def kkt_values(pat, pairs, row_body, rng, active):
    """Stored values of a quasi-definite KKT matrix; contact blocks of inactive pairs are exactly zero."""
    nb_ = pat.n_body
    nd = 6 * nb_
    n = pat.n
    K = np.zeros((n, n))
    for b in range(nb_):
        A = rng.normal(size=(6, 6))
        K[6 * b: 6 * b + 6, 6 * b: 6 * b + 6] = A @ A.T + 6.0 * np.eye(6)
    for (i, j), on in zip(pairs, active):
        if on:
            B = 0.3 * rng.normal(size=(6, 6))
            K[6 * i: 6 * i + 6, 6 * j: 6 * j + 6] = B
            K[6 * j: 6 * j + 6, 6 * i: 6 * i + 6] = B.T
            # keep H positive definite: the coupling adds to both diagonal blocks
            for b in (i, j):
                K[6 * b: 6 * b + 6, 6 * b: 6 * b + 6] += 2.0 * np.eye(6)
    for r, (i, j) in enumerate(row_body):
        for b in (i, j):
            K[nd + r, 6 * b: 6 * b + 6] = rng.normal(size=6)
            K[6 * b: 6 * b + 6, nd + r] = K[nd + r, 6 * b: 6 * b + 6]
        K[nd + r, nd + r] = -1e-12
    cols = np.repeat(np.arange(n), np.diff(pat.Ap))
    data = K[pat.perm[pat.Ai], pat.perm[cols]]
    return K, data


def test_direct_is_the_supernodal_solver_and_the_scalar_one_is_registered():
    assert SOLVERS["direct"] is DirectSolver
    assert SOLVERS["direct-scalar"] is ScalarDirectSolver


@pytest.mark.parametrize("wheel_rows", [5, 1])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_supernodal_matches_dense_and_scalar_as_contacts_switch(wheel_rows, seed):
    """With 1-row wheel joints some supernodes are one column wide (the factorisation's single-column paths)."""
    rng = np.random.default_rng(seed)
    pat, pairs, row_body = vehicle_like_pattern(wheel_rows=wheel_rows)
    sup = make_solver("direct", pat)
    assert (np.min(sup.sym.sn_w) == 1) == (wheel_rows == 1)
    sca = make_solver("direct-scalar", pat)
    assert sup.sym.n_sn < len(pat.unit_sizes)  # units were merged into supernodes
    patterns = [rng.random(len(pairs)) < 0.5, np.zeros(len(pairs), bool), np.ones(len(pairs), bool),
                rng.random(len(pairs)) < 0.3]
    flagged = []
    for active in patterns:
        K, data = kkt_values(pat, pairs, row_body, rng, active)
        b = rng.normal(size=pat.n)
        x = np.zeros(pat.n)
        xs = np.zeros(pat.n)
        sup.factor(data)
        sup.solve(b, x)
        sca.factor(data)
        sca.solve(b, xs)
        xd = np.linalg.solve(K, b)
        scale = np.linalg.norm(xd)
        assert np.linalg.norm(K @ x - b) <= 1e-11 * np.linalg.norm(b) * max(1.0, np.abs(K).max())
        assert np.linalg.norm(x - xd) <= 1e-9 * scale
        assert np.linalg.norm(x - xs) <= 1e-9 * scale
        # same pivots (elimination order and values) as the scalar factorisation
        assert np.allclose(sup.D, sca.D, rtol=1e-9, atol=1e-9 * np.abs(sca.D).max())
        assert np.sum(sup.D > 0) == 6 * pat.n_body and np.sum(sup.D < 0) == len(row_body)
        flagged.append(int(sup.flag.sum()))
    # the zero contact blocks (and their fill) were skipped, and switched back on when non-zero
    assert flagged[1] < flagged[2]


def test_zero_pivot_is_reported():
    pat, pairs, row_body = vehicle_like_pattern(n_shoes=4, n_wheels=1)
    rng = np.random.default_rng(3)
    _, data = kkt_values(pat, pairs, row_body, rng, np.ones(len(pairs), bool))
    data[:] = 0.0
    with pytest.raises(np.linalg.LinAlgError, match="pivot"):
        DirectSolver(pat).factor(data)
