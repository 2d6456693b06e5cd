"""Subsystem synthesis (kim-2012) against the absolute formulation of the same model.

Oracle: :class:`~trackdyn.formulations.absolute.AbsoluteSystem` of the 1/6
robot's Model (same bodies, joints, spring-damper and tyre provider), its
mass matrix, constraint Jacobian, forces and γ assembled densely. The
effective mass and force of the subsystem are that system's Schur complement
on the base; the accelerations its KKT solution.
"""

from __future__ import annotations

import numpy as np
import pytest

from trackdyn.contact.tyre import road_height, vertical_force
from trackdyn.experiments.synthesis import rms_errors, robot_1_6
from trackdyn.formulations.synthesis import Subsystem, SynthesisSystem


def _rot_y(th):
    c, s = np.cos(th), np.sin(th)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _quat(R):
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return np.array([w, x, y, z])


@pytest.fixture(scope="module")
def robot():
    return robot_1_6()


def _state(robot, dz=0.012, vz=-0.31, th=0.07, thd=1.3, t=3.0):
    """A consistent, generic state: chassis moved and moving, housing turned and turning, tyre in contact."""
    sys_ = robot.synthesis()
    q0, v0 = sys_.q0_base.copy(), sys_.v0_base.copy()
    q1, v1 = sys_.q1_init.copy(), sys_.v1_init.copy()
    pivot = robot.model.joints[1].point
    R = _rot_y(th)
    q0[2] += dz
    v0[2] = vz
    p = pivot + np.array([0, 0, dz])
    q1[0, :3] = p + R @ (q1[0, :3] - pivot)
    q1[0, 3:] = _quat(R)
    w = np.array([0.0, thd, 0.0])
    v1[0, :3] = v0[:3] + np.cross(w, q1[0, :3] - p)
    v1[0, 3:] = R.T @ w
    return sys_, t, q0, v0, q1, v1


