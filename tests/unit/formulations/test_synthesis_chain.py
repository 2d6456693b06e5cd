"""Chain subsystems on a free base (the ``synthesis`` fidelity's method) against the absolute formulation.

Oracle: the :class:`~trackdyn.formulations.absolute.AbsoluteSystem` of the same model (robot-6x6: chassis,
six arms on revolutes with their RSDA, six wheels on revolutes at the arms' ends, point tyres, wheel
motors), its mass matrix, constraint Jacobian and γ assembled densely and its KKT system solved. Both use the
model's applied forces at the same state (the input of the problem); the synthesis' velocity
transformation, velocity products, effective terms and base solve share no code with the KKT path.
"""

from __future__ import annotations

import numpy as np
import pytest

from trackdyn.assembly.wheeled import build_wheeled_scenario
from trackdyn.driver import PID
from trackdyn.formulations.synthesis import ChainSynthesis
from trackdyn.integrators.synthesis import SynthesisStepper
from trackdyn.math.quaternion import quat_from_axis_angle
from trackdyn.mbs import Model, Revolute, RSDA
from trackdyn.mbs.model import State
from trackdyn.spec.scenario import Scenario


@pytest.fixture(scope="module")
def robot():
    sc = Scenario(vehicle="robot-6x6", speed=2.0, driver=PID(speed=3.0, y=0.0))
    b = build_wheeled_scenario(sc, {})
    vm = b.vehicle
    chains = [[s.arms[k], s.wheels[k]] for s in vm.sides.values() for k in range(len(s.arms))]
    return b.system, ChainSynthesis(b.system, "chassis", chains)


def _generic_state(system, cs, seed=1):
    """A consistent, generic state: the chassis lifted, yawed/rolled about a skew axis and moving in all six
    dof, every arm turned and turning, every wheel spinning; some tyres in contact."""
    rng = np.random.default_rng(seed)
    st = system.initial_state()
    q0, v0, th, thd = cs.coordinates(st.q, st.v)
    q0[2] += 0.004
    ax = np.array([0.3, 0.2, 0.9]) / np.linalg.norm([0.3, 0.2, 0.9])
    q0[3:] = quat_from_axis_angle(ax, 0.05)
    v0[:] = [2.0, 0.3, -0.2, 0.4, -0.7, 0.5]
    th[:, :2] = rng.normal(0.0, 0.05, (cs.n, 2))
    thd[:, :2] = rng.normal(0.0, 1.0, (cs.n, 2))
    thd[:, 1] += 6.0
    q, v = cs.pose(q0, v0, th, thd, q=np.zeros_like(st.q), v=np.zeros_like(st.v))
    return State(0.3, q, v, np.zeros(system.nc), np.zeros((system.nb, 6)), dict(st.extra))


def _kkt(system, state, f):
    """Dense KKT matrix and right-hand side of the absolute formulation at ``state`` with forces f."""
    s = system
    s.update_kinematics(state.q, state.v)
    s.update_drivers(state.t)
    s.eval_constraints(want_gamma=True)
    J = s.dense_jacobian()
    nb, nc = s.nb, s.nc
    M = np.zeros((6 * nb, 6 * nb))
    for k in range(nb):
        M[6 * k:6 * k + 3, 6 * k:6 * k + 3] = s.mass[k] * np.eye(3)
        M[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6] = s.inertia[k]
    K = np.block([[M, J.T], [J, np.zeros((nc, nc))]])
    return K, np.concatenate([f.ravel(), s.gamma]), J


def check_on_the_joints(system, state):
    """The absolute formulation's constraint rows hold at ``state``: positions to 1e-14, velocities to 1e-13."""
    system.update_kinematics(state.q, state.v)
    system.eval_constraints()
    J = system.dense_jacobian()
    assert np.abs(system.phi).max() < 1e-14
    assert np.abs(J @ state.v.ravel() + system.phi_t).max() < 1e-13


def test_state_is_on_the_joints_and_coordinates_invert_the_pose(robot):
    system, cs = robot
    state = _generic_state(system, cs)
    check_on_the_joints(system, state)
    q0, v0, th, thd = cs.coordinates(state.q, state.v)
    q, v = cs.pose(q0, v0, th, thd, q=np.zeros_like(state.q), v=np.zeros_like(state.v))
    assert np.abs(q - state.q).max() < 1e-14 and np.abs(v - state.v).max() < 1e-13


def test_accelerations_match_the_absolute_formulation(robot):
    system, cs = robot
    state = _generic_state(system, cs)
    a0, thdd, acc = cs.accelerations(state)
    assert np.count_nonzero(cs.f[[system.model.body_names.index(n) for c in cs.chains for n in c[1:]], 2]) > 0
    K, rhs, _ = _kkt(system, state, cs.f)
    x = np.linalg.lstsq(K, rhs, rcond=None)[0]
    a_abs = x[:6 * system.nb].reshape(system.nb, 6)
    err = np.abs(acc - a_abs).max() / np.abs(a_abs).max()
    assert err < 1e-10, err  # measured 2e-12 (of 2.8e3 m/s² / rad/s², the spinning wheels' largest)
    # the joint accelerations: the relative angular accelerations about the axes
    for i, chain in enumerate(cs.chains):
        ib = system.model.body_names.index(chain[0])
        assert np.isfinite(thdd[i, :2]).all() and abs(a_abs[ib, 3:]).max() > 0


