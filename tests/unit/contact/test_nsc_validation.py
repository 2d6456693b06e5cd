"""Non-smooth contact against closed forms: incline, impacts, a stack, rolling, joints with contact.

Each case runs the ``nsc-euler`` stepper (:mod:`trackdyn.integrators.nsc`) and asserts the figures of
issue #29 (docs/contact-nsc.md lists the measured values).
"""

import math

import numpy as np
import pytest

import trackdyn as td
from trackdyn import terrain
from trackdyn.contact import Material, shapes
from trackdyn.contact.nsc import NscContact
from trackdyn.math.quaternion import quat_to_matrix

G = 9.81
SOLVERS = ("psor", "bb", "apgd", "newton")


def _sim(model, nsc, h, solver="apgd", tol=1e-9, **opts):
    return td.Simulation(model, integrator="nsc-euler", step=h, providers=[nsc], monitor=False,
                         contact_solver=solver, contact_tolerance=tol, **opts)


def _box_on_incline(theta, mu):
    """A 0.2 x 0.2 x 0.1 m box of 2 kg resting on the plane through the origin with slope theta (x down-hill
    is (cos θ, 0, -sin θ))."""
    n = np.array([math.sin(theta), 0.0, math.cos(theta)])
    m = td.Model()
    box = m.add_body("box", mass=2.0, inertia=[0.01, 0.01, 0.01], pos=(0.05 * n).tolist(),
                     quat=[math.cos(theta / 2), 0.0, math.sin(theta / 2), 0.0])
    mat = Material("steel", friction=mu)
    nsc = NscContact(m, terrain=terrain.Plane(normal=n, point=(0, 0, 0), material=mat))
    nsc.add_shape(box, shapes.Box([0.2, 0.2, 0.1]), material=mat)
    return m, nsc, n, np.array([math.cos(theta), 0.0, -math.sin(theta)])


@pytest.mark.parametrize("solver", SOLVERS)
def test_block_on_incline_sticks_when_mu_exceeds_tan_theta(solver):
    theta = math.radians(30.0)
    m, nsc, _, _ = _box_on_incline(theta, math.tan(theta) + 0.01)
    sim = _sim(m, nsc, 1e-3, solver)
    x0 = sim.state.q[0, :3].copy()
    for _ in range(2000):
        sim.step()
    drift = np.linalg.norm(sim.state.q[0, :3] - x0)
    assert drift < 1e-9, drift
    assert sim.integrator.counters["contact_unconverged"] == 0
    assert sim.integrator.last["contacts"] == 4


@pytest.mark.parametrize(("solver", "friction"), [(s, "coulomb") for s in SOLVERS] + [("apgd", "anitescu")])
def test_block_on_incline_slides_at_g_sin_minus_mu_cos(solver, friction):
    theta = math.radians(30.0)
    mu = math.tan(theta) - 0.01
    m, nsc, n, down = _box_on_incline(theta, mu)
    sim = _sim(m, nsc, 1e-3, solver, friction=friction)
    speeds = []
    for _ in range(2000):
        sim.step()
        speeds.append(sim.state.v[0, :3] @ down)
    # measured from 0.5 s on: under the Anitescu relaxation the first step's impulse also starts the box's
    # normal drift off the plane (docs/contact-nsc.md)
    a = (speeds[1999] - speeds[499]) / 1.5
    a_exact = G * (math.sin(theta) - mu * math.cos(theta))
    assert abs(a - a_exact) < 1e-6 * a_exact, (a, a_exact)
    lift = (sim.state.q[0, :3] - 0.05 * n) @ n
    if friction == "coulomb":
        assert abs(lift) < 1e-9, lift
    else:
        # the relaxation lifts a sliding body by μ |v_t| h: 0.1 mm here, within the envelope
        assert 0.9 * mu * speeds[-1] * 1e-3 < lift < 1.1 * mu * speeds[-1] * 1e-3, lift


