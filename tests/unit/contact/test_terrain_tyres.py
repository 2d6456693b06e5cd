"""TerrainTyres: the point tyre on a terrain: its laws against the documented 1-D ones, its Jacobian against
finite differences (every branch of the slip's denominator, flat ground and a profile road), its refusals."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trackdyn.terrain as T
from trackdyn.contact.tyre import TerrainTyres, longitudinal_force, terrain_table, vertical_force
from trackdyn.formulations.absolute import AbsoluteSystem
from trackdyn.math.quaternion import quat_from_axis_angle
from trackdyn.mbs import Model
from trackdyn.testing.fd import fd_position_jacobian, fd_velocity_jacobian

R, K, C, MU, KREF, VMIN = 0.3, 200e3, 316.0, 0.8, 0.1, 0.1


def _wheel(terrain, pos, quat=(1.0, 0.0, 0.0, 0.0)):
    m = Model()
    m.add_body("w", mass=25.0, inertia=[0.7, 1.2, 0.7], pos=list(pos), quat=list(quat))
    ty = TerrainTyres([0], ["w"], terrain, R, K, C, MU, KREF, VMIN)
    sys_ = AbsoluteSystem(m, providers=[ty])
    return sys_, ty, sys_.initial_state()


def _eval(sys_, ty, q, v):
    sys_.update_kinematics(q, v)
    ty.evaluate(sys_.kin)
    return ty.Q[0, 6:].copy()


@pytest.mark.parametrize("vx, spin", [(2.0, 2.0 / R * 1.05), (2.0, 2.0 / R * 0.9), (0.0, 0.2), (1.0, -1.0)])
def test_upright_wheel_on_flat_ground_follows_the_documented_laws(vx, spin):
    """No side slip on level ground: F_z is vertical_force's, F_x longitudinal_force's, the torque about the
    axle -R F_x (the contact point R below the centre)."""
    sys_, ty, st0 = _wheel(T.Flat(), (0.0, 0.0, R - 0.01))
    v = st0.v.copy()
    v[0, :3] = (vx, 0.0, -0.02)
    v[0, 3:] = (0.0, spin, 0.0)
    Q = _eval(sys_, ty, st0.q, v)
    road = np.zeros((1, 3))
    fz = vertical_force(0.0, R - 0.01, vx, -0.02, 0.0, R, K, C, road, 0.0, 0.0)
    fx = longitudinal_force(fz, spin, R, vx, MU, KREF, VMIN)
    assert fz == pytest.approx(K * 0.01 + C * 0.02)
    assert Q[:3] == pytest.approx([fx, 0.0, fz], rel=1e-12, abs=1e-9)
    assert Q[3:] == pytest.approx([0.0, -R * fx, 0.0], rel=1e-12, abs=1e-9)


def test_side_slip_saturates_on_the_friction_circle():
    """A wheel sliding sideways fast: |F_horizontal| -> μ F_z, opposing the sliding."""
    sys_, ty, st0 = _wheel(T.Flat(), (0.0, 0.0, R - 0.01))
    v = st0.v.copy()
    v[0, :3] = (0.0, 3.0, 0.0)
    Q = _eval(sys_, ty, st0.q, v)
    assert Q[1] < 0 and math.hypot(Q[0], Q[1]) == pytest.approx(MU * K * 0.01 * math.tanh(30.0), rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(x=st.floats(0.0, 6.0), tilt=st.floats(-0.3, 0.3), axis=st.tuples(*[st.floats(-1, 1)] * 3),
       vel=st.tuples(*[st.floats(-3, 3)] * 3), omega=st.tuples(st.floats(-2, 2), st.floats(-12, 12), st.floats(-2, 2)),
       depth=st.floats(0.002, 0.04))
def test_jacobian_matches_finite_differences(x, tilt, axis, vel, omega, depth):
    """∂Q/∂(r, π̄) and ∂Q/∂(ṙ, ω̄) of the wheel against central differences on the manifold, on a sinusoidal
    road (the road's curvature H'' is left out of the Jacobian; the table's samples are 1 mm apart, so the
    differences of 1e-7 m stay on one segment away from its ends)."""
    terrain = T.Flat() + T.Sinusoid(0.05, 2.0, 10.0, x=-3.0)
    s = x + 0.000371  # off the table's samples
    ax = np.array(axis) + np.array([0.0, 0.0, 1e-3])
    quat = quat_from_axis_angle(ax / np.linalg.norm(ax), tilt)
    h = float(terrain.height(np.array([s]), np.array([0.1]))[0])
    sys_, ty, st0 = _wheel(terrain, (s, 0.1, h + R - depth), quat)
    q, v = st0.q.copy(), st0.v.copy()
    v[0, :3], v[0, 3:] = vel, omega
    _eval(sys_, ty, q, v)
    if ty.out[0, 2] <= 0.0:
        return  # the damper pulls the tyre off the road: no force, nothing to differentiate
    Kx, Kv = ty.Kx[0, 6:, 6:].copy(), ty.Kv[0, 6:, 6:].copy()
    fn = lambda q_, v_: _eval(sys_, ty, q_, v_)  # noqa: E731
    Jx = fd_position_jacobian(fn, q, v, [0], eps=1e-7)
    Jv = fd_velocity_jacobian(fn, q, v, [0], eps=1e-7)
    scale = np.abs(Jv).max() + np.abs(Jx).max() * 1e-3
    assert np.abs(Jx - Kx).max() <= 1e-5 * np.abs(Jx).max() + 1e-6 * scale
    assert np.abs(Jv - Kv).max() <= 1e-5 * scale


@pytest.mark.parametrize("vel, omega", [((2.0, 0.3, -0.1), (0.2, 6.0, 0.4)),     # den = |v_x|
                                        ((0.5, 0.1, 0.0), (0.1, 9.0, 0.3)),      # den = |ω| R
                                        ((0.05, 0.01, 0.02), (0.01, 0.1, 0.05))])  # den = v_min
def test_jacobian_each_branch_of_the_slip_denominator(vel, omega):
    terrain = T.Flat()
    ax = np.array([0.3, -0.5, 0.8])
    sys_, ty, st0 = _wheel(terrain, (0.3, 0.1, R - 0.02), quat_from_axis_angle(ax / np.linalg.norm(ax), 0.3))
    q, v = st0.q.copy(), st0.v.copy()
    v[0, :3], v[0, 3:] = vel, omega
    _eval(sys_, ty, q, v)
    Kx, Kv = ty.Kx[0, 6:, 6:].copy(), ty.Kv[0, 6:, 6:].copy()
    fn = lambda q_, v_: _eval(sys_, ty, q_, v_)  # noqa: E731
    Jx = fd_position_jacobian(fn, q, v, [0], eps=1e-7)
    Jv = fd_velocity_jacobian(fn, q, v, [0], eps=1e-7)
    assert np.abs(Jx - Kx).max() <= 1e-6 * np.abs(Jx).max()
    assert np.abs(Jv - Kv).max() <= 1e-6 * np.abs(Jv).max()


def test_terrain_table_is_exact_at_its_samples_and_refuses_what_the_tyre_cannot_run_on():
    t = T.Flat() + T.Bump(0.1, 1.0, x=2.0)
    origin, u, ts, tz = terrain_table(t)
    assert np.allclose(tz, t.height(ts, np.zeros_like(ts)), atol=1e-12)
    assert np.all(np.diff(ts) > 0) and np.diff(ts).max() <= 1e-3 + 1e-12
    with pytest.raises(ValueError, match="inclined Plane"):
        terrain_table(T.Plane.incline(0.1))
    from trackdyn.terrain.ground import with_ground

    with pytest.raises(ValueError, match="Winkler"):
        terrain_table(with_ground(T.Flat(), "winkler"))