def test_effective_mass_and_force_are_the_kkt_schur_complement(robot):
    system, cs = robot
    state = _generic_state(system, cs, seed=2)
    a0, _, _ = cs.accelerations(state)
    Meff = cs.effective_mass()
    K, rhs, _ = _kkt(system, state, cs.f)
    # the base block of the KKT inverse is the inverse of the base's effective mass (the free base's
    # articulated inertia): the Schur complement of everything else
    b = cs.base
    sl = slice(6 * b, 6 * b + 6)
    Kinv = np.linalg.pinv(K, rcond=1e-13)
    M_schur = np.linalg.inv(Kinv[sl, sl])
    err_m = np.abs(M_schur - Meff).max() / np.abs(Meff).max()
    assert err_m < 1e-10, err_m
    # the effective force: the base equation holds with the KKT's base acceleration
    a_kkt = (Kinv @ rhs)[sl]
    g = cs.f[b] + cs.Peff
    err_f = np.abs(Meff @ a_kkt - g).max() / np.abs(g).max()
    assert err_f < 1e-10, err_f
    assert np.abs(a0 - a_kkt).max() / np.abs(a_kkt).max() < 1e-10


def check_velocity_transformation(system, cs, state, U, Y, eps=1e-6):
    """Every chain body's ``Jb (Y, U)`` (world velocity, body angular velocity) against central differences of
    the pose along the joint coordinates (rates U (n, NBS)) and the base's exponential map (Y (6))."""
    from trackdyn.mbs._kernels import advance_positions_dq

    q0, v0, th, thd = cs.coordinates(state.q, state.v)
    cs.evaluate(state.t, q0, v0, th, thd, state)

    def pos(sign):
        qb = np.zeros((1, 7))
        advance_positions_dq(q0[None], sign * eps * Y[None], qb)
        q, _ = cs.pose(qb[0], v0, th + sign * eps * U, thd, q=np.zeros_like(state.q), v=np.zeros_like(state.v))
        return q

    qp, qm = pos(1.0), pos(-1.0)
    for i, chain in enumerate(cs.chains):
        for j, nm in enumerate(chain):
            b = system.model.body_names.index(nm)
            vel = cs.Jb[i, j] @ np.concatenate([Y, U[i, :cs.K.NBS]])
            fd_r = (qp[b, :3] - qm[b, :3]) / (2 * eps)
            # body-frame rotation: conj(ρ) ρ̇ = ω̄/2
            rho = (qp[b, 3:] + qm[b, 3:]) / 2
            d = (qp[b, 3:] - qm[b, 3:]) / (2 * eps)
            p = np.array([rho[0], -rho[1], -rho[2], -rho[3]])
            om = 2 * np.array([p[0] * d[1] + p[1] * d[0] + p[2] * d[3] - p[3] * d[2],
                               p[0] * d[2] - p[1] * d[3] + p[2] * d[0] + p[3] * d[1],
                               p[0] * d[3] + p[1] * d[2] - p[2] * d[1] + p[3] * d[0]])
            assert np.abs(fd_r - vel[:3]).max() < 1e-7 * (1 + np.abs(vel).max()), (nm, fd_r, vel[:3])
            assert np.abs(om - vel[3:]).max() < 1e-7 * (1 + np.abs(vel).max()), (nm, om, vel[3:])


def test_velocity_transformation_against_finite_differences(robot):
    """Jb (the bodies' velocities in the base velocity and the joint rates) against central differences of
    the pose along the joint coordinates and the base's exponential map."""
    system, cs = robot
    state = _generic_state(system, cs, seed=3)
    rng = np.random.default_rng(4)
    Y = rng.normal(size=6)
    U = np.zeros((cs.n, cs.K.NBS))
    U[:, :2] = rng.normal(size=(cs.n, 2))
    check_velocity_transformation(system, cs, state, U, Y)


