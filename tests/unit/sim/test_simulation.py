import json

import numpy as np
import pytest

import trackdyn as td
from trackdyn.testing import problems as P


def test_design_example_runs_and_records_named_series(tmp_path):
    m = td.Model()
    link = m.add_body("link", mass=1.0, inertia=[0.1, 0.1, 0.1], pos=[0.5, 0, 0], quat=[1, 0, 0, 0])
    m.add_joint(td.Revolute(m.ground, link, point=[0, 0, 0], axis=[0, 1, 0], name="pin"))
    sim = td.Simulation(m, integrator="euler-implicit-linearized", step=1e-3, output_step=1e-2)
    res = sim.run(t_end=0.5)
    df = res.frame()
    assert list(df.columns[:1]) == ["t"]
    assert len(df) == 51 and np.isclose(df["t"].iloc[-1], 0.5)
    for name in ["link.pos.z", "link.quat.e0", "link.vel.x", "link.omega.y", "link.acc.z", "pin.force.z",
                 "pin.torque.x"]:
        assert name in df
    # the pin holds the link: the drift of |p - pin| is the O(h² v²/L) of the linearized step
    r = np.hypot(df["link.pos.x"], df["link.pos.z"])
    vmax = np.hypot(df["link.vel.x"], df["link.vel.z"]).max()
    assert np.max(np.abs(r - 0.5)) < 2 * (1e-3 * vmax) ** 2 / 0.5
    res.save(tmp_path / "run")
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert meta["status"] == "complete" and meta["steps"] == 500
    back = td.load(tmp_path / "run")
    assert back.columns == res.columns and np.array_equal(back.values, res.values)


def test_reaction_is_on_the_second_body_at_the_joint():
    """A body hanging at rest: the pin carries m g upwards and no torque."""
    m = td.Model()
    b = m.add_body("b", mass=2.0, inertia=[0.1, 0.2, 0.3], pos=[0, 0, -1])
    m.add_joint(td.Spherical(m.ground, b, point=[0, 0, 0], name="ball"))
    res = td.Simulation(m, step=1e-3).run(0.01)
    assert np.isclose(res["ball.force.z"][-1], 2.0 * 9.81, rtol=1e-6)
    assert np.allclose([res[f"ball.torque.{c}"][-1] for c in "xyz"], 0.0, atol=1e-6)


def test_fixed_joint_holds_a_cantilever():
    """A welded body with its centre 1 m out: reaction m g up and torque m g L about +y... (right-hand)."""
    m = td.Model()
    b = m.add_body("b", mass=3.0, inertia=[0.1, 0.2, 0.3], pos=[1.0, 0, 0])
    m.add_joint(td.Fixed(m.ground, b, point=[0, 0, 0], name="weld"))
    res = td.Simulation(m, step=1e-3).run(0.01)
    assert np.isclose(res["weld.force.z"][-1], 3 * 9.81, rtol=1e-6)
    # the weight at +x tries to turn the body about -y; the weld resists with +y... torque on body = -(r × W)
    assert np.isclose(res["weld.torque.y"][-1], -3 * 9.81 * 1.0, rtol=1e-6)


def test_prismatic_and_linear_motor_follow_the_profile():
    m = td.Model(gravity=(0, 0, -9.81))
    s = m.add_body("s", mass=1.0, inertia=[0.1, 0.1, 0.1])
    m.add_joint(td.LinearMotor(m.ground, s, point=[0, 0, 0], axis=[1, 0, 0],
                               position=td.Profile.smooth_ramp(0.0, 1.0, 0.0, 0.5), name="drive"))
    res = td.Simulation(m, step=1e-3, output_step=1e-2).run(1.5)
    exact = np.array([td.Profile.smooth_ramp(0.0, 1.0, 0.0, 0.5).value(t) for t in res.t])
    assert np.max(np.abs(res["s.pos.x"] - exact)) < 1e-6
    assert np.max(np.abs(res["s.pos.z"])) < 1e-8


