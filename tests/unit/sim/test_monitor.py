"""Divergence detection: a run that goes wrong stops with a diagnostic and keeps its partial results."""

import json

import numpy as np
import pytest

import trackdyn as td
from trackdyn.errors import StepFailed
from trackdyn.io.checkpoint import load_state
from trackdyn.mbs.forces import TSDA
from trackdyn.sim.monitor import DivergenceMonitor
from trackdyn.testing.problems import pendulum


def _stiff_oscillator(k=1e6):
    m = td.Model(gravity=(0.0, 0.0, 0.0))
    b = m.add_body("bob", mass=1.0, inertia=[1e-3, 1e-3, 1e-3], pos=[0.01, 0, 0])
    m.add_force(TSDA(m.ground, b, point_a=[0, 0, 0], point_b=[0.01, 0, 0], stiffness=k, free_length=0.0,
                     name="spring"))
    return m


def test_an_unstable_explicit_step_stops_the_run_with_the_body_named_and_the_last_good_state(tmp_path):
    # RK4 is stable for h ω < 2.8; here h ω = 10: the amplitude grows ~400x per step
    sim = td.Simulation(_stiff_oscillator(), integrator="rk4", step=1e-2, output_step=1e-2)
    out = tmp_path / "run"
    res = sim.run(1.0, out=out)
    assert res.status == "diverged"
    err = res.metadata["error"]
    assert "bob" in err and ("energy" in err or "m/s" in err)
    # stopped within a few steps, the samples so far kept, every kept sample finite
    assert 0 < len(res.t) < 10 and res.t[-1] < 0.1
    assert np.all(np.isfinite(res["bob.pos.x"]))
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["status"] == "diverged" and meta["error"] == err
    good = load_state(out / "last_good_state.npz")
    assert good.t == pytest.approx(meta["last_good_t"]) and good.t == sim.state.t
    np.testing.assert_array_equal(good.q, sim.last_good_state.q)
    assert np.all(np.isfinite(good.v))


def test_the_same_oscillator_at_a_stable_step_is_not_flagged():
    sim = td.Simulation(_stiff_oscillator(), integrator="rk4", step=1e-4, output_step=1e-3)
    res = sim.run(0.05)
    assert res.status == "complete"
    # energy is conserved to the accuracy of RK4: the monitor had nothing to say
    x, v = res["bob.pos.x"], res["bob.vel.x"]
    E = 0.5 * 1e6 * x**2 + 0.5 * v**2
    assert abs(E[-1] / E[0] - 1) < 1e-3


def test_a_violated_joint_is_named():
    m = pendulum()
    sim = td.Simulation(m, step=1e-3)
    s = sim.system
    mon = DivergenceMonitor(s, max_violation=0.05)
    old = sim.state.copy()
    new = sim.state.copy()
    new.q[0, 0] += 0.2  # pull the bob 0.2 m off its pin
    s.update_kinematics(new.q, new.v)
    s.eval_constraints(False)
    with pytest.raises(StepFailed, match=r"joint .* violated by 0\.2"):
        mon.check(old, new, 1e-3)
    # a violation under the threshold passes
    new.q[0, 0] -= 0.17
    s.update_kinematics(new.q, new.v)
    s.eval_constraints(False)
    mon.check(old, new, 1e-3)
    assert mon.last_good is new


def test_an_energy_jump_that_no_force_explains_is_caught_and_a_runaway_body_is_named():
    m = pendulum()
    sim = td.Simulation(m, step=1e-3)
    s = sim.system
    mon = DivergenceMonitor(s)
    old = sim.state.copy()
    new = sim.state.copy()
    s.f[:] = 0.0
    new.v[0, :3] = [0.0, 0.0, 30.0]  # 450 J out of nowhere in one step
    s.update_kinematics(old.q, old.v)
    s.eval_constraints(False)
    with pytest.raises(StepFailed, match="kinetic energy jumped"):
        mon.check(old, new, 1e-3)
    new.v[0, :3] = [0.0, 0.0, 300.0]
    with pytest.raises(StepFailed, match=r"body .* at 300 m/s"):
        mon.check(old, new, 1e-3)
    new.v[0, :3] = 0.0
    new.q[0, 3] = np.nan
    with pytest.raises(StepFailed, match="non-finite q"):
        mon.check(old, new, 1e-3)


def test_monitor_option_is_validated_and_can_be_switched_off():
    with pytest.raises(ValueError, match="monitor"):
        td.Simulation(pendulum(), step=1e-3, monitor="yes")
    sim = td.Simulation(_stiff_oscillator(), integrator="rk4", step=1e-2, monitor=False)
    assert sim.monitor is None
    sim = td.Simulation(pendulum(), step=1e-3, monitor={"max_speed": 1.0})
    assert sim.monitor.max_speed == 1.0
