"""Chain subsystems with prismatic joints, and passive bodies, on a free base against the absolute formulation.

Oracle: the :class:`~trackdyn.formulations.absolute.AbsoluteSystem` of the same model, its mass matrix, its
constraint Jacobian (the joints' primitive rows: a prismatic joint is 2 DP1 + 2 DP2 + 1 DP1) and γ assembled
densely and its KKT system solved. The synthesis' prismatic kinematics (pose, velocity transformation,
velocity products) share no code with the constraint rows.

The model: a tumbling free box (full inertia tensor) with two chains, a tracked vehicle's idler unit -- a
carrier on a skew slide with a tension spring-damper and an idler wheel on a revolute on it -- and an arm on a
revolute (with a rotational spring) carrying a slider on a prismatic along it with a spring-damper and a wheel
on a revolute on the slider (a slide whose parent turns relative to the base). Every body starts rotated, so the
joint axes and offsets are not along any body's axes.
"""

from __future__ import annotations

import numpy as np
import pytest

from trackdyn.formulations.synthesis import ChainSynthesis, SynthesisAbsoluteSystem
from trackdyn.math.quaternion import quat_from_axis_angle
from trackdyn.mbs import Model, Prismatic, Revolute, RSDA, TSDA
from trackdyn.mbs.model import State
from test_synthesis_chain import _kkt, check_on_the_joints, check_velocity_transformation  # (same folder)

SLIDE_AXIS = np.array([0.9, 0.1, 0.4]) / np.linalg.norm([0.9, 0.1, 0.4])
ARM_AXIS = np.array([0.2, 1.0, 0.1]) / np.linalg.norm([0.2, 1.0, 0.1])
SHOE_SPRING = dict(stiffness=4.0e3, damping=60.0, free_length=0.25)  # shoe[0] to idler
SHOE_BASE_SPRING = dict(stiffness=1.5e3, damping=25.0, free_length=0.35)  # shoe[1] to chassis


def _quat(axis, angle):
    return quat_from_axis_angle(np.asarray(axis, float) / np.linalg.norm(axis), angle)


