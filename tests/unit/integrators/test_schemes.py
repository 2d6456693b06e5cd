"""The integrators of issue #3: registry, options, the equations each step satisfies, state handling.

Accuracy against closed forms (orders, energy, tolerances) lives in
tests/validation/test_integrators.py; here each scheme is checked against its
own defining equations on one step, and for the invariants every scheme must
keep (unit quaternions, constraints, restartable states, counters).
"""

import time
import warnings

import numpy as np
import pytest

import trackdyn as td
from trackdyn.integrators import INTEGRATORS
from trackdyn.integrators._chart_kernels import j_times, jt_times
from trackdyn.integrators._kernels import mass_times
from trackdyn.mbs import _kernels as MK
from trackdyn.testing import problems as P
from trackdyn.testing.validation_integrators import free_slider_crank

NEW = ["euler-implicit", "euler-implicit-projected", "hht", "rk4", "ab3", "abm"]


def test_every_scheme_is_registered():
    assert set(NEW) | {"euler-implicit-linearized"} <= set(INTEGRATORS)
    for name in NEW:
        assert INTEGRATORS[name].name == name


@pytest.mark.parametrize("name, options, field", [
    ("hht", {"alpha": 0.1}, "alpha"),
    ("hht", {"alpha": -0.5}, "alpha"),
    ("hht", {"newton_rtol": -1.0}, "newton_rtol"),
    ("euler-implicit", {"newton_max_iter": 0}, "newton_max_iter"),
    ("euler-implicit-projected", {"projection_tol": 0.0}, "projection_tol"),
    ("rk4", {"constraints": "penalty"}, "constraints"),
    ("ab3", {"constraint_tol": float("nan")}, "constraint_tol"),
    ("abm", {"order": 9}, "order"),
    ("abm", {"rtol": -1e-6}, "rtol"),
    ("abm", {"atol": 0.0}, "atol"),
    ("hht", {"no_such_option": 1}, "no_such_option"),
])
def test_bad_options_name_the_field(name, options, field):
    with pytest.raises(ValueError, match=field):
        td.Simulation(P.pendulum(), integrator=name, step=1e-3, **options)


@pytest.mark.parametrize("name", NEW)
def test_quaternions_stay_unit_and_counters_fill(name):
    """Torque-free spin (no constraints): orientation stays a unit quaternion; counters and timing are kept."""
    sim = td.Simulation(P.torque_free_body(), integrator=name, step=1e-2, record=["body.quat.*"])
    t0 = time.perf_counter()
    res = sim.run(2.0)
    wall = time.perf_counter() - t0
    assert res.status == "complete"
    q = np.column_stack([res[f"body.quat.e{k}"] for k in range(4)])
    assert np.max(np.abs(np.linalg.norm(q, axis=1) - 1.0)) < 1e-14
    c = sim.integrator.counters
    assert c["steps"] == 200 and c["residual_evals"] >= 200 and c["solves"] >= 200
    # the stage split accounts for (part of) the run's wall time, never more
    assert 0 < sum(sim.integrator.timing.values()) <= wall
    assert set(sim.integrator.settings()) >= {"integrator", "step", "solver"}


@pytest.mark.parametrize("name", ["rk4", "ab3", "abm"])
def test_partitioning_keeps_the_chain_on_its_constraints(name):
    sim = td.Simulation(P.chain(n_links=8), integrator=name, step=2e-3, record=["link[7].pos.z"])
    s = sim.system
    worst = [0.0, 0.0]

    def watch(simu):
        st = simu.state
        s.update_kinematics(st.q, st.v)
        s.update_drivers(st.t)
        s.eval_constraints()
        cv = np.zeros(s.nc)
        j_times(s.J, s.row_body, st.v, cv)
        worst[0] = max(worst[0], np.abs(s.phi).max())
        worst[1] = max(worst[1], np.abs(cv + s.phi_t).max())

    assert sim.run(0.5, callback=watch).status == "complete"
    assert worst[0] < 1e-11 and worst[1] < 1e-10


def test_baumgarte_drift_stays_small_and_is_damped():
    sim = td.Simulation(P.chain(n_links=8), integrator="rk4", step=2e-3, constraints="baumgarte",
                        baumgarte_frequency=20.0, record=["link[7].pos.z"])
    s = sim.system
    viol = []

    def watch(simu):
        s.update_kinematics(simu.state.q, simu.state.v)
        s.update_drivers(simu.state.t)
        s.eval_constraints()
        viol.append(np.abs(s.phi).max())

    assert sim.run(0.5, callback=watch).status == "complete"
    assert 0 < max(viol) < 1e-6
    assert "partitions" not in sim.integrator.counters


