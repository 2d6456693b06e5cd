"""The primal Newton solver of the NSC step (``contact_solver="newton"``): its kernels against finite
differences and closed forms, and its solution against the first-order solvers'.

docs/contact-nsc.md ("The Newton solver") has the equations.
"""

import numpy as np
import pytest

import trackdyn as td
from trackdyn import terrain
from trackdyn.contact import Material, shapes
from trackdyn.contact import _nsc_newton_kernels as NN
from trackdyn.contact.nsc import NscContact


def _random_blocks(rng, m, compliant):
    kind = rng.integers(0, 3, m)
    mu = rng.uniform(0.2, 1.0, m)
    qt = rng.uniform(0.5, 2.0, m)
    qn = qt * (rng.uniform(1.0, 5.0, m) if compliant else 1.0)
    qn = np.where(kind == 0, qn, qt)  # rolling and spinning blocks are isotropic
    pg = rng.normal(size=3 * m)
    return kind, mu, qn, qt, pg


@pytest.mark.parametrize("compliant", [False, True])
def test_psi_gradient_is_minus_the_impulse_and_its_hessian_is_w(compliant):
    """∇ψ = -γ(u) and ∂γ/∂u = -W, by central differences, on every contact kind, in every region (inside,
    on the cone's side, at its polar)."""
    rng = np.random.default_rng(7)
    m = 60
    kind, mu, qn, qt, pg = _random_blocks(rng, m, compliant)
    gamma = np.empty(3 * m)
    W = np.empty((m, 3, 3))
    h = 1e-6
    for _ in range(5):
        u = rng.normal(scale=2.0, size=3 * m)
        NN.cone_terms(m, kind, mu, qn, qt, pg, u, gamma, W, np.empty(m, np.int64))
        g0, W0 = gamma.copy(), W.copy()
        np.testing.assert_allclose(W0, np.transpose(W0, (0, 2, 1)), atol=1e-14)
        assert np.all(np.linalg.eigvalsh(W0) > -1e-12)
        for i in range(m):
            for d in range(3):
                e = np.zeros(3 * m)
                e[3 * i + d] = h
                gp, gm = np.empty(3 * m), np.empty(3 * m)
                # ψ is summed over all contacts: only contact i changes
                psi_p = NN.cone_terms(m, kind, mu, qn, qt, pg, u + e, gp, W, np.empty(m, np.int64))
                psi_m = NN.cone_terms(m, kind, mu, qn, qt, pg, u - e, gm, W, np.empty(m, np.int64))
                assert abs((psi_p - psi_m) / (2 * h) + g0[3 * i + d]) < 1e-6
                col = (gp[3 * i: 3 * i + 3] - gm[3 * i: 3 * i + 3]) / (2 * h)
                np.testing.assert_allclose(col, -W0[i, :, d], atol=1e-6)


def test_impulse_is_the_projection_in_the_metric():
    """γ = argmin over the cone of (γ - z)ᵀR(γ - z), z = R⁻¹(pg - u): checked against a brute-force search
    over the cone's surface and interior for a compliant contact (qn ≠ qt)."""
    rng = np.random.default_rng(3)
    mu, qn, qt = 0.6, 3.0, 1.0
    for _ in range(20):
        u = rng.normal(size=3)
        pg = rng.normal(size=3)
        gamma, W = np.empty(3), np.empty((1, 3, 3))
        NN.cone_terms(1, np.zeros(1, np.int64), np.array([mu]), np.array([qn]), np.array([qt]), pg, u, gamma, W, np.empty(1, np.int64))
        z = (pg - u) / np.array([qn, qt, qt])
        R = np.array([qn, qt, qt])

        def cost(g):
            return float(np.sum(R * (g - z) ** 2))

        # candidates: the cone sampled in (γ_n, |γ_t| ≤ μ γ_n, angle)
        gn = np.linspace(0, 3, 301)[:, None, None]
        frac = np.linspace(0, 1, 41)[None, :, None]
        ang = np.linspace(0, 2 * np.pi, 73)[None, None, :]
        cand = np.stack(np.broadcast_arrays(gn, mu * gn * frac * np.cos(ang), mu * gn * frac * np.sin(ang)), -1)
        best = np.min(np.sum(R * (cand.reshape(-1, 3) - z) ** 2, axis=1))
        assert abs(gamma[1] ** 2 + gamma[2] ** 2) ** 0.5 <= mu * gamma[0] + 1e-12
        assert cost(gamma) <= best + 1e-9


