"""robot-6x6 (kim-2012's 6x6 robot, docs/synthesis.md): it stands, drives, steers and runs the ride event.

Every figure is checked against a closed form or an independent equilibrium: the static tyre deflection
(load / 200 kN/m per corner), the sum of the tyre loads (the weight), the speed the PID holds, the sign of the
yaw rate of skid steering, its turning radius against the kinematic one and against the steady turn that the
tyre law's equilibrium predicts.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import fsolve

import trackdyn as td
from trackdyn.assembly.wheeled import static_loads
from trackdyn.experiments.events import ride
from trackdyn.math.quaternion import quat_to_matrix
from trackdyn.mbs.profiles import Profile
from trackdyn.sim.run import prepare

G = 9.81
MASS = 2000.0  # kg, the class's 2 t (robot-6x6.toml)


def _run(driver, t_end, step=1e-3, **kw):
    sc = td.Scenario(vehicle="robot-6x6", terrain=td.terrain.Flat(), driver=driver, t_end=t_end, step=step, **kw)
    prep = prepare(sc)
    res = prep.sim.run(sc.t_end)
    assert res.metadata.get("status", "ok") != "diverged"
    return prep, res.frame()


def test_it_settles_on_its_tyres_at_load_over_stiffness():
    """Dropped from 20 mm above its static pose, free to roll (no brake: a braked wheel on a trailing arm holds
    the arm by the tyre's friction, and the loads stay where the landing left them), after 3 s: each tyre
    deflects its load / 200 kN/m, the loads add up to the weight, and each is a sixth of it (the centre of mass
    is over the middle wheels)."""
    prep, df = _run(td.drivers.Idle(), 3.0, step=5e-4, drop=0.02)
    spec = prep.spec
    assert df["chassis.pos.z"].iloc[0] - df["chassis.pos.z"].iloc[-1] > 0.019  # it did fall
    names = [f"{s}.wheel[{k}]" for s in ("left", "right") for k in range(3)]
    last = df.iloc[-1]
    fz = np.array([last[f"{n}.tyre.force.z"] for n in names])
    defl = np.array([last[f"{n}.tyre.deflection"] for n in names])
    # measured: deflection error 1e-10 m of 0.01635 m, load sum error 7e-7 of the weight, loads W/6 within 2e-6
    assert np.abs(defl - fz / spec.tyre.stiffness).max() < 1e-6 * 0.01635 + 1e-9
    assert defl == pytest.approx(MASS * G / 6 / 200e3, rel=1e-3)
    assert fz.sum() == pytest.approx(MASS * G, rel=1e-3)
    assert fz == pytest.approx(static_loads(spec).ravel(), rel=1e-3)
    assert abs(last["chassis.vel.z"]) < 1e-4  # measured 3e-6 m/s


def test_it_drives_to_the_commanded_speed_straight():
    """The PID driver (speed 3 m/s, lane y = 0) from rest: the speed over the last second within 1 % of 3 m/s,
    the lane held to a millimetre, no yaw."""
    prep, df = _run(td.drivers.PID(speed=3.0, y=0.0), 10.0)
    tail = df[df.t >= 9.0]
    v = tail["chassis.vel.x"].to_numpy()
    assert np.abs(v - 3.0).max() < 0.03  # measured 0.005
    assert np.abs(df["chassis.pos.y"]).max() < 1e-3
    assert np.abs(df["chassis.omega.z"]).max() < 1e-3
    assert df["driver.throttle"].max() > 0.0  # the motors drove it


@pytest.mark.parametrize("faster, sign", [("right", 1.0), ("left", -1.0)])
def test_skid_steering_turns_towards_the_slower_side(faster, sign):
    """Prescribed wheel speeds (SideSpeed), one side 10 % faster: the vehicle yaws towards the slower side
    (left turn, positive yaw rate, when the right side is faster)."""
    w_slow, w_fast = 1.0 / 0.3, 1.1 / 0.3
    left, right = (w_slow, w_fast) if faster == "right" else (w_fast, w_slow)
    drv = td.drivers.SideSpeed(left=Profile.table([0.0, 0.5], [0.0, left]),
                               right=Profile.table([0.0, 0.5], [0.0, right]))
    _, df = _run(drv, 4.0)
    r = df[df.t >= 3.0]["chassis.omega.z"].to_numpy()
    assert np.all(sign * r > 0.005)


def _steady_turn(positions, loads, spins, mass, tyre, radius, guess):
    """The steady turn (forward speed V, lateral speed v_y, yaw rate r, heading frame) in which the tyre law's
    forces (contact points under the wheel centres at ``positions`` from the centre of mass, vertical loads
    ``loads``, wheel spins ``spins``) balance the centripetal force and give no yaw moment."""

    def forces(V, vy, r):
        F = np.zeros((len(loads), 2))
        for i, ((x, y), fz, w) in enumerate(zip(positions, loads, spins)):
            vx_i, vy_i = V - r * y, vy + r * x
            s = np.array([w * radius - vx_i, -vy_i]) / max(abs(vx_i), abs(w * radius), tyre.v_min)
            n = np.hypot(*s)
            F[i] = tyre.friction * fz * math.tanh(n / tyre.slip_ref) * s / n
        return F

    def residual(u):
        V, vy, r = u
        F = forces(V, vy, r)
        return [F[:, 0].sum() + mass * r * vy, F[:, 1].sum() - mass * r * V,
                float((positions[:, 0] * F[:, 1] - positions[:, 1] * F[:, 0]).sum())]

    return fsolve(residual, guess, xtol=1e-12)


def test_turning_radius_against_the_kinematic_and_the_steady_turn():
    """Left wheels at 1.00 m/s, right at 1.05 m/s rim speed, 25 s on flat ground.

    Kinematic skid steer (no slip): R_kin = B/2 (v_l + v_r) / (v_r - v_l) = 25.6 m. The tyres slip (the front
    and rear wheels slide sideways, the sides' longitudinal forces make the yaw moment), so the turn is wider:
    R > R_kin. The steady turn that the tyre law's equilibrium gives with the run's own wheel loads (the
    suspension's load transfer is the run's; the equilibrium of the forces is independent of it) matches the
    run's yaw rate and speed within 1 % (measured 0.17 % and 0.03 %; R = 65 m, 2.5 R_kin)."""
    R = 0.3
    vl, vr = 1.0, 1.05
    drv = td.drivers.SideSpeed(left=Profile.table([0.0, 1.0], [0.0, vl / R]),
                               right=Profile.table([0.0, 1.0], [0.0, vr / R]))
    prep, _ = _run(drv, 25.0)
    sys_, st, spec = prep.sim.system, prep.sim.state, prep.spec
    mass = np.asarray(sys_.mass)
    q, v = st.q, st.v
    com = (mass[:, None] * q[:, :3]).sum(0) / mass.sum()
    vcom = (mass[:, None] * v[:, :3]).sum(0) / mass.sum()
    c = list(sys_.body_names).index("chassis")
    Rc = quat_to_matrix(q[c, 3:])
    psi = math.atan2(Rc[1, 0], Rc[0, 0])
    H = np.array([[math.cos(psi), -math.sin(psi)], [math.sin(psi), math.cos(psi)]])  # heading frame -> world
    V_sim, vy_sim = H.T @ vcom[:2]
    r_sim = (Rc @ v[c, 3:])[2]
    tyres = prep.contact
    positions = np.array([H.T @ (q[b, :2] - com[:2]) for b in tyres.body])
    loads = tyres.out[:, 2].copy()
    spins = np.array([vl / R if n.startswith("left") else vr / R for n in tyres.names])
    V, vy, r = _steady_turn(positions, loads, spins, mass.sum(), spec.tyre, spec.wheels.radius, [V_sim, 0.0, r_sim])
    assert r_sim > 0
    R_kin = spec.wheels.lateral_offset * (vl + vr) / (vr - vl)
    assert V_sim / r_sim > R_kin
    assert r == pytest.approx(r_sim, rel=0.01)
    assert V == pytest.approx(V_sim, rel=0.01)


def test_the_ride_event_runs_and_records_the_conventional_series(tmp_path):
    """``trackdyn event ride --vehicle robot-6x6`` on a shorter ISO 8608 class D road: its figures, and the
    series under the project's names (chassis.*, driver.acc.z, left.wheel[k].pos.z, the tyres' loads)."""
    r = ride("robot-6x6", length=12.0, speed=5.0, out=tmp_path)
    assert r["status"] == "stopped" and r["stop_reason"] == "passed"
    assert 0.02 < r["rms_g"] < 1.0 and r["peak_g"] >= r["rms_g"]
    assert r["fidelity"] == "links" and r["dominant_frequency_hz"] > 0
    cols = pd.read_parquet(tmp_path / "trials" / "run" / "timeseries.parquet").columns
    for name in ("chassis.pos.z", "chassis.acc.z", "driver.acc.z", "left.wheel[0].pos.z", "right.wheel[2].pos.z",
                 "left.wheel[1].tyre.force.z", "left.wheel[0].torque"):
        assert name in cols, name
    assert not any("roadwheel" in c or "sprocket" in c or "shoe" in c for c in cols)


def test_fidelities_without_wheels_and_obstacle_events_refuse_it():
    with pytest.raises(ValueError, match="runs on wheels, and the 'massless' fidelity models tracks only"):
        ride("robot-6x6", fidelity="massless", length=5.0)
    from trackdyn.experiments.events import step_climb_limit

    with pytest.raises(ValueError, match="event step-climb: 'robot-6x6' runs on point tyres"):
        step_climb_limit("robot-6x6")
