"""robot-6x6 on the ``synthesis`` fidelity (kim-2012's joint-coordinate subsystems on a free chassis) against
the same vehicle on ``links`` (the absolute formulation), through the normal runner and recorder.

The two share the model (bodies, springs, tyres, motors, driver) and nothing of the stepping: links steps
the absolute coordinates with multipliers by the linearised implicit Euler, synthesis the chassis and the
joint angles by AB3 (and HHT on the subsystems). Their differences are step errors; each tolerance is a few
times the difference measured (in the comments).
"""

import numpy as np
import pytest

import trackdyn as td
from trackdyn.experiments.events import ride
from trackdyn.sim.run import prepare

G = 9.81
MASS = 2000.0  # kg (robot-6x6.toml)
WHEELS = [f"{s}.wheel[{k}]" for s in ("left", "right") for k in range(3)]


def _run(fidelity, driver, t_end, step=None, integrator=None, **kw):
    sc = td.Scenario(vehicle="robot-6x6", fidelity=fidelity, terrain=td.terrain.Flat(), driver=driver, t_end=t_end,
                     step=step, integrator=integrator, **kw)
    prep = prepare(sc)
    res = prep.sim.run(sc.t_end)
    assert res.status == "complete", res.metadata.get("error")
    return prep, res.frame()


@pytest.fixture(scope="module")
def links_cruise():
    return _run("links", td.drivers.PID(speed=3.0, y=0.0), 3.0, step=5e-4)[1]


def test_it_settles_with_the_tyres_carrying_the_weight():
    """Dropped 5 mm, free to roll, 2 s at the default (explicit-implicit, 2.5e-4 s): the six tyre loads add
    up to the weight and each is a sixth of it; the chassis stands where links' does."""
    _, df = _run("synthesis", td.drivers.Idle(), 2.0, drop=0.005)
    _, ref = _run("links", td.drivers.Idle(), 2.0, step=5e-4, drop=0.005)
    last = df.iloc[-1]
    fz = np.array([last[f"{n}.tyre.force.z"] for n in WHEELS])
    # measured: sum 2.6e-6 below the weight, each load within 5.4e-6 of W/6, height 1e-8 m from links'
    assert fz.sum() == pytest.approx(MASS * G, rel=1e-4)
    assert fz == pytest.approx(np.full(6, MASS * G / 6), rel=1e-4)
    assert abs(last["chassis.pos.z"] - ref["chassis.pos.z"].iloc[-1]) < 1e-5


@pytest.mark.parametrize("integrator, step, tol_v, tol_z", [
    # measured: end speed 1.4e-4 m/s from links', height over the run 4.9e-4 m (at 0.65 s, the launch's pitch
    # and squat), speed over the run 0.019 m/s
    ("synthesis-ab3", 2.5e-4, 1e-3, 1.5e-3),
    # measured 4.0e-4 m/s, 5.4e-4 m, 0.019 m/s
    ("synthesis-ab3-hht", 1e-3, 2e-3, 1.5e-3),
])
def test_it_cruises_at_3_mps_as_links_does(links_cruise, integrator, step, tol_v, tol_z):
    """The PID driver (3 m/s, lane y = 0) from rest, 3 s: speed, height and lane against links' run; the series
    are links' (chassis, wheels, tyres, motors, driver) without the joints' reactions. For scale, links' own
    run at 2.5e-4 s stands 3.2e-4 m and 0.011 m/s from its 5e-4 s run over the launch."""
    prep, df = _run("synthesis", td.drivers.PID(speed=3.0, y=0.0), 3.0, step=step, integrator=integrator)
    ref = links_cruise
    assert df["chassis.vel.x"].iloc[-1] == pytest.approx(3.1, abs=0.1)  # still over the PID's overshoot
    assert abs(df["chassis.vel.x"].iloc[-1] - ref["chassis.vel.x"].iloc[-1]) < tol_v
    assert np.abs(df["chassis.pos.z"].to_numpy() - ref["chassis.pos.z"].to_numpy()).max() < tol_z
    assert np.abs(df["chassis.vel.x"].to_numpy() - ref["chassis.vel.x"].to_numpy()).max() < 0.05
    assert abs(df["chassis.pos.y"].iloc[-1]) < 1e-9
    missing = set(ref.columns) - set(df.columns)
    assert missing and all(c.endswith(tuple(f".{p}.{x}" for p in ("force", "torque") for x in "xyz")) and
                           (".pivot." in c or ".axle." in c) for c in missing), sorted(missing)[:5]
    assert set(df.columns) <= set(ref.columns)
    assert prep.sim.metadata()["settings"]["integrator"] == integrator