def test_inexact_coulomb_rounds_reach_the_exact_rounds_result():
    """friction_forcing > 0 solves the early Coulomb rounds loosely; the last round is still solved to the
    tolerance, so the sliding box's trajectory is that of rounds all solved to it (to the tolerance's order)."""
    theta = math.radians(30.0)
    runs = {}
    for forcing in (0.0, 0.1, 0.5):
        m, nsc, _, _ = _box_on_incline(theta, math.tan(theta) - 0.01)
        sim = _sim(m, nsc, 1e-3, "apgd", friction="coulomb", friction_forcing=forcing)
        for _ in range(300):
            sim.step()
            assert sim.integrator.last["contact_residual"] <= 1e-9
        assert sim.integrator.counters["contact_unconverged"] == 0
        runs[forcing] = (sim.state.q[0, :3].copy(), sim.state.v[0, :3].copy())
    for forcing in (0.1, 0.5):
        np.testing.assert_allclose(runs[forcing][0], runs[0.0][0], atol=1e-9)
        np.testing.assert_allclose(runs[forcing][1], runs[0.0][1], atol=1e-8)


@pytest.mark.parametrize("bad", [-0.1, 1.0, "0.1", True])
def test_friction_forcing_outside_zero_one_is_refused(bad):
    m, nsc, _, _ = _box_on_incline(0.1, 0.5)
    with pytest.raises(ValueError, match="friction_forcing"):
        _sim(m, nsc, 1e-3, friction_forcing=bad)


@pytest.mark.parametrize("e", [0.0, 0.5, 0.8])
def test_sphere_drop_bounces_to_e_squared_h(e):
    r, h0 = 0.1, 0.5
    m = td.Model()
    ball = m.add_body("ball", mass=1.0, inertia=[4e-3] * 3, pos=[0, 0, r + h0])
    nsc = NscContact(m, terrain=terrain.Flat(), restitution=e)
    nsc.add_shape(ball, shapes.Sphere(r), material=Material("steel", friction=0.3))
    sim = _sim(m, nsc, 1e-4)
    z = np.empty(9000)
    for k in range(z.size):
        sim.step()
        z[k] = sim.state.q[0, 2] - r
    hit = int(np.argmin(z[:4000]))
    assert z[:4000].min() > -1e-12  # no penetration at impact
    rebound = z[hit:].max()
    if e == 0.0:
        assert rebound < 1e-12, rebound
        assert abs(sim.state.v[0, 2]) < 1e-9  # at rest to the contact tolerance (m/s)
    else:
        assert abs(rebound - e * e * h0) < 0.01 * e * e * h0, (rebound, e * e * h0)


def _stack(n_boxes=5):
    m = td.Model()
    mat = Material("wood", friction=0.5)
    nsc = NscContact(m, terrain=terrain.Flat(material=mat))
    z = 0.0
    for k in range(n_boxes):
        a, hz = 0.4 - 0.05 * k, 0.1  # each box narrower than the one below (equal boxes meet edge on edge)
        inertia = [(a * a + hz * hz) / 12, (a * a + hz * hz) / 12, a * a / 6]
        b = m.add_body(f"box{k}", mass=1.0, inertia=inertia, pos=[0.0, 0.0, z + hz / 2])
        nsc.add_shape(b, shapes.Box([a, a, hz]), material=mat)
        z += hz
    return m, nsc


def stack_at_rest(solver, steps=5000):
    """The 5-box stack stepped ``steps`` steps at h = 2e-3: (simulation, largest drift (m), largest energy gain
    (J)); bench/nsc_validation_newton.py reports its figures."""
    m, nsc = _stack()
    sim = _sim(m, nsc, 2e-3, solver)
    s = sim.system
    q0 = sim.state.q.copy()
    E0 = s.kinetic_energy(sim.state.v) + s.potential_energy(sim.state.q)
    gain = -np.inf
    for _ in range(steps):
        sim.step()
        gain = max(gain, s.kinetic_energy(sim.state.v) + s.potential_energy(sim.state.q) - E0)
    return sim, float(np.abs(sim.state.q[:, :3] - q0[:, :3]).max()), float(gain)