def _model(passive=False, pin_shoe_to_idler=False):
    """The box with the idler unit and the arm-slider-wheel chain; with ``passive``, two shoes pinned to each
    other, one pulled toward the idler and one toward the chassis by spring-dampers (and nothing else)."""
    m = Model(gravity=(0.0, 0.0, -9.81))
    base = m.add_body("chassis", mass=50.0, inertia=[[4.0, 0.3, 0.1], [0.3, 6.0, 0.2], [0.1, 0.2, 7.0]],
                      pos=[0.0, 0.0, 0.5], quat=_quat([0.1, 0.3, 1.0], 0.3))
    carrier = m.add_body("carrier", mass=6.0, inertia=[[0.1, 0.01, 0.0], [0.01, 0.2, 0.02], [0.0, 0.02, 0.15]],
                         pos=[1.0, 0.4, 0.45], quat=_quat([1.0, -0.2, 0.3], 0.4))
    idler = m.add_body("idler", mass=9.0, inertia=[0.3, 0.5, 0.32], pos=[1.25, 0.45, 0.4],
                       quat=_quat([0.2, 0.1, 1.0], -0.7))
    arm = m.add_body("arm", mass=3.0, inertia=[0.02, 0.1, 0.1], pos=[-0.4, -0.3, 0.2],
                     quat=_quat([0.0, 1.0, 0.2], 0.25))
    slider = m.add_body("slider", mass=2.0, inertia=[[0.01, 0.0, 0.002], [0.0, 0.03, 0.0], [0.002, 0.0, 0.02]],
                        pos=[-0.65, -0.35, 0.1], quat=_quat([1.0, 1.0, 0.0], 0.5))
    wheel = m.add_body("wheel", mass=4.0, inertia=[0.08, 0.14, 0.08], pos=[-0.8, -0.45, 0.05],
                       quat=_quat([0.3, 0.0, 1.0], 1.1))
    m.add_joint(Prismatic(base, carrier, point=[0.9, 0.4, 0.45], axis=SLIDE_AXIS, name="slide"))
    m.add_joint(Revolute(carrier, idler, point=[1.25, 0.45, 0.4], axis=[0.1, 1.0, 0.0], name="idler_axle"))
    m.add_joint(Revolute(base, arm, point=[-0.2, -0.3, 0.25], axis=ARM_AXIS, name="pivot"))
    arm_dir = np.array([-0.45, -0.05, -0.15]) / np.linalg.norm([-0.45, -0.05, -0.15])
    m.add_joint(Prismatic(arm, slider, point=[-0.6, -0.35, 0.12], axis=arm_dir, name="arm_slide"))
    m.add_joint(Revolute(slider, wheel, point=[-0.8, -0.45, 0.05], axis=[0.0, 1.0, 0.3], name="axle"))
    m.add_force(TSDA(base, carrier, point_a=[0.7, 0.38, 0.5], point_b=[1.0, 0.4, 0.45], stiffness=2.0e4,
                     damping=300.0, free_length=0.2, name="tensioner"))
    m.add_force(RSDA(base, arm, axis=ARM_AXIS, stiffness=300.0, damping=5.0, free_angle=0.2, name="arm_spring"))
    m.add_force(TSDA(arm, slider, point_a=[-0.3, -0.3, 0.22], point_b=[-0.65, -0.35, 0.1], stiffness=5.0e3,
                     damping=40.0, free_length=0.3, name="slider_spring"))
    if passive:
        s0 = m.add_body("shoe[0]", mass=1.5, inertia=[0.01, 0.02, 0.025], pos=[1.5, 0.5, 0.2],
                        quat=_quat([0.0, 1.0, 0.0], 0.3))
        s1 = m.add_body("shoe[1]", mass=1.5, inertia=[0.01, 0.02, 0.025], pos=[1.7, 0.5, 0.15],
                        quat=_quat([0.0, 1.0, 0.0], 0.1))
        m.add_joint(Revolute(s0, s1, point=[1.6, 0.5, 0.17], axis=[0, 1, 0], name="pin"))
        m.add_force(TSDA(idler, s0, point_a=[1.3, 0.45, 0.35], point_b=[1.45, 0.5, 0.2], name="shoe_spring",
                         **SHOE_SPRING))
        m.add_force(TSDA(base, s1, point_a=[1.2, 0.3, 0.3], point_b=[1.75, 0.5, 0.16], name="shoe_base_spring",
                         **SHOE_BASE_SPRING))
        if pin_shoe_to_idler:
            m.add_joint(Revolute(idler, s0, point=[1.4, 0.5, 0.25], axis=[0, 1, 0], name="shoe_idler_pin"))
    return m


CHAINS = [["carrier", "idler"], ["arm", "slider", "wheel"]]
PASSIVE = ["shoe[0]", "shoe[1]"]


@pytest.fixture(scope="module")
def slide():
    system = SynthesisAbsoluteSystem(_model(), remove_redundant=False)
    return system, system.chain_synthesis("chassis", CHAINS)


def _generic_state(system, cs, seed=1):
    """A consistent, generic state: the box rotated about a skew axis and moving in all six dof (ω ≠ 0 and not
    along any axis), every slide displaced and sliding, every revolute turned and turning."""
    rng = np.random.default_rng(seed)
    st = system.initial_state()
    q0, v0, th, thd = cs.coordinates(st.q, st.v)
    q0[3:] = _quat([0.3, 0.2, 0.9], 0.4)
    v0[:] = [2.0, 0.3, -0.2, 1.4, -0.9, 0.7]
    th[0, :2] = [0.035, 0.6]  # carrier slide (m), idler angle
    th[1, :3] = [0.15, -0.04, -1.2]  # arm angle, slider slide (m), wheel angle
    thd[0, :2] = [0.8, 12.0]
    thd[1, :3] = [-1.5, 0.6, 25.0]
    th[:, :3] += rng.normal(0.0, 0.01, (2, 3)) * (cs.ch_type[:, :3] >= 0)
    q, v = cs.pose(q0, v0, th, thd, q=system.q0.copy(), v=system.v0.copy())
    return State(0.3, q, v, np.zeros(system.nc), np.zeros((system.nb, 6)), {})


