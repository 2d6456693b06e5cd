"""Constraint primitives: Jacobian, ∂C/∂t and γ against finite differences on random poses."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trackdyn.math import quat_mul
from trackdyn.mbs import _force_kernels as FK
from trackdyn.mbs import _kernels as MK
from trackdyn.testing.fd import fd_position_jacobian, random_state

TYPES = {"DP1": MK.DP1, "DP2": MK.DP2, "D": MK.D, "CD": MK.CD, "DP1R": MK.DP1R}


class Rows:
    """One primitive row between two random bodies (or a body and the ground)."""

    def __init__(self, kind, rng, ground_i=False):
        self.type = np.array([TYPES[kind]])
        self.body = np.array([[-1 if ground_i else 0, 1]])
        self.a = rng.normal(size=(1, 2, 3))
        self.s = rng.normal(size=(1, 2, 3))
        self.c = rng.normal(size=(1, 3))
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        w = np.cross(u, rng.normal(size=3))
        w /= np.linalg.norm(w)
        self.u = np.array([[u, w]])
        self.f = rng.normal(size=(1, 3))

    def eval(self, q, v, f=None, gamma=False):
        nb = q.shape[0]
        pos, R, vel, om = np.zeros((nb + 1, 3)), np.zeros((nb + 1, 3, 3)), np.zeros((nb + 1, 3)), np.zeros((nb + 1, 3))
        MK.body_kinematics(q, v, pos, R, vel, om)
        phi, J, pt, g = np.zeros(1), np.zeros((1, 12)), np.zeros(1), np.zeros(1)
        MK.constraint_eval(self.type, self.body, self.a, self.s, self.c, self.u,
                           self.f if f is None else f, pos, R, vel, om, gamma, phi, J, pt, g)
        return phi, J, pt, g


def motion(q, v, acc, t, n=400):
    """Poses at time t under constant (r̈, ω̄̇), quaternion by RK4 substeps."""
    out = q.copy()
    out[:, :3] = q[:, :3] + v[:, :3] * t + 0.5 * acc[:, :3] * t * t
    h = t / n
    for b in range(q.shape[0]):
        x = q[b, 3:].copy()
        tau = 0.0

        def f(x, tau):
            w = v[b, 3:] + acc[b, 3:] * tau
            return 0.5 * quat_mul(x, np.concatenate([[0.0], w]))

        for _ in range(n):
            k1 = f(x, tau)
            k2 = f(x + h / 2 * k1, tau + h / 2)
            k3 = f(x + h / 2 * k2, tau + h / 2)
            k4 = f(x + h * k3, tau + h)
            x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            tau += h
        out[b, 3:] = x / np.linalg.norm(x)
    return out


seeds = st.integers(0, 2**31 - 1)


@pytest.mark.parametrize("kind", list(TYPES))
@pytest.mark.parametrize("ground_i", [False, True])
@given(seed=seeds)
def test_jacobian_matches_finite_differences(kind, ground_i, seed):
    rng = np.random.default_rng(seed)
    rows = Rows(kind, rng, ground_i)
    q, v = random_state(rng, 2)
    _, J, _, _ = rows.eval(q, v)
    fd = fd_position_jacobian(lambda qq, vv: rows.eval(qq, vv)[0], q, v, rows.body[0], eps=1e-6)
    if ground_i:  # columns of the ground are never scattered
        J[:, :6] = 0.0
    assert np.allclose(J, fd, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(J).max()))


@pytest.mark.parametrize("kind", list(TYPES))
@given(seed=seeds)
def test_time_derivative_matches_finite_differences(kind, seed):
    """∂C/∂t with the driver f(t) = f + ḟ t + ½ f̈ t² (θ(t) for DP1R)."""
    rng = np.random.default_rng(seed)
    rows = Rows(kind, rng)
    q, v = random_state(rng, 2)
    f0 = rows.f.copy()
    _, _, pt, _ = rows.eval(q, v)
    eps = 1e-6

    def at(tt):
        f = f0.copy()
        f[0, 0] = f0[0, 0] + f0[0, 1] * tt + 0.5 * f0[0, 2] * tt * tt
        return rows.eval(q, v, f)[0][0]

    assert np.isclose(pt[0], (at(eps) - at(-eps)) / (2 * eps), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind", list(TYPES))
@given(seed=seeds)
def test_gamma_is_the_acceleration_right_hand_side(kind, seed):
    """C̈ = J v̇ - γ along a motion with constant accelerations."""
    rng = np.random.default_rng(seed)
    rows = Rows(kind, rng)
    q, v = random_state(rng, 2)
    acc = rng.normal(size=(2, 6))
    f0 = rows.f.copy()
    _, J, _, g = rows.eval(q, v, gamma=True)
    eps = 2e-3

    def phi_at(tt):
        f = f0.copy()
        f[0, 0] = f0[0, 0] + f0[0, 1] * tt + 0.5 * f0[0, 2] * tt * tt
        return rows.eval(motion(q, v, acc, tt), v, f)[0][0]

    cdd = (phi_at(eps) - 2 * phi_at(0.0) + phi_at(-eps)) / eps**2
    jv = J[0] @ acc.ravel()
    assert np.isclose(jv - g[0], cdd, rtol=1e-4, atol=1e-4 * (1 + abs(jv) + abs(g[0])))


@pytest.mark.parametrize("kind", list(TYPES))
@given(seed=seeds)
def test_constraint_forces_and_their_stiffness(kind, seed):
    """The generalized constraint force is -Jᵀλ and its position Jacobian matches FD."""
    rng = np.random.default_rng(seed)
    rows = Rows(kind, rng)
    q, v = random_state(rng, 2)
    lam = rng.normal(size=1) * 10

    def forces(qq, vv):
        nb = qq.shape[0]
        pos, R, vel, om = np.zeros((nb + 1, 3)), np.zeros((nb + 1, 3, 3)), np.zeros((nb + 1, 3)), np.zeros((nb + 1, 3))
        MK.body_kinematics(qq, vv, pos, R, vel, om)
        Q, Kx, Kv = np.zeros((1, 12)), np.zeros((1, 12, 12)), np.zeros((1, 12, 12))
        FK.constraint_stiffness_eval(rows.type, rows.body, rows.a, rows.s, rows.c, rows.u, rows.f, lam,
                                     pos, R, Q, Kx, Kv)
        return Q, Kx

    Q, Kx = forces(q, v)
    _, J, _, _ = rows.eval(q, v)
    assert np.allclose(Q[0], -J[0] * lam[0], rtol=1e-10, atol=1e-10 * np.abs(Q).max())
    fd = fd_position_jacobian(lambda qq, vv: forces(qq, vv)[0][0], q, v, rows.body[0])
    assert np.allclose(Kx[0], fd, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(fd).max()))