@pytest.mark.parametrize("solver", ["psor", "bb", "newton"])
def test_stack_of_five_boxes_rests_ten_seconds(solver):
    sim, drift, gain = stack_at_rest(solver)
    assert drift < 1e-3, drift
    assert gain < 1e-9, gain
    assert sim.integrator.last["contacts"] == 20


@pytest.mark.parametrize("support", ["plane", "box"])
def test_cylinder_rolls_down_incline_without_slip(support):
    """Solid cylinder (I = m r²/2) on a 20° incline with μ = 0.5 > tan θ / 3: a = 2/3 g sin θ, v = ω r. The
    incline is a terrain plane, or a box fixed to the ground (the wheel-on-shoe pair of a track)."""
    theta, r, mass = math.radians(20.0), 0.2, 3.0
    n = np.array([math.sin(theta), 0.0, math.cos(theta)])
    down = np.array([math.cos(theta), 0.0, -math.sin(theta)])
    m = td.Model()
    Iy = 0.5 * mass * r * r
    Ix = mass * (3 * r * r + 0.1 ** 2) / 12
    cyl = m.add_body("wheel", mass=mass, inertia=[Ix, Iy, Ix], pos=(r * n).tolist())
    mat = Material("rubber", friction=0.5)
    if support == "plane":
        nsc = NscContact(m, terrain=terrain.Plane(normal=n, point=(0, 0, 0), material=mat))
    else:
        nsc = NscContact(m)
        nsc.add_shape(m.ground, shapes.Box([20.0, 2.0, 0.2], pos=(-0.1 * n).tolist(),
                                           quat=[math.cos(theta / 2), 0.0, math.sin(theta / 2), 0.0]), material=mat)
    nsc.add_shape(cyl, shapes.Cylinder(r, 0.1, slices=1), material=mat)
    sim = _sim(m, nsc, 1e-3)
    speed, spin = [], []
    for _ in range(1500):
        sim.step()
        speed.append(sim.state.v[0, :3] @ down)
        spin.append(sim.state.v[0, 4])  # body y = world y: the axle
    a = (speed[-1] - speed[499]) / 1.0
    a_exact = 2.0 / 3.0 * G * math.sin(theta)
    assert abs(a - a_exact) < 1e-6 * a_exact, (a, a_exact)
    # no slip: the contact point's speed ω r - v vanishes
    assert abs(spin[-1] * r - speed[-1]) < 1e-8 * speed[-1], (spin[-1] * r, speed[-1])


def test_pinned_rod_on_the_ground_shares_its_weight_with_the_pin():
    """A horizontal rod pinned at one end, its other end resting on the ground through a sphere: joint and
    contact in one problem; each carries half the weight (statics of a beam on two supports). Frictionless:
    with friction the tip's tangential force has a lever arm about the pin (the tip is r below it) and the
    split is statically indeterminate."""
    L, r, mass = 1.0, 0.05, 4.0
    m = td.Model()
    rod = m.add_body("rod", mass=mass, inertia=[0.01, mass * L * L / 12, mass * L * L / 12], pos=[L / 2, 0, r])
    m.add_joint(td.Revolute(m.ground, rod, point=[0, 0, r], axis=[0, 1, 0], name="pin"))
    mat = Material("steel", friction=0.0)
    nsc = NscContact(m, terrain=terrain.Flat(material=mat))
    nsc.add_shape(rod, shapes.Sphere(r, pos=[L / 2, 0, 0]), material=mat)
    sim = _sim(m, nsc, 1e-3, "psor")
    res = sim.run(0.5)
    df = res.frame()
    Fc = df["rod.contact.force.z"].iloc[-1]
    assert abs(Fc - 0.5 * mass * G) < 1e-6 * mass * G, Fc
    assert abs(df["pin.force.z"].iloc[-1]) == pytest.approx(0.5 * mass * G, rel=1e-6)
    assert abs(sim.state.q[0, 2] - r) < 1e-9