def _kkt_accelerations(system, state, f):
    K, rhs, _ = _kkt(system, state, f)
    return np.linalg.solve(K, rhs)[:6 * system.nb].reshape(system.nb, 6)


def _R(quat):
    w, x, y, z = quat
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def test_chain_types_and_refusals(slide):
    system, cs = slide
    assert cs.ch_type.tolist() == [[1, 0, -1, -1], [0, 1, 0, -1]]
    m = _model()
    s = SynthesisAbsoluteSystem(m, remove_redundant=False)
    with pytest.raises(ValueError, match="'idler' must hang on 'chassis' by a Revolute or a Prismatic; found no joint"):
        ChainSynthesis(s, "chassis", [["idler", "carrier"], ["arm", "slider", "wheel"]])


def test_state_is_on_the_joints_and_coordinates_invert_the_pose(slide):
    """The pose of the joint coordinates satisfies the absolute formulation's constraint rows (positions and
    velocities), and :meth:`coordinates` recovers the coordinates, slides in metres included."""
    system, cs = slide
    state = _generic_state(system, cs)
    check_on_the_joints(system, state)
    q0, v0, th, thd = cs.coordinates(state.q, state.v)
    assert np.abs(cs.coordinates(system.q0, system.v0)[2]).max() < 1e-15  # zero at the assembled pose
    # the slides by the geometry of the points: the carrier's joint point moved along the world slide axis
    rc = state.q[1, :3] + _R(state.q[1, 3:]) @ (_R(system.q0[1, 3:]).T @ (np.array([0.9, 0.4, 0.45])
                                                                          - system.q0[1, :3]))
    rp = state.q[0, :3] + _R(state.q[0, 3:]) @ (_R(system.q0[0, 3:]).T @ (np.array([0.9, 0.4, 0.45])
                                                                          - system.q0[0, :3]))
    a_w = _R(state.q[0, 3:]) @ _R(system.q0[0, 3:]).T @ SLIDE_AXIS
    assert abs(th[0, 0] - a_w @ (rc - rp)) < 1e-14 and np.linalg.norm(np.cross(a_w, rc - rp)) < 1e-14
    q, v = cs.pose(q0, v0, th, thd, q=np.zeros_like(state.q), v=np.zeros_like(state.v))
    assert np.abs(q - state.q).max() < 1e-14 and np.abs(v - state.v).max() < 1e-13
    # the rates: θ̇ (slides and angles) against central differences of θ along the bodies' motion
    from trackdyn.mbs._kernels import advance_positions_dq

    eps = 1e-6

    def th_at(sign):
        qn = np.zeros_like(state.q)
        advance_positions_dq(state.q, sign * eps * state.v, qn)
        return cs.coordinates(qn, state.v)[2]

    fd = (th_at(1.0) - th_at(-1.0)) / (2 * eps)
    assert np.abs(fd - thd).max() < 1e-7 * np.abs(thd).max(), (fd, thd)


def test_accelerations_match_the_absolute_formulation(slide):
    """Every body's acceleration against the KKT solution, and the effective mass against the KKT's Schur
    complement on the base (the prismatic Coriolis term 2 ω_p × (R_p a) θ̇ is in the first)."""
    system, cs = slide
    for seed in (1, 2):
        state = _generic_state(system, cs, seed)
        a0, thdd, acc = cs.accelerations(state)
        a_abs = _kkt_accelerations(system, state, cs.f)
        err = np.abs(acc - a_abs).max() / np.abs(a_abs).max()
        assert err < 1e-10, err  # measured 7e-16 (of 1.7e2 m/s², rad/s²); 2e-2 without the Coriolis term
    K, rhs, _ = _kkt(system, state, cs.f)
    sl = slice(6 * cs.base, 6 * cs.base + 6)
    M_schur = np.linalg.inv(np.linalg.inv(K)[sl, sl])
    Meff = cs.effective_mass()
    err_m = np.abs(M_schur - Meff).max() / np.abs(Meff).max()
    assert err_m < 1e-10, err_m


