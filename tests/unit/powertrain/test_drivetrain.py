"""Drivetrain provider: torque from the map, skid steering, brakes, and the velocity Jacobian."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import trackdyn as td
from trackdyn.driver import FullThrottle, Scripted
from trackdyn.formulations import AbsoluteSystem
from trackdyn.formulations.absolute import ForceContext
from trackdyn.powertrain import Drivetrain
from trackdyn.testing.fd import fd_velocity_jacobian, random_state

MAP = [[0.0, 9519.0], [0.88, 9519.0], [2.51, 7140.0], [5.01, 3570.0], [7.52, 2379.0], [10.02, 1784.0],
       [20.04, 892.0]]


def rig(driver, scale=1.0):
    m = td.Model(gravity=(0, 0, 0))
    c = m.add_body("chassis", mass=1000.0, inertia=[100, 200, 250])
    sl = m.add_body("left.sprocket", mass=60.0, inertia=[1, 1.5, 1], pos=[0, 1, 0])
    sr = m.add_body("right.sprocket", mass=60.0, inertia=[1, 1.5, 1], pos=[0, -1, 0])
    dt = Drivetrain(c.index, (sl.index, sr.index), MAP, 10000.0, driver, map_scale=scale)
    s = AbsoluteSystem(m, providers=[dt])
    return s, dt


def evaluate(s, dt, q, v, t=0.0):
    state = td.State(t, q, v, np.zeros(0), np.zeros_like(v), {"driver": np.zeros(2)})
    s.update_kinematics(q, v)
    f = np.zeros((s.nb, 6))
    ctx = ForceContext(t, 1e-3, state, s.kin, f, np.zeros_like(f), None, 0.0, 0.0)
    dt._step_key = None
    dt.accumulate(ctx)
    return dt


def test_full_throttle_torque_follows_the_map():
    s, dt = rig(FullThrottle())
    q, v = s.q0.copy(), np.zeros((3, 6))
    for w, T in [(0.5, 9519.0), (5.01, 3570.0), (15.0, 1784.0 + (892.0 - 1784.0) * (15 - 10.02) / 10.02)]:
        v[1, 4] = w
        v[2, 4] = w
        evaluate(s, dt, q, v)
        assert np.isclose(dt.out[0, 0], T, rtol=1e-9) and np.isclose(dt.out[0, 1], w)
        # torque about +y on the sprocket, reaction on the chassis
        assert np.isclose(dt.Q[0, 10], T) and np.isclose(dt.Q[0, 4], -T)


def test_skid_steering_splits_and_brakes_the_inner_track():
    s, dt = rig(Scripted(throttle=1.0, steering=0.5))
    v = np.zeros((3, 6))
    v[1, 4] = v[2, 4] = 3.0
    evaluate(s, dt, s.q0.copy(), v)
    assert np.isclose(dt.throttle[0], 0.5) and np.isclose(dt.throttle[1], 1.0)  # left is inner (turn left)
    assert dt.out[0, 0] < 0.5 * dt.out[1, 0]


@given(seed=st.integers(0, 2**31 - 1))
def test_velocity_jacobian_matches_finite_differences(seed):
    rng = np.random.default_rng(seed)
    s, dt = rig(Scripted(throttle=0.7, braking=0.3))
    q, v = random_state(rng, 3, vel_scale=3.0)

    def Q(qq, vv):
        evaluate(s, dt, qq, vv)
        return dt.Q[0].copy()

    Q0 = Q(q, v)
    Kv = dt.Kv[0].copy()
    fd = fd_velocity_jacobian(Q, q, v, [0, 1], eps=1e-6)
    # central differences carry a round-off of ~1e-16 |Q| / eps
    assert np.allclose(Kv, fd, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(fd).max()) + 1e-8 * np.abs(Q0).max())


def test_map_against_track_speed():
    """With map_speed = "track" the abscissa is ω_s times the pin-circle radius."""
    s, dt = rig(FullThrottle(), scale=0.245)
    v = np.zeros((3, 6))
    v[1, 4] = v[2, 4] = 5.01 / 0.245
    evaluate(s, dt, s.q0.copy(), v)
    assert np.isclose(dt.out[0, 0], 3570.0, rtol=1e-9)


def test_prescribed_sprocket_speed_servo():
    """SprocketSpeed: a stiff implicit servo; the sprocket follows the ramp within load/gain."""
    from trackdyn.driver import SprocketSpeed

    m = td.Model(gravity=(0, 0, 0))
    c = m.add_body("chassis", mass=1000.0, inertia=[100, 200, 250])
    m.add_joint(td.Fixed(m.ground, c, name="hold"))
    sl = m.add_body("left.sprocket", mass=60.0, inertia=[1, 1.5, 1], pos=[0, 1, 0])
    sr = m.add_body("right.sprocket", mass=60.0, inertia=[1, 1.5, 1], pos=[0, -1, 0])
    for b, nm, y in ((sl, "l", 1.0), (sr, "r", -1.0)):
        m.add_joint(td.Revolute(c, b, point=[0, y, 0], axis=[0, 1, 0], name=f"axle_{nm}"))
        m.add_force(td.RSDA(c, b, axis=[0, 1, 0], damping=50.0, name=f"drag_{nm}"))  # a load torque 50 ω
    dt = Drivetrain(c.index, (sl.index, sr.index), MAP, 10000.0, SprocketSpeed.ramp(0.1, 0.6, 25.0))
    res = td.Simulation(m, step=1e-3, output_step=1e-2, providers=[dt]).run(1.0)
    w = res["left.sprocket.omega.y"]
    exact = np.interp(res.t, [0.1, 0.6], [0.0, 25.0])
    # the servo error is the load torque over the gain (plus the ramp's inertia torque)
    assert np.max(np.abs(w - exact)[res.t > 0.05]) < (50 * 25 + 1.5 * 50) / 1e6 * 2


def test_recording_does_not_change_the_drivers_decisions():
    """A recorded sample shows the driver's decision without taking it for the next step: the PID's
    integral advances by e h at every step whatever the output rate (a sample's evaluation has h = 0)."""
    from trackdyn.driver import PID

    h, n = 1e-3, 60
    runs = {}
    for every in (1, 20, None):
        m = td.Model(gravity=(0, 0, 0))
        c = m.add_body("chassis", mass=1000.0, inertia=[100, 200, 250])
        sl = m.add_body("left.sprocket", mass=60.0, inertia=[1, 1.5, 1], pos=[0, 1, 0])
        sr = m.add_body("right.sprocket", mass=60.0, inertia=[1, 1.5, 1], pos=[0, -1, 0])
        for b in (c, sl, sr):
            m.set_initial_pose(b.name, vel=[1.0, 0.0, 0.0])
        dt = Drivetrain(c.index, (sl.index, sr.index), MAP, 10000.0, PID(speed=1.1, y=None, delay=0.0))
        s = AbsoluteSystem(m, providers=[dt])
        sim = td.Simulation(m, step=h, output_step=h * (every or n), system=s, monitor=False,
                            record=["chassis.vel.x", "driver.throttle"])
        # after step j (and before a sample overwrites it): the decision taken from state j
        applied = []
        res = sim.run(n * h, callback=lambda _s, dt=dt, applied=applied: applied.append(dt.inputs[0]) and False)
        runs[every] = (sim.state, res, np.array(applied))
    # the same dynamics whatever the output rate (before: the integral skipped every sampled step)
    ref = runs[None][0]
    for every in (1, 20):
        st = runs[every][0]
        assert np.array_equal(st.extra["driver"], ref.extra["driver"])
        assert np.array_equal(st.q, ref.q) and np.array_equal(st.v, ref.v)
    e = 1.1 - 1.0  # the chassis keeps its speed (the drive torques are internal; it only pitches a little)
    assert np.isclose(ref.extra["driver"][0], 0.3 / 1.0 + n * e * h, rtol=0, atol=1e-5)
    # the throttle recorded at a sample is the one the step from that sample applies
    th = runs[1][1]["driver.throttle"]
    assert np.array_equal(th[1:n - 1], runs[None][2][1:n - 1])
    assert np.array_equal(runs[20][1]["driver.throttle"][1:], th[20::20])


@given(seed=st.integers(0, 2**31 - 1), kind=st.sampled_from(["pid", "pid-lane", "full", "idle", "brake"]),
       started=st.booleans())
def test_compiled_decision_equals_the_python_drivers(seed, kind, started):
    """Built-in drivers decide in one compiled call (trackdyn.driver._compiled.decide): the same throttle,
    steering, braking, per-track split and memory as their Python ``inputs`` on the same state."""
    from trackdyn.driver import PID, Brake, Idle

    rng = np.random.default_rng(seed)
    delay = float(rng.uniform(0.0, 0.2))
    make = {"pid": lambda: PID(speed=float(rng.uniform(0, 8)), heading=float(rng.uniform(-3, 3)), y=None,
                               kd=float(rng.uniform(0, 0.5)), delay=delay),
            "pid-lane": lambda: PID(speed=3.0, y=float(rng.uniform(-1, 1)), ki=0.5, delay=delay),
            "full": lambda: FullThrottle(delay=delay), "idle": Idle, "brake": Brake}[kind]
    driver = make()
    s, dt = rig(driver)
    assert dt._compiled is not None
    _, py = rig(driver)
    py._compiled = None  # the Python path
    q, v = random_state(rng, 3, vel_scale=3.0)
    s.update_kinematics(q, v)
    mem = np.array([rng.uniform(0, 1), rng.uniform(-1, 1), 1.0 if started else 0.0])
    if kind not in ("pid", "pid-lane"):
        mem = np.zeros(1)
    t = float(rng.uniform(0.0, 0.3))
    state = td.State(t, q, v, np.zeros(0), np.zeros_like(v), {"driver": mem.copy()})
    m_c = dt._decide(state, s.kin, 1e-3)
    m_p = py._decide(state, s.kin, 1e-3)
    np.testing.assert_allclose(dt.inputs, py.inputs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(dt.throttle, py.throttle, rtol=0, atol=1e-12)
    np.testing.assert_allclose(dt.braking, py.braking, rtol=0, atol=1e-12)
    np.testing.assert_allclose(m_c, np.asarray(m_p, float), rtol=0, atol=1e-12)
    assert np.array_equal(state.extra["driver"], mem)  # the state's memory is left alone (staged instead)