def _painleve_rod(v0, friction, mu=3.0):
    """A thin rod (capsule, 1 m, 1 kg) at 30° above the ground, its lower tip touching it and sliding at v0
    along x (its upper end is towards +x). The tip's normal acceleration under sliding friction is
    ``N/m (1 + 3cos²θ ∓ 3μ sinθ cosθ) - g`` (- for v0 < 0): Painlevé's paradox for v0 < 0 and
    μ > (1 + 3cos²θ)/(3 sinθ cosθ) = 2.50."""
    theta, half, r, mass = math.radians(30.0), 0.5, 0.01, 1.0
    m = td.Model()
    axis = np.array([math.cos(theta), 0.0, math.sin(theta)])
    centre = np.array([0.0, 0.0, r]) + half * axis
    tilt = math.pi / 2 - theta  # about y: body z onto the rod's axis
    I_t = mass * (2 * half) ** 2 / 12
    rod = m.add_body("rod", mass=mass, inertia=[I_t, I_t, 1e-5], pos=centre.tolist(),
                     quat=[math.cos(tilt / 2), 0.0, math.sin(tilt / 2), 0.0], vel=[v0, 0.0, 0.0])
    mat = Material("steel", friction=mu)
    nsc = NscContact(m, terrain=terrain.Flat(material=mat))
    nsc.add_shape(rod, shapes.Capsule(r, 2 * half, axis=[0, 0, 1]), material=mat)
    sim = _sim(m, nsc, 1e-3, friction=friction)
    s = sim.system

    def tip_velocity():
        R = quat_to_matrix(sim.state.q[0, 3:])
        lever = -half * (R @ np.array([0.0, 0.0, 1.0])) - np.array([0.0, 0.0, r])
        return sim.state.v[0, :3] + np.cross(R @ sim.state.v[0, 3:], lever)

    def energy():
        return s.kinetic_energy(sim.state.v) + s.potential_energy(sim.state.q)

    return sim, nsc, tip_velocity, energy


def test_painleve_rod_without_paradox_slides_with_coulomb_friction():
    """v0 > 0: the tip slides, friction = μ × normal force, the tip stays on the ground (Coulomb fixed point)."""
    sim, nsc, tip_velocity, energy = _painleve_rod(2.0, "coulomb")
    E0 = energy()
    for _ in range(30):
        sim.step()
        _, imp, _ = nsc._staged
        assert imp[0, 0] == pytest.approx(3.0 * -imp[0, 2], rel=1e-6)  # on the ground: (μ N, 0, -N)
        # the tip stays on the ground: the velocity-level constraint leaves the O(h² l ω²) drift of the
        # turning rod (4e-8 m after 30 steps), which the stabilisation takes back at the next step
        assert abs(nsc.contacts()["gap"][0]) < 1e-7
    assert 1.6 < tip_velocity()[0] < 2.0
    assert energy() < E0
    # the first step starts from no slip estimate: its fixed point takes more than the 50 iterations allowed
    assert sim.integrator.counters["friction_unconverged"] <= 1


def test_painleve_rod_in_the_paradox_jams_and_the_solver_says_so():
    """v0 < 0, μ = 3 > 2.50: no sliding solution. The Coulomb fixed point does not converge at the first step
    (counted in ``friction_unconverged``), its last iterate is a tangential impact: the tip stops within two
    steps and the rod leaves the ground. The convex (Anitescu) relaxation jams the tip at the first step and
    keeps it on the ground, pivoting. Neither gains energy (docs/contact-nsc.md)."""
    sim, nsc, tip_velocity, energy = _painleve_rod(-2.0, "coulomb")
    E0 = energy()
    sim.step()
    assert sim.integrator.counters["friction_unconverged"] == 1
    sim.step()
    assert abs(tip_velocity()[0]) < 0.01
    assert tip_velocity()[2] > 0.1  # lift-off
    for _ in range(20):
        sim.step()
        assert energy() < E0
    assert nsc.contacts()["gap"][0] > 1e-3 and nsc.body_out[0, 2] == 0.0  # in the air

    sim, nsc, tip_velocity, energy = _painleve_rod(-2.0, "anitescu")
    E0 = energy()
    sim.step()
    assert np.linalg.norm(tip_velocity()) < 0.01
    for _ in range(20):
        sim.step()
        assert energy() < E0
        assert np.linalg.norm(tip_velocity()) < 0.01
    assert sim.integrator.last["contacts"] == 1