def test_slide_acceleration_against_the_relative_motion(slide):
    """θ̈ of the carrier's slide against the second derivative of the slide coordinate along the absolute
    formulation's motion (central differences of the coordinates of poses advanced with the KKT's
    accelerations)."""
    from trackdyn.mbs._kernels import advance_positions_dq

    system, cs = slide
    state = _generic_state(system, cs, seed=3)
    _, thdd, _ = cs.accelerations(state)
    a_abs = _kkt_accelerations(system, state, cs.f)
    eps = 1e-4

    def th_at(t):
        # second-order Taylor of the absolute motion in (position, body-frame rotation vector) at time t
        qn = np.zeros_like(state.q)
        dq = t * state.v + 0.5 * t * t * a_abs
        advance_positions_dq(state.q, dq, qn)
        return cs.coordinates(qn, state.v + t * a_abs)

    fd_rate = (th_at(eps)[3] - th_at(-eps)[3]) / (2 * eps)
    mask = cs.ch_type >= 0
    # measured 1.1e-7 relative (of 2.9e2); 1.3e-2 without the prismatic Coriolis term
    assert np.abs((fd_rate - thdd)[mask]).max() < 1e-5 * np.abs(thdd[mask]).max(), (fd_rate, thdd)


def test_velocity_transformation_against_finite_differences(slide):
    """Jb (the bodies' velocities in the base velocity and the joint rates) against central differences of
    the pose along the joint coordinates and the base's exponential map."""
    system, cs = slide
    state = _generic_state(system, cs, seed=4)
    rng = np.random.default_rng(4)
    Y = rng.normal(size=6)
    U = rng.normal(size=(cs.n, cs.K.NBS)) * (cs.ch_type >= 0)
    check_velocity_transformation(system, cs, state, U, Y)
    # the slide column: a pure translation along the parent-carried axis, no rotation
    R0 = _R(state.q[0, 3:])
    a_w = R0 @ _R(system.q0[0, 3:]).T @ SLIDE_AXIS
    assert np.abs(cs.Jb[0, 0, :3, 6] - a_w).max() < 1e-14 and np.abs(cs.Jb[0, 0, 3:, 6]).max() == 0.0


# ------------------------------------------------------------------------------------------ passive bodies
def _tsda_on_a(qa, va, sa, qb, vb, sb, stiffness, damping, free_length):
    """Force (world) and torque (body frame) on body a of a spring-damper between a point of a and a point of
    b: tension F = k (l - l0) + c l̇ pulling the points together (computed here, apart from the library)."""
    Ra, Rb = _R(qa[3:]), _R(qb[3:])
    da, db = Ra @ sa, Rb @ sb
    d = qb[:3] + db - qa[:3] - da
    length = np.linalg.norm(d)
    u = d / length
    wa, wb = Ra @ va[3:], Rb @ vb[3:]
    ldot = u @ (vb[:3] + np.cross(wb, db) - va[:3] - np.cross(wa, da))
    F = (stiffness * (length - free_length) + damping * ldot) * u
    return F, Ra.T @ np.cross(da, F)