def test_euler_implicit_step_solves_eq_2_12():
    """After one step the residuals of backward Euler, G_v and C(q⁺, t⁺), vanish to the Newton tolerance."""
    sim = td.Simulation(free_slider_crank(), integrator="euler-implicit", step=1e-3, newton_rtol=1e-10,
                        newton_atol=1e-12)
    s = sim.system
    st0 = sim.state.copy()
    st1 = sim.step()
    h = 1e-3
    q = np.empty_like(st0.q)
    MK.advance_positions(st0.q, st1.v, h, q)
    assert np.allclose(q, st1.q, atol=1e-15)
    s.update_kinematics(st1.q, st1.v)
    data = s.data.copy()
    s.eval_forces(st1.t, st1.v, 0.0, 0.0, data)
    s.update_drivers(st1.t)
    s.eval_constraints()
    Mv1, Mv0, JTl = np.zeros_like(st1.v), np.zeros_like(st1.v), np.zeros_like(st1.v)
    mass_times(s.mass, s.inertia, st1.v, Mv1)
    mass_times(s.mass, s.inertia, st0.v, Mv0)
    jt_times(s.J, s.row_body, st1.lam, JTl)
    G = Mv1 - Mv0 - h * s.f + h * JTl
    assert np.abs(G).max() < 1e-9 * max(1.0, np.abs(h * s.f).max())
    assert np.abs(s.phi).max() < 1e-12


def test_hht_step_solves_kim_eq_14_and_the_position_constraints():
    """One HHT step (no velocity projection): Ψ = M a⁺ + (1+α)(Jᵀλ − f)⁺ − α(Jᵀλ − f)⁰ = 0, Φ(q⁺) = 0."""
    alpha = -0.25
    sim = td.Simulation(free_slider_crank(), integrator="hht", step=1e-3, alpha=alpha, newton_rtol=1e-11,
                        newton_atol=1e-12, velocity_projection=False)
    s = sim.system
    st0 = sim.state.copy()
    st1 = sim.step()
    h, gam, beta = 1e-3, (1 - 2 * alpha) / 2, (1 - alpha) ** 2 / 4
    a0 = st1.extra  # the initial consistent accelerations are not in st0; recompute them
    it = sim.integrator
    a0, lam0, F0 = it._start(st0)

    def F(st_q, st_v, lam, t):
        s.update_kinematics(st_q, st_v)
        s.eval_forces(t, st_v, 0.0, 0.0, s.data.copy())
        s.update_drivers(t)
        s.eval_constraints()
        JTl = np.zeros_like(st_v)
        jt_times(s.J, s.row_body, lam, JTl)
        return JTl - s.f

    Ma = np.zeros_like(st1.acc)
    mass_times(s.mass, s.inertia, st1.acc, Ma)
    psi = Ma + (1 + alpha) * F(st1.q, st1.v, st1.lam, st1.t) - alpha * F0
    assert np.abs(psi).max() < 1e-7 * max(1.0, np.abs(Ma).max())
    assert np.abs(s.phi).max() < 1e-12
    # Newmark formulas on the group
    assert np.allclose(st1.v, st0.v + h * ((1 - gam) * a0 + gam * st1.acc), atol=1e-14)
    q = np.empty_like(st0.q)
    MK.advance_positions_dq(st0.q, h * st0.v + h * h * ((0.5 - beta) * a0 + beta * st1.acc), q)
    assert np.allclose(q, st1.q, atol=1e-14)


def test_hht_velocity_projection_satisfies_the_velocity_constraint():
    sim = td.Simulation(P.chain(n_links=4), integrator="hht", step=2e-3, alpha=0.0)
    s = sim.system
    for _ in range(20):
        st = sim.step()
    s.update_kinematics(st.q, st.v)
    s.update_drivers(st.t)
    s.eval_constraints()
    cv = np.zeros(s.nc)
    j_times(s.J, s.row_body, st.v, cv)
    assert np.abs(cv + s.phi_t).max() < 1e-10
    assert sim.integrator.counters["projections"] == 20


def test_projected_euler_lands_on_the_constraints():
    sim = td.Simulation(P.chain(n_links=8), integrator="euler-implicit-projected", step=1e-3,
                        projection_tol=1e-12, record=["link[0].pos.z"])
    s = sim.system
    for _ in range(50):
        st = sim.step()
        assert sim.integrator.last["pos_violation"] <= 1e-12
    s.update_kinematics(st.q, st.v)
    s.update_drivers(st.t)
    s.eval_constraints()
    assert np.abs(s.phi).max() <= 1e-12
    assert sim.integrator.counters["projections"] >= 50