def test_anitescu_relaxation_lifts_a_fast_sliding_contact():
    """The convex relaxation asks u_n ≥ μ |u_t|: a tip sliding at 2 m/s with μ = 3 hops off at once, where
    Coulomb friction keeps it on the ground (the previous test); why ``friction="coulomb"`` is the default."""
    sim, _, tip_velocity, _ = _painleve_rod(2.0, "anitescu")
    sim.step()
    assert tip_velocity()[2] > 1.0


@pytest.mark.parametrize("solver", SOLVERS)
def test_rolling_friction_decelerates_a_rolling_ball(solver):
    """A solid ball (I = 2/5 m r²) rolling on flat ground with rolling friction c_r = 2 mm: the resisting
    torque c_r m g gives a = -5 c_r g / (7 r) while it rolls without slip (μ = 0.5)."""
    r, mass, c_r, v0 = 0.1, 2.0, 0.002, 1.0
    m = td.Model()
    ball = m.add_body("ball", mass=mass, inertia=[0.4 * mass * r * r] * 3, pos=[0, 0, r], vel=[v0, 0, 0],
                      omega=[0, v0 / r, 0])
    mat = Material("steel", friction=0.5)
    nsc = NscContact(m, terrain=terrain.Flat(material=mat), rolling_friction=c_r)
    nsc.add_shape(ball, shapes.Sphere(r), material=mat)
    sim = _sim(m, nsc, 1e-3, solver)
    speed, spin = [], []
    for _ in range(500):
        sim.step()
        speed.append(sim.state.v[0, 0])
        spin.append(sim.state.v[0, 4])
    a = (speed[-1] - speed[99]) / 0.4
    a_exact = -5.0 * c_r * G / (7.0 * r)
    assert abs(a - a_exact) < 1e-6 * abs(a_exact), (a, a_exact)
    assert abs(spin[-1] * r - speed[-1]) < 1e-8, (spin[-1] * r, speed[-1])
    assert sim.integrator.last["contacts"] == 2  # the contact and its rolling block


@pytest.mark.parametrize(("solver", "rolling"), [(s, 0.0) for s in SOLVERS] + [("apgd", 0.002)])
def test_spinning_friction_stops_a_spinning_ball_at_c_s_m_g_over_i(solver, rolling):
    """A solid ball spinning about the vertical on flat ground with spinning friction c_s = 2 mm: the torque
    c_s m g decelerates the spin at c_s m g / I (4.905 rad/s² here) until it stops at 1.02 s, then holds it
    at rest (the torque within its limit); the ball does not move. With rolling friction as well, the
    contact carries both blocks and the spin is the same (it does not roll)."""
    r, mass, c_s, w0 = 0.1, 2.0, 0.002, -5.0  # clockwise seen from above: the block's torque impulse is positive
    inertia = 0.4 * mass * r * r
    m = td.Model()
    ball = m.add_body("ball", mass=mass, inertia=[inertia] * 3, pos=[0, 0, r], omega=[0, 0, w0])
    mat = Material("steel", friction=0.5)
    nsc = NscContact(m, terrain=terrain.Flat(material=mat), spinning_friction=c_s, rolling_friction=rolling)
    nsc.add_shape(ball, shapes.Sphere(r), material=mat)
    sim = _sim(m, nsc, 1e-3, solver)
    spin = []
    for k in range(1500):
        sim.step()
        spin.append(sim.state.v[0, 5])
        if k == 499:  # while it spins: the spinning block carries c_s m g
            force = nsc.body_out[0, :3].copy()
    alpha = (spin[499] - spin[99]) / 0.4
    alpha_exact = -math.copysign(c_s * mass * G / inertia, w0)
    assert abs(alpha - alpha_exact) < 1e-6 * abs(alpha_exact), (alpha, alpha_exact)
    assert abs(spin[-1]) < 1e-9, spin[-1]  # stopped at 1.02 s and held
    assert np.linalg.norm(sim.state.q[0, :2]) < 1e-9
    assert sim.integrator.last["contacts"] == (3 if rolling else 2)  # the contact and its blocks
    # the recorded contact force is the ground's push alone: the blocks' torque impulses are not forces
    # (the blocks' torque impulses, 0.039 N m here, are not forces; 1e-6: the solver's tolerance as a force)
    np.testing.assert_allclose(np.abs(force), [0.0, 0.0, mass * G], rtol=0, atol=1e-6 * mass * G)
    assert sim.integrator.counters["contact_unconverged"] == 0


