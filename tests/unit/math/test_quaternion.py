import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from trackdyn.math import (
    matrix_to_quat,
    quat_conj,
    quat_exp_update,
    quat_from_axis_angle,
    quat_mul,
    quat_to_matrix,
    skew,
)

vec4 = arrays(np.float64, 4, elements=st.floats(-1, 1)).filter(lambda a: np.linalg.norm(a) > 0.1)
vec3 = arrays(np.float64, 3, elements=st.floats(-5, 5))


def unit(q):
    return q / np.linalg.norm(q)


@given(vec4)
def test_rotation_matrix_is_proper_orthogonal(q):
    A = quat_to_matrix(unit(q))
    assert np.allclose(A.T @ A, np.eye(3), atol=1e-12)
    assert np.isclose(np.linalg.det(A), 1.0)


@given(vec4, vec4)
def test_product_composes_rotations(p, q):
    p, q = unit(p), unit(q)
    assert np.allclose(quat_to_matrix(quat_mul(p, q)), quat_to_matrix(p) @ quat_to_matrix(q), atol=1e-12)


@given(vec4, vec4, vec4)
def test_product_is_associative(p, q, r):
    assert np.allclose(quat_mul(quat_mul(p, q), r), quat_mul(p, quat_mul(q, r)), atol=1e-12)


@given(vec4)
def test_conjugate_is_inverse(q):
    q = unit(q)
    assert np.allclose(quat_mul(q, quat_conj(q)), [1, 0, 0, 0], atol=1e-12)


@given(vec4)
def test_matrix_round_trip(q):
    q = unit(q)
    q2 = matrix_to_quat(quat_to_matrix(q))
    assert np.allclose(q2, q, atol=1e-9) or np.allclose(q2, -q, atol=1e-9)
    assert np.allclose(quat_to_matrix(q2), quat_to_matrix(q), atol=1e-12)


@given(vec3, vec3)
def test_skew_is_cross_product(a, b):
    assert np.allclose(skew(a) @ b, np.cross(a, b))


@given(vec4, vec3, st.floats(1e-6, 0.5))
def test_exp_map_rotates_about_body_axis(q, w, h):
    """q exp([0, ω̄ h/2]) is the rotation by |ω̄| h about the body axis ω̄ (eq. 2.9)."""
    q = unit(q)
    new = quat_exp_update(q, w, h)
    n = np.linalg.norm(w)
    if n > 0:
        rel = quat_to_matrix(q).T @ quat_to_matrix(new)
        expected = quat_to_matrix(quat_from_axis_angle(w, n * h))
        assert np.allclose(rel, expected, atol=1e-10)
    assert np.isclose(np.linalg.norm(new), 1.0)


def test_exp_map_matches_kinematic_ode():
    """Many small exponential steps agree with q̇ = ½ q ⊗ (0, ω̄) integrated by RK4."""
    q = unit(np.array([0.9, 0.1, -0.3, 0.2]))
    w = np.array([0.3, -1.2, 2.0])
    qe = q.copy()
    for _ in range(1000):
        qe = quat_exp_update(qe, w, 1e-3)

    def f(x):
        return 0.5 * quat_mul(x, np.concatenate([[0.0], w]))

    x = q.copy()
    h = 1e-3
    for _ in range(1000):
        k1 = f(x)
        k2 = f(x + h / 2 * k1)
        k3 = f(x + h / 2 * k2)
        k4 = f(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    assert np.allclose(qe, x / np.linalg.norm(x), atol=1e-10)