@pytest.mark.parametrize("name", ["hht", "ab3", "abm"])
def test_a_copied_state_continues_exactly(name):
    """Scheme memory (HHT force term, Adams history, ABM step size) travels in the state."""
    sim = td.Simulation(P.chain(n_links=3), integrator=name, step=2e-3)
    sim.run(0.1)
    saved = sim.state.copy()
    a = sim.run(0.2)["link[2].pos.z"][-1]
    sim2 = td.Simulation(P.chain(n_links=3), integrator=name, step=2e-3)
    sim2.state = saved
    b = sim2.run(0.2)["link[2].pos.z"][-1]
    assert a == b


def test_newton_accepts_the_round_off_floor():
    """chain64 from rest: |v| ≈ 0, so the tolerance is newton_atol = 1e-10 m/s, below what a system with
    κ(K) ≈ 3e6 can resolve; the stagnating increments are accepted instead of failing the step."""
    sim = td.Simulation(P.chain(**P.CHAIN64), integrator="euler-implicit", step=1e-4, record=["link[0].pos.z"])
    assert sim.run(2e-3).status == "complete"
    assert sim.integrator.counters["newton_stagnations"] > 0


def test_newton_failure_stops_the_run_with_a_diagnostic():
    res = td.Simulation(P.pendulum(theta0=1.0), integrator="euler-implicit", step=1e-2, newton_max_iter=1).run(0.1)
    assert res.status == "diverged"
    assert "did not converge" in res.metadata["error"]


def test_repartitioning_replaces_a_split_that_becomes_singular():
    """Pendulum swinging over the horizontal with the bob's x as independent coordinate: at θ = π/2 that
    split is singular; the scheme must re-choose it and still follow the energy balance."""
    m = td.Model()
    b = m.add_body("bob", mass=1.0, inertia=[0.01] * 3, pos=[0, 0, -1], vel=[5.0, 0, 0], omega=[0, -5.0, 0])
    m.add_joint(td.Revolute(m.ground, b, point=[0, 0, 0], axis=[0, 1, 0], name="pin"))
    for name in ("rk4", "abm"):
        sim = td.Simulation(m, integrator=name, step=1e-3, record=["bob.pos.*"])
        sim.integrator.treat.use_split([1, 2, 3, 4, 5], 0.0, sim.state.q, sim.state.v)
        res = sim.run(1.5)
        assert res.status == "complete"
        assert sim.integrator.counters["partitions"] >= 2
        theta = np.arctan2(res["bob.pos.x"], -res["bob.pos.z"])
        # ½ I_O ω0² = m g L (1 − cos θmax), I_O = 1.01 kg m²
        exact = np.arccos(1 - 0.5 * 1.01 * 25.0 / 9.81)
        assert abs(theta.max() - exact) < 1e-3


def test_abm_lands_on_every_output_time_and_adapts_its_step():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = td.Simulation(free_slider_crank(), integrator="abm", step=1e-2, rtol=1e-6, atol=1e-8)
    res = sim.run(1.0)
    assert np.allclose(np.diff(res.t), 1e-2, rtol=0, atol=1e-12)
    c = sim.integrator.counters
    assert c["substeps"] > 100  # the error control, not the output interval, sets the step
    assert 2 * c["substeps"] <= c["residual_evals"] <= 2 * (c["substeps"] + c["rejected"]) + 10


@pytest.mark.parametrize("solver", ["minres", "psor", "bb"])
def test_iterative_solvers_drive_the_new_schemes(solver):
    ref = td.Simulation(P.chain(n_links=4), integrator="hht", step=2e-3).run(0.1)["link[3].pos.z"]
    sim = td.Simulation(P.chain(n_links=4), integrator="hht", step=2e-3, solver=solver, tol=1e-10)
    out = sim.run(0.1)["link[3].pos.z"]
    assert np.abs(out - ref).max() < 1e-9
    c = sim.integrator.counters
    assert c["linear_iterations"] > 0 and c.get("linear_unconverged", 0) == 0
    assert sim.integrator.last["linear_residual"] <= 1e-10


def test_step_failure_in_explicit_scheme_is_reported(monkeypatch):
    from trackdyn.integrators import _constraints

    def broken(self, *args, **kwargs):
        raise _constraints.PartitionFailed("forced")

    monkeypatch.setattr(_constraints.CoordinatePartitioning, "make_consistent", broken)
    res = td.Simulation(P.chain(n_links=2), integrator="rk4", step=1e-3).run(0.01)
    assert res.status == "diverged" and "forced" in res.metadata["error"]