def test_rolling_friction_holds_a_ball_on_a_gentle_slope():
    """A ball stays on a slope when the gravity torque about the contact, m g r sin θ, is within the rolling
    resistance c_r m g cos θ, i.e. tan θ < c_r / r (here 0.02 < 0.03)."""
    r, mass, c_r = 0.1, 2.0, 0.003
    theta = math.atan(0.02)
    n = np.array([math.sin(theta), 0.0, math.cos(theta)])
    m = td.Model()
    ball = m.add_body("ball", mass=mass, inertia=[0.4 * mass * r * r] * 3, pos=(r * n).tolist())
    mat = Material("steel", friction=0.5)
    nsc = NscContact(m, terrain=terrain.Plane(normal=n, point=(0, 0, 0), material=mat), rolling_friction=c_r)
    nsc.add_shape(ball, shapes.Sphere(r), material=mat)
    sim = _sim(m, nsc, 1e-3, "bb")  # APGD takes 260 iterations a step here (3 fixed-point rounds of ~90)
    x0 = sim.state.q[0, :3].copy()
    for _ in range(1000):
        sim.step()
    assert np.linalg.norm(sim.state.q[0, :3] - x0) < 1e-9


def test_pin_rests_in_a_sprocket_gap():
    """A track pin (capsule) resting in the top tooth gap of a sprocket fixed to the ground: it touches the gap's
    arc in both gear planes, the two contacts carry its weight, and it stays put."""
    mass, rp = 0.5, 0.02
    m = td.Model()
    mat = Material("steel", friction=0.4)
    nsc = NscContact(m)
    nsc.add_shape(m.ground, shapes.Sprocket(10, 0.25, 0.25, 0.05, 0.2), material=mat)
    pin = m.add_body("pin", mass=mass, inertia=[1e-4, 1e-5, 1e-4], pos=[0.0, 0.0, 0.25 - (0.05 - rp)])
    nsc.add_shape(pin, shapes.Capsule(rp, 0.3), material=mat)
    sim = _sim(m, nsc, 1e-3, "bb")
    x0 = sim.state.q[0, :3].copy()
    for _ in range(300):
        sim.step()
    assert sim.integrator.last["contacts"] == 2
    assert np.linalg.norm(sim.state.q[0, :3] - x0) < 1e-9
    assert nsc.body_out[0, 2] == pytest.approx(mass * G, rel=1e-6)


# --------------------------------------------------------------------------- profile terrains (steps, ramps)
def _box_on_ramp(theta, mu):
    """The 2 kg box of ``_box_on_incline`` resting 1 m up the rising flank (slope theta) of a trapezoidal
    barrier, a profile terrain: its corners against the flank's segment. Down-hill is (-cos θ, 0, -sin θ)."""
    n = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    foot = np.array([math.cos(theta), 0.0, math.sin(theta)])  # 1 m along the flank from its foot at x = 0
    m = td.Model()
    box = m.add_body("box", mass=2.0, inertia=[0.01, 0.01, 0.01], pos=(foot + 0.05 * n).tolist(),
                     quat=[math.cos(theta / 2), 0.0, -math.sin(theta / 2), 0.0])
    mat = Material("steel", friction=mu)
    ramp = terrain.TrapezoidBarrier(height=1.0, top_length=1.0, slope=theta, x=0.0)
    nsc = NscContact(m, terrain=terrain.ProfileTerrain([ramp], material=mat))
    nsc.add_shape(box, shapes.Box([0.2, 0.2, 0.1]), material=mat)
    return m, nsc, n, -foot