def _absolute_kkt(robot, t, q0, v0, q1, v1):
    """Dense M, J, f, γ of the absolute formulation at the state (bodies: chassis, housing)."""
    a = robot.absolute()
    q = np.vstack([q0, q1[0]])
    v = np.vstack([v0, v1[0]])
    state = a.initial_state()
    state.q, state.v, state.t = q, v, t
    a.update_kinematics(q, v)
    data = a.base_data.copy()
    f = a.eval_forces(t, v, 0.0, 0.0, data, state, 0.0).copy()
    a.update_drivers(t)
    a.eval_constraints(want_gamma=True)
    nb = a.nb
    M = np.zeros((6 * nb, 6 * nb))
    for b in range(nb):
        M[6 * b:6 * b + 3, 6 * b:6 * b + 3] = a.mass[b] * np.eye(3)
        M[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = a.inertia[b]
    J = np.zeros((a.nc, 6 * nb))
    for r in range(a.nc):
        for side in range(2):
            b = a.row_body[r, side]
            if b >= 0:
                J[r, 6 * b:6 * b + 6] += a.J[r, 6 * side:6 * side + 6]
    pivot_rows = a.joint_rows[[j.name for j in robot.model.joints].index("pivot")]
    return a, M, J, f.ravel(), a.gamma.copy(), pivot_rows


def test_effective_mass_and_force_are_the_schur_complement(robot):
    sys_, t, q0, v0, q1, v1 = _state(robot)
    _, M, J, f, gamma, rows = _absolute_kkt(robot, t, q0, v0, q1, v1)
    # subsystem block: the housing's 6 coordinates and the pivot's rows; coupling to the base through Φ0
    Ms, Phib, Phi0 = M[6:, 6:], J[rows][:, 6:], J[rows][:, :6]
    K = np.block([[Ms, Phib.T], [Phib, np.zeros((len(rows), len(rows)))]])
    C = np.vstack([np.zeros((6, 6)), Phi0])
    M_schur = -C.T @ np.linalg.solve(K, C)
    g_schur = f[:6] - C.T @ np.linalg.solve(K, np.concatenate([f[6:], gamma[rows]]))
    # the base's own gravity and gyroscopic force are the base equation's, not the subsystem's
    w0 = v0[3:]
    g_own = np.concatenate([sys_.m0 * sys_.gravity, -np.cross(w0, sys_.I0 @ w0)])
    assert np.abs(M_schur).max() > 1.0 and np.abs(g_schur).max() > 100.0  # a state where both matter
    for coords in ("cartesian", "joint"):
        M_eff, P_eff = sys_.effective(coords, t, q0, v0, q1, v1)
        np.testing.assert_allclose(M_eff, M_schur, rtol=0, atol=1e-10 * np.abs(M_schur).max(), err_msg=coords)
        np.testing.assert_allclose(P_eff + g_own, g_schur, rtol=0, atol=1e-10 * np.abs(g_schur).max(),
                                   err_msg=coords)


def test_accelerations_match_the_absolute_formulation(robot):
    sys_, t, q0, v0, q1, v1 = _state(robot)
    _, M, J, f, gamma, _ = _absolute_kkt(robot, t, q0, v0, q1, v1)
    nc = J.shape[0]
    x = np.linalg.solve(np.block([[M, J.T], [J, np.zeros((nc, nc))]]), np.concatenate([f, gamma]))
    acc = x[:12].reshape(2, 6)
    scale = np.abs(acc).max()
    assert scale > 1.0
    a0, a1 = sys_.accelerations("cartesian", t, q0, v0, q1, v1)
    np.testing.assert_allclose(a0, acc[0], rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(a1[0], acc[1], rtol=0, atol=1e-10 * scale)
    a0j, thdd = sys_.accelerations("joint", t, q0, v0, q1, v1)
    np.testing.assert_allclose(a0j, acc[0], rtol=0, atol=1e-10 * scale)
    # θ̈ = axis · (ω̇1 - ω̇0), world frame (ω̇_w = R ω̄̇)
    R0 = sys_._R(q0)
    R1 = sys_._R(q1[0])
    axis = np.array([0.0, 1.0, 0.0])
    thdd_abs = axis @ (R1 @ acc[1, 3:] - R0 @ acc[0, 3:])
    assert abs(thdd[0] - thdd_abs) <= 1e-10 * max(1.0, abs(thdd_abs))


def test_static_equilibrium_at_the_start(robot):
    """The spring's free angle and the tyre's deflection balance the corner: nothing accelerates at t = 0."""
    sys_ = robot.synthesis()
    for coords in ("cartesian", "joint"):
        a0, sub = sys_.accelerations(coords)
        assert np.abs(a0).max() < 1e-9 and np.abs(sub).max() < 1e-9


def test_four_models_give_the_same_chassis_motion(robot):
    """kim-2012 Fig. 7: the four models' chassis z agree; each against the joint explicit model at h = 0.7 ms."""
    sys_ = robot.synthesis()
    ref = sys_.run("joint", "explicit", 7e-4, 3.0)
    assert ref.stable and np.ptp(ref.out[:, 0]) > 5e-3  # the road moves the chassis by more than 5 mm
    for coords, scheme in (("cartesian", "explicit"), ("cartesian", "explicit-implicit"),
                           ("joint", "explicit-implicit")):
        run = sys_.run(coords, scheme, 7e-4, 3.0)
        assert run.stable, (coords, scheme)
        pos = rms_errors(run, ref)[0]
        # explicit vs explicit: both third order, the difference is round-off and partitioning (1e-9 m);
        # HHT is second order with α = -0.2 damping: h² ω² ~ 1e-3 relative on the 70 rad/s wheel-hop mode
        tol = 1e-8 if scheme == "explicit" else 1e-4
        assert pos < tol * 10, (coords, scheme, pos)


def test_explicit_model_diverges_beyond_its_stability_limit(robot):
    """AB3 is conditionally stable: a step far past 0.545/|λ| of the damper mode blows the run up."""
    sys_ = robot.synthesis()
    run = sys_.run("joint", "explicit", 0.05, 3.0)
    assert not run.stable


def test_refuses_a_joint_not_from_the_base(robot):
    sub = Subsystem("housing", "slide", "suspension", (0, 0, 0), 0.3, 1e5, 0.0)
    with pytest.raises(ValueError, match="must be a Revolute"):
        SynthesisSystem(robot.model, "chassis", [sub], robot.road, base_joint="slide")


def test_tyre_law():
    road = np.zeros((0, 3))
    # flat road: F = k δ + c δ̇ in contact, zero when lifted off or pulled apart
    assert vertical_force(0.0, 0.29, 0.0, -0.1, 0.0, 0.3, 2e5, 300.0, road, 0.0, 0.0) == pytest.approx(
        2e5 * 0.01 + 300.0 * 0.1)
    assert vertical_force(0.0, 0.31, 0.0, 0.0, 0.0, 0.3, 2e5, 300.0, road, 0.0, 0.0) == 0.0
    assert vertical_force(0.0, 0.2999, 0.0, 10.0, 0.0, 0.3, 2e5, 300.0, road, 0.0, 0.0) == 0.0
    # faded road: zero before the start, slope consistent with the height
    sines = np.array([[0.02, 3.0, 0.4], [0.01, 7.0, 1.0]])
    assert road_height(-1.0, sines, 2.0) == (0.0, 0.0)
    for s in (0.5, 1.9, 3.0):
        z1, _ = road_height(s + 1e-6, sines, 2.0)
        z0, _ = road_height(s - 1e-6, sines, 2.0)
        assert road_height(s, sines, 2.0)[1] == pytest.approx((z1 - z0) / 2e-6, rel=1e-6)


def _two_corner_model():
    """A free chassis (no base joint) with two housings on revolutes about different axes, springs, tyres."""
    from trackdyn.contact.tyre import TyreForces
    from trackdyn.mbs import RSDA, Model, Revolute

    m = Model()
    chassis = m.add_body("chassis", mass=300.0, inertia=[[60.0, 2.0, 1.0], [2.0, 90.0, 0.5], [1.0, 0.5, 120.0]],
                         pos=[0.0, 0.0, 0.6])
    subs, wheels = [], []
    for k, (x, y, axis) in enumerate(((0.8, 0.5, [0.0, 1.0, 0.0]), (-0.7, -0.5, [0.1, 1.0, 0.05]))):
        pivot = np.array([x, y, 0.38])
        centre = pivot + np.array([-0.33, 0.0, -0.12])
        h = m.add_body(f"housing{k}", mass=40.0 + 10 * k, inertia=[0.7, 1.2 + 0.1 * k, 0.75], pos=centre)
        m.add_joint(Revolute(chassis, h, point=pivot, axis=axis, name=f"pivot{k}"))
        m.add_force(RSDA(chassis, h, axis=axis, stiffness=1800.0, damping=600.0, free_angle=-0.3 - 0.1 * k,
                         name=f"spring{k}"))
        subs.append(Subsystem(f"housing{k}", f"pivot{k}", f"spring{k}", tuple(centre), 0.3, 2e5, 300.0))
        wheels.append((h, centre))
    road = np.array([[0.02, 2.0, 0.3], [0.01, 5.0, 1.1]])
    tyre = TyreForces(m, wheels, 0.3, 2e5, 300.0, road, 2.0, 0.0)
    return m, subs, road, tyre


def test_batch_on_a_free_rotating_base_matches_the_absolute_formulation():
    """Two subsystems (eq. 11's sum), a free base turning about a skew axis: accelerations to 1e-10."""
    from trackdyn.formulations.absolute import AbsoluteSystem

    m, subs, road, tyre = _two_corner_model()
    sys_ = SynthesisSystem(m, "chassis", subs, road, 2.0, 0.0)
    from scipy.spatial.transform import Rotation

    Rb = Rotation.from_rotvec([0.03, 0.02, 0.3]).as_matrix()
    rb = np.array([0.1, -0.05, -0.01])
    w0 = np.array([0.4, -0.7, 0.9])  # world
    v0c = np.array([1.5, 0.2, -0.3])
    q0, v0 = sys_.q0_base.copy(), np.zeros(6)
    c0 = q0[:3].copy()
    q0[:3] = c0 + rb
    q0[3:] = _quat(Rb)
    v0[:3] = v0c
    v0[3:] = Rb.T @ w0
    q1, v1 = sys_.q1_init.copy(), np.zeros((2, 6))
    for i, (th, thd) in enumerate(((0.06, 1.1), (-0.04, -0.8))):
        joint = m.joints[i]
        p = c0 + rb + Rb @ (joint.point - c0)
        a = Rb @ joint.axis
        Ra = Rotation.from_rotvec(th * a).as_matrix()
        R1 = Ra @ Rb  # housings start with the identity orientation
        r1 = p + Ra @ (Rb @ (sys_.q1_init[i, :3] - joint.point))
        q1[i, :3], q1[i, 3:] = r1, _quat(R1)
        w1 = w0 + thd * a
        v1[i, :3] = v0c + np.cross(w0, p - q0[:3]) + np.cross(w1, r1 - p)
        v1[i, 3:] = R1.T @ w1
    ab = AbsoluteSystem(m, providers=[tyre], remove_redundant=False)
    q, v, t = np.vstack([q0, q1]), np.vstack([v0, v1]), 0.7
    state = ab.initial_state()
    state.q, state.v, state.t = q, v, t
    ab.update_kinematics(q, v)
    f = ab.eval_forces(t, v, 0.0, 0.0, ab.base_data.copy(), state, 0.0).ravel().copy()
    ab.eval_constraints(want_gamma=True)
    assert np.abs(ab.phi).max() < 1e-12  # the state is consistent
    assert tyre.fz.min() > 0.0  # both tyres on the road
    M = np.zeros((18, 18))
    for b in range(3):
        M[6 * b:6 * b + 3, 6 * b:6 * b + 3] = ab.mass[b] * np.eye(3)
        M[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = ab.inertia[b]
    J = np.zeros((ab.nc, 18))
    for r in range(ab.nc):
        for side in range(2):
            J[r, 6 * ab.row_body[r, side]:6 * ab.row_body[r, side] + 6] += ab.J[r, 6 * side:6 * side + 6]
    x = np.linalg.solve(np.block([[M, J.T], [J, np.zeros((ab.nc, ab.nc))]]), np.concatenate([f, ab.gamma]))
    acc = x[:18].reshape(3, 6)
    scale = np.abs(acc).max()
    a0, a1 = sys_.accelerations("cartesian", t, q0, v0, q1, v1)
    np.testing.assert_allclose(a0, acc[0], rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(a1, acc[1:], rtol=0, atol=1e-10 * scale)
    a0j, thdd = sys_.accelerations("joint", t, q0, v0, q1, v1)
    np.testing.assert_allclose(a0j, acc[0], rtol=0, atol=1e-10 * scale)
    for i in range(2):
        a = Rb @ m.joints[i].axis
        R1 = sys_._R(q1[i])
        assert abs(thdd[i] - a @ (R1 @ acc[1 + i, 3:] - Rb @ acc[0, 3:])) <= 1e-10 * scale


def test_coupling_of_the_joint_explicit_implicit_model_sets_its_order(robot):
    """Eq. 31 as printed (base acceleration from t_n, unweighted) is first order; extrapolating the base
    acceleration and α-weighting its term like the forces restores HHT's second order."""
    sys_ = robot.synthesis()
    ref = sys_.run("joint", "explicit", 3.5e-4, 3.0)  # AB3 at a quarter of the finest step: its error is negligible
    orders = {}
    for label, kw in (("paper", {}), ("weighted", {"base_prediction": "linear", "weighted_coupling": True})):
        e = [rms_errors(sys_.run("joint", "explicit-implicit", h, 3.0, **kw), ref)[0] for h in (7e-4, 1.4e-3)]
        orders[label] = np.log2(e[1] / e[0])
    assert orders["paper"] < 1.3, orders
    assert orders["weighted"] > 1.7, orders


def test_projection_lifts_the_cartesian_explicit_implicit_stability_limit(robot):
    """The paper's hypothesis (index 3 in the Cartesian subsystem): at 8.4 ms the index-3 HHT step diverges,
    the same step followed by a partitioning projection onto the position and velocity constraints does not."""
    sys_ = robot.synthesis()
    assert not sys_.run("cartesian", "explicit-implicit", 8.4e-3, 10.0).stable
    assert sys_.run("cartesian", "explicit-implicit", 8.4e-3, 10.0, projection=True).stable
