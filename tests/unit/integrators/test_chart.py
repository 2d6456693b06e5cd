"""Chart maps on the body group and the Adams weights, against independent oracles."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from trackdyn.integrators._chart_kernels import chart_log, chart_rate, j_times, jt_times, minv_times
from trackdyn.integrators.abm import adams_weights
from trackdyn.math.quaternion import quat_conj, quat_mul
from trackdyn.mbs import _kernels as MK
from trackdyn.testing.fd import random_state


def _exp(q0, x):
    out = np.empty_like(q0)
    MK.advance_positions_dq(q0, x, out)
    return out


@given(st.integers(0, 2**31 - 1), st.floats(0.0, 3.0))
def test_chart_log_inverts_the_exponential_map(seed, scale):
    rng = np.random.default_rng(seed)
    q0, _ = random_state(rng, 3)
    x = rng.normal(size=(3, 6))
    # rotation vectors up to |θ| < π (the chart's domain)
    th = x[:, 3:]
    n = np.linalg.norm(th, axis=1, keepdims=True)
    x[:, 3:] = th / n * np.minimum(n, 1.0) * scale
    back = np.empty_like(x)
    chart_log(q0, _exp(q0, x), back)
    assert np.allclose(back, x, atol=1e-12)


@given(st.integers(0, 2**31 - 1))
def test_chart_rate_is_the_time_derivative_of_the_chart_coordinates(seed):
    """ẋ = L(x) v: for a path x(t), the body angular velocity of q0 ⊕ x(t) mapped by L gives back ẋ."""
    rng = np.random.default_rng(seed)
    q0, _ = random_state(rng, 2)
    x = rng.normal(scale=0.8, size=(2, 6))
    xd = rng.normal(size=(2, 6))
    eps = 1e-6
    qp, qm, q = _exp(q0, x + eps * xd), _exp(q0, x - eps * xd), _exp(q0, x)
    v = np.zeros((2, 6))
    for b in range(2):
        rho_dot = (qp[b, 3:] - qm[b, 3:]) / (2 * eps)
        v[b, 3:] = 2.0 * quat_mul(quat_conj(q[b, 3:]), rho_dot)[1:]  # ω̄ = 2 vec(ρ* ρ̇)
        v[b, :3] = xd[b, :3]
    dx = np.empty_like(x)
    chart_rate(x, v, dx)
    assert np.allclose(dx, xd, atol=1e-8)


def test_chart_rate_small_angle_series_is_continuous():
    v = np.array([[0.0, 0.0, 0.0, 0.3, -0.2, 0.5]])
    out = []
    for t in (1e-4, 1e-3 * 0.999, 1e-3 * 1.001):
        x = np.array([[0.0, 0.0, 0.0, t, 0.5 * t, -t]])
        d = np.empty_like(x)
        chart_rate(x, v, d)
        out.append(d)
    assert np.allclose(out[1], out[2], atol=1e-9)


def test_j_products_are_transposes():
    from trackdyn.formulations import AbsoluteSystem
    from trackdyn.testing import problems as P

    s = AbsoluteSystem(P.chain(n_links=5))
    rng = np.random.default_rng(3)
    q, v = s.q0, rng.normal(size=s.v0.shape)
    s.update_kinematics(q, v)
    s.update_drivers(0.0)
    s.eval_constraints()
    lam = rng.normal(size=s.nc)
    Jv = np.zeros(s.nc)
    JTl = np.zeros_like(v)
    j_times(s.J, s.row_body, v, Jv)
    jt_times(s.J, s.row_body, lam, JTl)
    assert np.isclose(lam @ Jv, np.sum(JTl * v), rtol=1e-12)
    f = rng.normal(size=v.shape)
    out = np.zeros_like(f)
    minv_times(s.mass, np.linalg.inv(s.inertia), f, out)
    assert np.allclose(out[:, :3] * s.mass[:, None], f[:, :3])
    assert np.allclose(np.einsum("bij,bj->bi", s.inertia, out[:, 3:]), f[:, 3:])


def test_adams_weights_reproduce_the_classical_tableaux():
    # AB3 and AM4 on a uniform grid (coefficients as in Hairer-Nørsett-Wanner, Table III.1.1/1.2)
    assert np.allclose(adams_weights([0.0, -1.0, -2.0]) * 12, [23, -16, 5])
    assert np.allclose(adams_weights([1.0, 0.0, -1.0, -2.0]) * 24, [9, 19, -5, 1])
    assert np.allclose(adams_weights([0.0]), [1.0])
    assert np.allclose(adams_weights([1.0, 0.0]), [0.5, 0.5])


@given(st.integers(0, 2**31 - 1), st.integers(1, 6))
def test_adams_weights_integrate_polynomials_exactly_on_any_grid(seed, m):
    rng = np.random.default_rng(seed)
    nodes = np.concatenate([[0.0], -np.cumsum(rng.uniform(0.3, 2.0, size=m - 1))])
    w = adams_weights(nodes)
    c = rng.normal(size=m)  # polynomial of degree m - 1
    exact = sum(c[k] / (k + 1) for k in range(m))
    assert np.isclose(w @ np.polyval(c[::-1], nodes), exact, rtol=1e-9, atol=1e-9)