def test_speed_motor_integrates_a_table_profile():
    prof = td.Profile.table([0.0, 1.0, 2.0], [0.0, 2.0, 2.0])
    assert np.isclose(prof.integral(2.0), 1.0 + 2.0)
    m = td.Model(gravity=(0, 0, 0))
    w = m.add_body("w", mass=1.0, inertia=[0.2, 0.2, 0.2])
    m.add_joint(td.RevoluteMotor(m.ground, w, axis=[0, 0, 1], speed=prof, name="motor"))
    res = td.Simulation(m, step=1e-3, output_step=1e-2).run(2.0)
    angle = 2 * np.arctan2(res["w.quat.e3"], res["w.quat.e0"])
    exact = np.array([prof.integral(t) for t in res.t])
    assert np.max(np.abs(np.angle(np.exp(1j * (angle - exact))))) < 1e-6
    assert np.isclose(res["w.omega.z"][-1], 2.0, rtol=1e-6)


def test_tsda_oscillator_period():
    """Mass on a spring (no gravity): period 2π√(m/k) within 0.1 %."""
    m = td.Model(gravity=(0, 0, 0))
    b = m.add_body("b", mass=2.0, inertia=[1, 1, 1], pos=[1.1, 0, 0])
    m.add_joint(td.Prismatic(m.ground, b, point=[1.1, 0, 0], axis=[1, 0, 0], name="guide"))
    m.add_force(td.TSDA(m.ground, b, [0, 0, 0], [1.1, 0, 0], stiffness=200.0, free_length=1.0, name="spring"))
    res = td.Simulation(m, step=1e-4, output_step=1e-4, record=["b.pos.x", "spring.*"]).run(2.0)
    x = res["b.pos.x"] - 1.0
    idx = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0]
    T = np.mean(np.diff(res.t[idx]))
    assert abs(T / (2 * np.pi * np.sqrt(2.0 / 200.0)) - 1) < 1e-3
    assert np.allclose(res["spring.force"], 200.0 * (res["spring.length"] - 1.0), atol=1e-6)


def _spring_on_guide():
    m = td.Model(gravity=(0, 0, 0))
    b = m.add_body("b", mass=2.0, inertia=[1, 1, 1], pos=[1.1, 0, 0])
    m.add_joint(td.Prismatic(m.ground, b, point=[1.1, 0, 0], axis=[1, 0, 0], name="guide"))
    m.add_force(td.TSDA(m.ground, b, [0, 0, 0], [1.1, 0, 0], stiffness=200.0, free_length=1.0, name="spring"))
    return m


@pytest.mark.parametrize("record, expect", [(["b.pos.x"], []), (["b.pos.x", "guide.force.*"], [False]),
                                            (["b.pos.x", "spring.force"], [True]), (None, [True])])
def test_samples_evaluate_only_the_outputs_they_keep(record, expect, monkeypatch):
    """Element outputs are evaluated at a sample only when one of their series is recorded; joint
    reactions need only the Jacobian; the recorded values do not depend on what else is kept."""
    sim = td.Simulation(_spring_on_guide(), step=1e-3, output_step=1e-2, record=record)
    calls = []
    orig = sim.system.evaluate_outputs

    def spy(state, elements=True):
        calls.append(elements)
        return orig(state, elements=elements)

    monkeypatch.setattr(sim.system, "evaluate_outputs", spy)
    res = sim.run(0.2)
    assert sorted(set(calls)) == expect and len(calls) == (21 if expect else 0)
    full = td.Simulation(_spring_on_guide(), step=1e-3, output_step=1e-2).run(0.2)
    for name in res.columns:
        assert np.array_equal(res[name], full[name]), name
    if "guide.force.x" in res.columns:
        # the guide carries no axial load; its reaction balances nothing but the (zero) lateral forces
        assert np.allclose(res["guide.force.x"], 0.0, atol=1e-9)