@pytest.mark.parametrize("mu_offset", [0.01, -0.01])
def test_block_on_a_profile_ramp_sticks_or_slides_as_on_the_incline(mu_offset):
    """A profile segment is a plane to the box: with μ = tan θ + 0.01 it sticks (drift < 1e-9 m over 2 s),
    with tan θ - 0.01 it slides at g (sin θ - μ cos θ) to 1e-6 relative, on its four corners."""
    theta = math.radians(30.0)
    mu = math.tan(theta) + mu_offset
    m, nsc, n, down = _box_on_ramp(theta, mu)
    sim = _sim(m, nsc, 1e-3)
    x0 = sim.state.q[0, :3].copy()
    speeds = []
    for _ in range(2000):
        sim.step()
        speeds.append(sim.state.v[0, :3] @ down)
    assert sim.integrator.counters["contact_unconverged"] == 0
    assert sim.integrator.last["contacts"] == 4
    if mu_offset > 0:
        drift = np.linalg.norm(sim.state.q[0, :3] - x0)
        assert drift < 1e-9, drift
    else:
        a = (speeds[1999] - speeds[499]) / 1.5
        a_exact = G * (math.sin(theta) - mu * math.cos(theta))
        assert abs(a - a_exact) < 1e-6 * a_exact, (a, a_exact)
        lift = (sim.state.q[0, :3] - x0) @ n
        assert abs(lift) < 1e-9, lift


def test_box_across_a_step_edge_rests_on_the_edge_and_its_far_corners():
    """A 0.6 m box lying across a step's edge, 0.2 m of it overhanging, its centre of mass 0.1 m in from the
    edge: the edge line (a terrain line against the bottom face, two stations) carries 3/4 of the weight and
    the two far corners 1/4 (moments about the edge and the corners), and the box stays put."""
    m = td.Model()
    mass = 3.0
    box = m.add_body("box", mass=mass, inertia=[0.05, 0.1, 0.1], pos=[1.1, 0.0, 0.2 + 0.05])
    mat = Material("steel", friction=0.5)
    nsc = NscContact(m, terrain=terrain.ProfileTerrain([terrain.Step(height=0.2, x=1.0)], material=mat))
    nsc.add_shape(box, shapes.Box([0.6, 0.3, 0.1]), material=mat)
    h = 1e-3
    sim = _sim(m, nsc, h)
    x0 = sim.state.q[0, :3].copy()
    for _ in range(500):
        sim.step()
    assert sim.integrator.counters["contact_unconverged"] == 0
    keys, imp, _ = nsc._staged
    sub = keys[:, 0] & 0xFFFF
    line = (sub >= 40) & (sub < 64)
    weight = mass * G
    assert int(np.sum(line)) == 2 and int(np.sum(~line)) == 2, sub
    # world impulses on side B: the box for the edge's records (the ground is their side A), the ground for
    # the corners' (the box is their side A)
    f_line = imp[line, 2].sum() / h
    f_corners = -imp[~line, 2].sum() / h
    assert abs(f_line - 0.75 * weight) < 1e-6 * weight, (f_line, f_corners)
    assert abs(f_corners - 0.25 * weight) < 1e-6 * weight, (f_line, f_corners)
    assert np.linalg.norm(sim.state.q[0, :3] - x0) < 1e-9