def test_skid_steering_on_prescribed_wheel_speeds_matches_links():
    """SideSpeed, the right side 10 % faster (ramped over 0.5 s), 3 s: the yaw rate and speed of the last
    0.5 s against links'. The wheel-speed servo (1e6 N m s/rad) sits in the implicit subsystems; its
    reference is taken at each evaluation's own time (at t + h, one step ahead, the launch went wrong: yaw
    rate -9.6 rad/s)."""
    from trackdyn.mbs.profiles import Profile

    def drv():
        return td.drivers.SideSpeed(left=Profile.table([0.0, 0.5], [0.0, 1.0 / 0.3]),
                                    right=Profile.table([0.0, 0.5], [0.0, 1.1 / 0.3]))

    _, df = _run("synthesis", drv(), 3.0, step=1e-3)
    _, ref = _run("links", drv(), 3.0, step=1e-3)
    r, r_ref = (d[d.t >= 2.5]["chassis.omega.z"].mean() for d in (df, ref))
    # measured: yaw rate 0.02089 against 0.02093 rad/s, speed 1.0390 against 1.0389 m/s
    assert r > 0.015 and r == pytest.approx(r_ref, rel=0.01)
    assert df["chassis.vel.x"].iloc[-1] == pytest.approx(ref["chassis.vel.x"].iloc[-1], abs=2e-3)


def test_the_ride_event_runs_on_synthesis():
    """``trackdyn event ride --vehicle robot-6x6 --fidelity synthesis`` (class D road, 6 m, 5 m/s), explicit
    AB3 at 2.5e-4 s: it passes, and the driver's vertical acceleration RMS and peak are links' within 2 %."""
    r = ride("robot-6x6", fidelity="synthesis", length=6.0, speed=5.0,
             scenario_options={"integrator": "synthesis-ab3"})
    ref = ride("robot-6x6", fidelity="links", length=6.0, speed=5.0)
    assert r["status"] == "stopped" and r["stop_reason"] == "passed" and r["fidelity"] == "synthesis"
    # measured on 10 m (default integrator): RMS 0.1800 g against 0.1791 g, peak 0.5560 g against 0.5531 g
    assert r["rms_g"] == pytest.approx(ref["rms_g"], rel=0.02)
    assert r["peak_g"] == pytest.approx(ref["peak_g"], rel=0.02)


@pytest.mark.parametrize("kw, match", [
    ({"vehicle": "crawler"}, "'crawler' carries its running gear on an undercarriage frame"),
    ({"options": {"contact.method": "nsc"}}, "NSC contact is not built on the synthesis fidelity"),
    ({"integrator": "euler-implicit-linearized"}, "the 'synthesis' fidelity steps with its own"),
    ({"solver": "minres"}, "scenario.solver = 'minres'"),
    ({"options": {"beta": 0.3}}, r"scenario.options \['beta'\]: unknown option"),
    ({"integrator": "synthesis-ab3", "driver": td.drivers.SideSpeed(left=1.0, right=1.0)},
     "use 'synthesis-ab3-hht'"),
])
def test_it_refuses_what_it_cannot_do_by_name(kw, match):
    sc = td.Scenario(**({"vehicle": "robot-6x6", "fidelity": "synthesis", "t_end": 0.01} | kw))
    with pytest.raises(ValueError, match=match):
        prepare(sc)


def test_a_seat_rides_on_synthesis_as_on_links():
    """A seat (a prismatic slide on the chassis with a spring-damper) is a one-body prismatic chain subsystem:
    over the same class D road at 5 m/s its relative displacement and absolute acceleration are links'.
    Test values, not a vehicle's: 40 kg on 1.6e4 N/m and 480 N s/m (3.2 Hz, 0.3 of critical), 0.3 m above the
    chassis's centre of mass. Measured (6 m): rel RMS 1.22 / 1.22 mm, acc RMS 0.627 / 0.623 m/s², acc peak
    1.685 / 1.671 m/s² (synthesis / links): AB3 and HHT against links' first-order Euler on the seat's 3.2 Hz
    mode and the 4.6 Hz pitch-bounce, well inside 3 %."""
    spec = td.vehicles.get("robot-6x6")
    c = spec.chassis.com
    spec = spec.replace({"seat": {"mass": 40.0, "stiffness": 1.6e4, "damping": 480.0,
                                  "position": (c[0], c[1], c[2] + 0.3)}})
    r = ride(spec, fidelity="synthesis", length=6.0, speed=5.0)
    ref = ride(spec, fidelity="links", length=6.0, speed=5.0)
    assert r["status"] == "stopped" and r["stop_reason"] == "passed"
    for key in ("rel", "acc"):
        assert r["seat"][key]["rms"] == pytest.approx(ref["seat"][key]["rms"], rel=0.03)
        assert r["seat"][key]["peak"] == pytest.approx(ref["seat"][key]["peak"], rel=0.03)
    assert r["seat"]["rel"]["rms"] > 5e-4  # the seat moves: the check is not of a seat at rest