def test_passive_bodies_act_by_their_forces_only():
    """Base and chains with two passive shoes (pinned to each other; one pulled toward the idler, one toward
    the chassis by spring-dampers) at a given state: the synthesis' accelerations equal the KKT solution of
    the model without the shoes, with the springs' forces at the shoes' state added to the idler and the
    chassis as external forces (computed by hand)."""
    sys_p = SynthesisAbsoluteSystem(_model(passive=True), remove_redundant=False)
    cs = sys_p.chain_synthesis("chassis", CHAINS, passive=PASSIVE)
    names = sys_p.model.body_names
    assert cs.passive.tolist() == [names.index(n) for n in PASSIVE] and cs.passive.dtype == np.int64
    sys_r = SynthesisAbsoluteSystem(_model(), remove_redundant=False)
    assert list(sys_r.model.body_names) == list(names[:sys_r.nb])
    cs_r = sys_r.chain_synthesis("chassis", CHAINS)
    st_r = _generic_state(sys_r, cs_r, seed=5)
    # the shoes somewhere else, moving and turning, off their pin (the synthesis leaves them to the caller)
    ps = cs.passive
    q = sys_p.q0.copy()
    v = sys_p.v0.copy()
    q[:sys_r.nb], v[:sys_r.nb] = st_r.q, st_r.v
    q[ps[0]] = [1.55, 0.55, 0.1, *_quat([0.2, 1.0, 0.1], 0.5)]
    q[ps[1]] = [1.85, 0.45, 0.05, *_quat([0.0, 1.0, -0.3], -0.2)]
    v[ps[0]] = [1.5, -0.4, 0.8, 3.0, -2.0, 1.0]
    v[ps[1]] = [-0.6, 0.9, 0.3, -1.0, 4.0, 0.5]
    state = State(st_r.t, q, v, np.zeros(sys_p.nc), np.zeros((sys_p.nb, 6)), {})
    a0, thdd, acc = cs.accelerations(state)
    assert np.abs(cs.q[ps] - q[ps]).max() == 0.0 and np.abs(acc[ps]).max() == 0.0
    # the reference: the model without shoes, its own forces plus the two springs' by hand
    sys_r.update_kinematics(st_r.q, st_r.v)
    f = sys_r.eval_forces(st_r.t, st_r.v, 0.0, 0.0, np.zeros(sys_r.pattern.nnz), state=st_r).copy()
    idl, ch = names.index("idler"), names.index("chassis")

    def local(body, p):
        return _R(sys_p.q0[body, 3:]).T @ (np.asarray(p, float) - sys_p.q0[body, :3])

    F, T = _tsda_on_a(q[idl], v[idl], local(idl, [1.3, 0.45, 0.35]), q[ps[0]], v[ps[0]],
                      local(ps[0], [1.45, 0.5, 0.2]), **SHOE_SPRING)
    f[idl, :3] += F
    f[idl, 3:] += T
    F2, T2 = _tsda_on_a(q[ch], v[ch], local(ch, [1.2, 0.3, 0.3]), q[ps[1]], v[ps[1]],
                        local(ps[1], [1.75, 0.5, 0.16]), **SHOE_BASE_SPRING)
    f[ch, :3] += F2
    f[ch, 3:] += T2
    assert min(np.linalg.norm(F), np.linalg.norm(F2)) > 50.0  # the springs pull hard
    a_ref = _kkt_accelerations(sys_r, st_r, f)
    err = np.abs(acc[:sys_r.nb] - a_ref).max() / np.abs(a_ref).max()
    assert err < 1e-10, err  # measured 1.5e-15 (of 1.4e2 m/s², rad/s²)
    # and the shoes' forces do matter: without them the accelerations differ at O(1)
    a_free = cs_r.accelerations(st_r)[2]
    assert np.abs(a_free - a_ref).max() > 1e-2 * np.abs(a_ref).max()


def test_passive_bodies_refused_when_jointed_or_misnamed():
    sys_p = SynthesisAbsoluteSystem(_model(passive=True, pin_shoe_to_idler=True), remove_redundant=False)
    with pytest.raises(ValueError, match="joint 'shoe_idler_pin' \\(Revolute\\) joins passive body 'shoe\\[0\\]' "
                                         "to 'idler'"):
        sys_p.chain_synthesis("chassis", CHAINS, passive=PASSIVE)
    sys_p = SynthesisAbsoluteSystem(_model(passive=True), remove_redundant=False)
    with pytest.raises(ValueError, match=r"passive = \['idler', 'shoe\[7\]'\]: unknown bodies, the base, in a chain"):
        sys_p.chain_synthesis("chassis", CHAINS, passive=["shoe[0]", "shoe[1]", "idler", "shoe[7]"])
    with pytest.raises(ValueError, match=r"bodies \['shoe\[1\]'\] are in no subsystem"):
        sys_p.chain_synthesis("chassis", CHAINS, passive=["shoe[0]"])
    with pytest.raises(ValueError, match="passive = 'shoe\\[0\\]': give a sequence"):
        sys_p.chain_synthesis("chassis", CHAINS, passive="shoe[0]")