def _spinning_model(gravity=(0.0, 0.0, 0.0)):
    """A free box with a two-body chain (arm on a revolute with a spring, a disc on a revolute at its end),
    no ground contact: a torque-free system whose angular momentum is conserved."""
    m = Model(gravity=gravity)
    base = m.add_body("chassis", mass=50.0, inertia=[[4.0, 0.3, 0.1], [0.3, 6.0, 0.2], [0.1, 0.2, 7.0]],
                      pos=[0, 0, 0], vel=[0.5, -0.2, 0.1], omega=[0.8, 1.3, -0.6])
    arm = m.add_body("arm", mass=3.0, inertia=[0.02, 0.1, 0.1], pos=[0.6, 0.3, 0.0])
    disc = m.add_body("disc", mass=2.0, inertia=[0.05, 0.09, 0.05], pos=[0.9, 0.3, 0.1])
    ax = np.array([0.2, 1.0, 0.1]) / np.linalg.norm([0.2, 1.0, 0.1])
    m.add_joint(Revolute(base, arm, point=[0.4, 0.3, 0.0], axis=ax, name="pivot"))
    m.add_joint(Revolute(arm, disc, point=[0.9, 0.3, 0.1], axis=[0, 1, 0], name="axle"))
    m.add_force(RSDA(base, arm, axis=ax, stiffness=300.0, damping=0.0, free_angle=0.2, name="spring"))
    return m


def _run_spinning(scheme, h, t_end=0.4, **options):
    from trackdyn.formulations.synthesis import SynthesisAbsoluteSystem

    s = SynthesisAbsoluteSystem(_spinning_model(), remove_redundant=False)
    st = s.project_velocities(s.initial_state())
    stepper = SynthesisStepper(s, h, chains=[["arm", "disc"]], base="chassis", scheme=scheme, **options)
    # the disc spins on the arm
    q0, v0, th, thd = stepper.cs.coordinates(st.q, st.v)
    thd[0, 1] = 20.0
    q, v = stepper.cs.pose(q0, v0, th, thd, q=st.q.copy(), v=st.v.copy())
    st = State(0.0, q, v, st.lam, st.acc, st.extra)
    L0 = s.angular_momentum(st.q, st.v)
    for _ in range(round(t_end / h)):
        st = stepper.step(st)
    return st, L0, s


@pytest.mark.parametrize("scheme, options, expected, momentum", [
    ("explicit", {}, 2.7, 1e-4),  # measured orders 3.01, 3.02
    ("explicit-implicit", {"base_prediction": "linear"}, 1.8, 1e-3),  # measured 1.97, 2.05
    ("explicit-implicit", {}, 0.9, 0.05),  # the default, the base acceleration from t_n: measured 1.10, 1.22
])
def test_free_base_rotation_converges_and_keeps_momentum(scheme, options, expected, momentum):
    """A tumbling free base (full inertia tensor, skew spin) with a spring-loaded arm and a spinning disc:
    angular momentum is conserved, and the base's orientation converges with the step at the scheme's order
    (AB3 in the chart with dexp⁻¹: 3; the split with HHT on the subsystem and the base's acceleration
    extrapolated into eq. 31: 2; taken from t_n, the default: 1)."""
    ref, L0, s = _run_spinning(scheme, 1.25e-4, **options)
    errs = []
    for h in (2e-3, 1e-3, 5e-4):
        st, _, _ = _run_spinning(scheme, h, **options)
        errs.append(np.abs(st.q[0, 3:] - ref.q[0, 3:]).max() + np.abs(st.q[0, :3] - ref.q[0, :3]).max())
        L = s.angular_momentum(st.q, st.v)
        drift = np.abs(L - L0).max() / np.abs(L0).max()
        assert drift < momentum * (h / 2e-3) ** expected, (h, drift)
    order = np.log2(errs[0] / errs[1]), np.log2(errs[1] / errs[2])
    assert min(order) > expected, (errs, order)


def test_stepper_refuses_bad_options(robot):
    system, cs = robot
    with pytest.raises(ValueError, match="scheme = 'rk4'"):
        SynthesisStepper(system, 1e-3, chains=cs.chains, scheme="rk4")
    with pytest.raises(ValueError, match="alpha = 0.5"):
        SynthesisStepper(system, 1e-3, chains=cs.chains, alpha=0.5)
    with pytest.raises(ValueError, match="unknown options"):
        SynthesisStepper(system, 1e-3, chains=cs.chains, beta=0.3)
    with pytest.raises(ValueError, match="are in no subsystem"):
        ChainSynthesis(system, "chassis", cs.chains[:-1])


def test_fused_vehicle_evaluation_matches_the_providers(robot):
    """The fidelity's one-call evaluation (pose, RSDA, tyres, motors, synthesis) gives the forces and
    accelerations of the absolute system's own force evaluation (the providers' accumulate)."""
    from trackdyn.assembly.synthesis_fidelity import fused_vehicle_evaluation

    system, cs = robot
    state = _generic_state(system, cs, seed=5)
    a0_p, thdd_p, acc_p = cs.accelerations(state)
    f_p = cs.f.copy()
    made = fused_vehicle_evaluation(cs)
    assert made is not None
    cs.set_fused(*made)
    try:
        a0_f, thdd_f, acc_f = cs.accelerations(state, fused=True)
    finally:
        cs.fused = cs.decide = None
    assert np.abs(cs.f - f_p).max() <= 1e-12 * np.abs(f_p).max()
    assert np.abs(acc_f - acc_p).max() <= 1e-12 * np.abs(acc_p).max()