def test_diverged_run_keeps_partial_results(tmp_path):
    m = td.Model(gravity=(0, 0, 0))
    b = m.add_body("b", mass=1.0, inertia=[1, 1, 1])
    m.add_force(td.PointForce(b, force=lambda t: [0.0, 0.0, 1.0 if t < 0.05 else float("nan")], name="push"))
    res = td.Simulation(m, step=1e-3, output_step=1e-3).run(0.2)
    assert res.status == "diverged"
    assert "load 'push'" in res.metadata["error"] or "non-finite" in res.metadata["error"]
    assert 40 <= len(res.t) <= 52
    res.save(tmp_path / "r")
    assert td.load(tmp_path / "r").status == "diverged"


def test_load_refuses_incomplete_folder(tmp_path):
    (tmp_path / "x").mkdir()
    with pytest.raises(FileNotFoundError, match="incomplete"):
        td.load(tmp_path / "x")


def test_state_is_plain_data_and_copies():
    m = P.chain(n_links=3)
    sim = td.Simulation(m, step=1e-3)
    sim.run(0.01)
    st = sim.state.copy()
    sim.run(0.02)
    assert st.t == pytest.approx(0.01)
    assert not np.shares_memory(st.q, sim.state.q)


def test_marker_records_point_acceleration():
    """A point at radius 0.3 on a wheel spun up at constant angular acceleration."""
    m = td.Model(gravity=(0, 0, 0))
    w = m.add_body("w", mass=1.0, inertia=[0.1, 0.1, 0.1])
    m.add_joint(td.RevoluteMotor(m.ground, w, axis=[0, 0, 1], speed=td.Profile.linear(rate=2.0), name="motor"))
    m.add_marker("tip", w, [0.3, 0, 0])
    m.add_marker("rim", w, [0, 0.2, 0.05])  # markers are evaluated together: a second one, off the plane
    res = td.Simulation(m, step=1e-4, output_step=1e-2).run(1.0)
    t = res.t[-1]
    om, al = 2.0 * t, 2.0
    a = np.hypot(res["tip.acc.x"][-1], res["tip.acc.y"][-1])
    assert np.isclose(a, 0.3 * np.hypot(om**2, al), rtol=2e-3)
    a = np.hypot(res["rim.acc.x"][-1], res["rim.acc.y"][-1])
    assert np.isclose(a, 0.2 * np.hypot(om**2, al), rtol=2e-3)
    assert abs(res["rim.acc.z"][-1]) < 1e-6 and abs(res["rim.pos.z"][-1] - 0.05) < 1e-6
    assert np.isclose(np.hypot(res["tip.pos.x"][-1], res["tip.pos.y"][-1]), 0.3, atol=1e-6)
    assert np.isclose(np.hypot(res["tip.vel.x"][-1], res["tip.vel.y"][-1]), 0.3 * om, rtol=1e-3)


def test_metadata_of_a_system_without_a_saddle_point_pattern():
    """The recursive formulation has no KKT pattern: metadata() reports None for its size, and the run ends."""
    from trackdyn.formulations.recursive import RecursiveSystem
    from trackdyn.integrators.recursive import RecursiveRK4
    from trackdyn.testing.problems import chain

    m = chain(3)
    system = RecursiveSystem(m)
    assert not hasattr(system, "pattern")
    sim = td.Simulation(m, integrator=RecursiveRK4, step=1e-3, system=system)
    res = sim.run(0.01)
    model = res.metadata["model"]
    assert res.status == "complete" and res.metadata["formulation"] == "recursive"
    assert model["kkt_size"] is None and model["kkt_nnz"] is None
    assert model["bodies"] == 3 and model["constraint_rows"] == system.nc
    # a system with a pattern still reports it
    abs_meta = td.Simulation(chain(3), step=1e-3).metadata()["model"]
    assert abs_meta["kkt_size"] > 0 and abs_meta["kkt_nnz"] > 0