def test_contacts_list_the_step_s_forces_as_smc_names_them():
    """contacts() gives each contact's normal force (the step's impulse over h) and tangential force, the keys
    SMC's contacts() has and the event monitors read: a box resting on a profile's top carries its weight on
    its four corners; nothing is listed as a force before a step."""
    m = td.Model()
    box = m.add_body("box", mass=2.0, inertia=[0.01] * 3, pos=[1.5, 0.0, 0.2 + 0.05])
    mat = Material("steel", friction=0.5)
    nsc = NscContact(m, terrain=terrain.ProfileTerrain([terrain.Step(height=0.2, x=1.0)], material=mat))
    nsc.add_shape(box, shapes.Box([0.2, 0.2, 0.1]), material=mat)
    sim = _sim(m, nsc, 1e-3)
    assert "normal_force" not in nsc.contacts()
    for _ in range(50):
        sim.step()
    ct = nsc.contacts()
    assert len(ct["normal_force"]) == 4 and ct["tangential_force"].shape == (4, 3)
    # the box is side A of its corners' records: the ground pushes it against the normal
    up = -(ct["normal"] * ct["normal_force"][:, None]).sum(axis=0)
    np.testing.assert_allclose(up, [0.0, 0.0, 2.0 * G], rtol=0, atol=1e-6 * 2.0 * G)
    with pytest.raises(ValueError, match="no SMC contact records"):
        nsc.records()


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_compliant_contact_gives_by_its_compliance_times_its_force(solver):
    """contact_compliance c: a box of 2 kg resting on its four corners sinks by c m g / 4 (the CCP on N + c/h²,
    at rest φ = -c F), to 1e-9 m, with every solver; rigid (c = 0) it does not sink."""
    mass, c = 2.0, 1e-6
    for comp, sink in ((c, c * mass * G / 4.0), (0.0, 0.0)):
        m = td.Model()
        box = m.add_body("box", mass=mass, inertia=[0.01] * 3, pos=[0, 0, 0.05])
        mat = Material("steel", friction=0.5)
        nsc = NscContact(m, terrain=terrain.Flat(material=mat))
        nsc.add_shape(box, shapes.Box([0.2, 0.2, 0.1]), material=mat)
        sim = _sim(m, nsc, 1e-3, solver, contact_compliance=comp)
        for _ in range(1000):
            sim.step()
        z = sim.state.q[0, 2]
        assert abs((0.05 - z) - sink) < 1e-9, (comp, 0.05 - z, sink)
        assert sim.integrator.counters["contact_unconverged"] == 0


def test_contact_compliance_is_refused_when_negative():
    m, nsc, _, _ = _box_on_incline(0.1, 0.5)
    with pytest.raises(ValueError, match="contact_compliance"):
        _sim(m, nsc, 1e-3, contact_compliance=-1e-6)


def test_compliance_on_terrain_leaves_contacts_between_bodies_rigid():
    """compliance_on = "terrain": a box resting on a box resting on the ground sinks by the ground contacts'
    c (m1 + m2) g / 4 only; the upper box keeps its height above the lower one (its contacts are rigid)."""
    c = 1e-6
    m = td.Model()
    low = m.add_body("low", mass=2.0, inertia=[0.01] * 3, pos=[0, 0, 0.05])
    top = m.add_body("top", mass=1.0, inertia=[0.01] * 3, pos=[0, 0, 0.15])
    mat = Material("steel", friction=0.5)
    nsc = NscContact(m, terrain=terrain.Flat(material=mat))
    nsc.add_shape(low, shapes.Box([0.3, 0.3, 0.1]), material=mat)
    nsc.add_shape(top, shapes.Box([0.2, 0.2, 0.1]), material=mat)
    sim = _sim(m, nsc, 1e-3, "apgd", contact_compliance=c, compliance_on="terrain")
    for _ in range(1000):
        sim.step()
    z_low, z_top = sim.state.q[0, 2], sim.state.q[1, 2]
    assert abs((0.05 - z_low) - c * 3.0 * G / 4.0) < 1e-9, 0.05 - z_low
    assert abs((z_top - z_low) - 0.1) < 1e-9, z_top - z_low
    with pytest.raises(ValueError, match="compliance_on"):
        _sim(m, nsc, 1e-3, compliance_on="wheels")