def test_line_search_finds_the_minimum_along_the_direction():
    rng = np.random.default_rng(11)
    m = 30
    kind, mu, qn, qt, pg = _random_blocks(rng, m, True)
    u = rng.normal(size=3 * m)
    du = rng.normal(size=3 * m)
    a2 = 0.7
    gamma, W = np.empty(3 * m), np.empty((m, 3, 3))

    def phi(alpha):  # F along the direction, up to a constant, with a1 chosen so that α = 0 descends
        return a1 * alpha + 0.5 * a2 * alpha ** 2 + NN.cone_terms(m, kind, mu, qn, qt, pg, u + alpha * du, gamma, W, np.empty(m, np.int64))

    NN.cone_terms(m, kind, mu, qn, qt, pg, u, gamma, W, np.empty(m, np.int64))
    a1 = float(gamma @ du) - 5.0  # φ'(0) = a1 - γ·du = -5
    alpha, d0 = NN.line_search(m, kind, mu, qn, qt, pg, u, du, a1, a2, np.empty(3 * m), 50, 1e-12)
    assert abs(d0 + 5.0) < 1e-12
    grid = np.linspace(0, 4 * max(alpha, 1.0), 4001)
    vals = np.array([phi(a) for a in grid])
    assert phi(alpha) <= vals.min() + 1e-10
    assert abs((phi(alpha + 1e-6) - phi(alpha - 1e-6)) / 2e-6) < 1e-5


def test_scatter_hessian_adds_dt_w_d_to_both_blocks_and_their_coupling():
    """Σ DᵢᵀWᵢDᵢ scattered into a two-body KKT pattern equals the dense product (diagonal blocks' upper
    triangles and the coupling block, for either body order)."""
    from trackdyn.linsolve.kkt import KKTPattern

    rng = np.random.default_rng(5)
    pat = KKTPattern(3, np.array([[0, 2]]), np.zeros((0, 2), np.int64), np.zeros(0, np.int64))
    pidx = np.full((3, 3), -1, np.int64)
    pidx[0, 2] = pidx[2, 0] = 0
    c_body = np.array([[0, 2], [2, 0], [1, -1]])
    c_D = rng.normal(size=(3, 3, 12))
    A = rng.normal(size=(3, 3, 3))
    W = A @ np.transpose(A, (0, 2, 1))
    data = np.zeros(pat.nnz)
    NN.scatter_hessian(3, c_body, c_D, W, pat.body_slot, pidx, pat.pair_slot, data)
    dense = np.zeros((18, 18))
    for i in range(3):
        idx = [6 * b + k if b >= 0 else -1 for b in c_body[i] for k in range(6)]
        blk = c_D[i].T @ W[i] @ c_D[i]
        for a in range(12):
            for c in range(12):
                if idx[a] >= 0 and idx[c] >= 0:
                    dense[idx[a], idx[c]] += blk[a, c]
    for b in range(3):
        for a in range(6):
            for c in range(a, 6):
                assert abs(data[pat.body_slot[b, a, c]] - dense[6 * b + a, 6 * b + c]) < 1e-12
    for a in range(6):
        for c in range(6):
            assert abs(data[pat.pair_slot[0, a, c]] - dense[a, 12 + c]) < 1e-12


def _stack(solver, n_boxes=3):
    m = td.Model()
    mat = Material("wood", friction=0.5)
    nsc = NscContact(m, terrain=terrain.Flat(material=mat))
    z = 0.0
    for k in range(n_boxes):
        a, hz = 0.4 - 0.05 * k, 0.1
        inertia = [(a * a + hz * hz) / 12, (a * a + hz * hz) / 12, a * a / 6]
        b = m.add_body(f"box{k}", mass=1.0 + k, inertia=inertia, pos=[0.02 * k, 0.0, z + hz / 2 + 0.002])
        nsc.add_shape(b, shapes.Box([a, a, hz]), material=mat)
        z += hz
    return td.Simulation(m, integrator="nsc-euler", step=1e-3, providers=[nsc], monitor=False, contact_solver=solver,
                         contact_tolerance=1e-10, contact_max_iterations=200000)


def test_newton_steps_a_stack_as_apgd_does():
    """Three boxes dropped 2 mm onto each other and the ground (box-box contacts couple two bodies in the
    Hessian): the Newton solver's trajectory is APGD's to the contact tolerance's order."""
    runs = {}
    for solver in ("apgd", "newton"):
        sim = _stack(solver)
        for _ in range(300):
            sim.step()
            assert sim.integrator.last["contact_residual"] <= 1e-10
        runs[solver] = sim.state.q.copy(), sim.state.v.copy()
        if solver == "newton":
            assert sim.integrator.counters["newton_iterations"] > 0
            assert sim.integrator.counters["contact_unconverged"] == 0
    np.testing.assert_allclose(runs["newton"][0], runs["apgd"][0], atol=1e-8)
    np.testing.assert_allclose(runs["newton"][1], runs["apgd"][1], atol=1e-6)


@pytest.mark.parametrize("bad", [0.0, -1e-3, "1e-3", True, float("nan")])
def test_newton_regularization_must_be_positive(bad):
    m = td.Model()
    b = m.add_body("b", mass=1.0, inertia=[0.1] * 3, pos=[0, 0, 0.2])
    nsc = NscContact(m, terrain=terrain.Flat())
    nsc.add_shape(b, shapes.Sphere(0.1))
    with pytest.raises(ValueError, match="newton_regularization"):
        td.Simulation(m, integrator="nsc-euler", step=1e-3, providers=[nsc], contact_solver="newton",
                      newton_regularization=bad)
