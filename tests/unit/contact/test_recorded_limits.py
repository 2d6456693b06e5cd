"""Three recorded contact limits: equal boxes and restitution 0 (fixed), crossed capsules (expected failure).

Each test is a small scene with a closed-form expectation; the contact Jacobians of the fixed pairs are
checked against central differences through detection (``test_pairs.Scene``).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trackdyn as td
from trackdyn import terrain as tt
from trackdyn.contact import ContactSystem, Material, shapes
from trackdyn.contact._restitution import damping_for_restitution, impact_restitution
from trackdyn.math.quaternion import quat_from_axis_angle

from test_pairs import HARD, Scene, state, two_bodies

G = 9.81


# --------------------------------------------------------------------------- 1. equal boxes
def stacked_boxes(dx=0.0, yaw=0.0):
    """Box on an identical box (0.2 m cubes, faces aligned), the lower one on flat ground; Hooke law kn."""
    m = td.Model()
    low = m.add_body("low", mass=3.0, inertia=[0.02] * 3, pos=[0, 0, 0.1])
    up = m.add_body("up", mass=2.0, inertia=[0.0133] * 3, pos=[dx, 0, 0.3], quat=quat_from_axis_angle([0, 0, 1], yaw))
    cs = ContactSystem(m, terrain=tt.Flat(material=HARD), use_material_properties=False, law="hooke")
    cs.add_shape(low, shapes.Box([0.2, 0.2, 0.2]), material=HARD)
    cs.add_shape(up, shapes.Box([0.2, 0.2, 0.2]), material=HARD)
    return m, cs


@pytest.mark.parametrize("dx, yaw, count", [(0.0, 0.0, 4), (0.05, 0.0, 4), (0.0, 0.2, 8)])
def test_box_rests_on_an_equal_box(dx, yaw, count):
    """The upper box is carried by the lower: contact force W, four contacts with k_n Σδ = W (Hooke).

    Aligned (dx = 0) the corners of the two faces coincide and each sinks W/(4 k_n); shifted by dx the
    contact rectangle's corners are two corners of each box (the upper box tilts: its centre of mass is
    not over the rectangle's centre); turned by a yaw about the vertical the overlap is an octagon whose
    eight corners are edge crossings (each sinks W/(8 k_n)). Before the fix the corners lay on the other box's side faces (depth 0 there,
    the nearest face) and the aligned box fell through."""
    m, cs = stacked_boxes(dx, yaw)
    res = td.Simulation(m, step=1e-3, output_step=1e-2, providers=[cs]).run(1.0)
    W = 2.0 * G
    kn = HARD.kn
    assert res["up.contact.force.z"][-1] == pytest.approx(W, rel=5e-3)
    assert res["up.contact.count"][-1] == count
    c = cs.contacts()
    on_up = (c["body_a"] >= 0) & (c["body_b"] >= 0)  # between the boxes, not on the ground
    assert on_up.sum() == count
    assert c["penetration"][on_up].sum() == pytest.approx(W / kn, rel=5e-3)  # Hooke: k_n Σδ = W
    if dx == 0.0:
        gap = res["low.pos.z"][-1] + 0.1 - (res["up.pos.z"][-1] - 0.1)  # upper box sunk into the lower
        assert gap == pytest.approx(W / (count * kn), rel=5e-3)
        assert abs(res["up.pos.x"][-1]) < 1e-9


@pytest.mark.parametrize("dx", [0.0, 0.05])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_equal_boxes_jacobians(dx, seed):
    rng = np.random.default_rng(seed)
    sc = two_bodies([shapes.Box([0.2, 0.2, 0.2])], [shapes.Box([0.2, 0.2, 0.2])],
                    np.array([dx, 0.0, 0.197]) + rng.normal(scale=5e-4, size=3), [0, 0, 0], rng, tilt=0.002)
    q, v = state(sc, rng)
    sc.check(q, v, min_active=3)


# --------------------------------------------------------------------------- 2. crossed capsules
NO_LINE_LINE = pytest.mark.xfail(strict=True, reason=(
    "not fixed: capsule-capsule tests only the end spheres, so axes crossing in their middles never touch. "
    "A record of A's axis cut by a plane fixed to B (K_PL, PM_LINE) gives the penetration to 3e-18 and the "
    "normal exactly, but its Jacobian keeps the plane fixed to B (dF_x/dpi_A 23 vs 590 by central "
    "differences) and fails test_pairs::test_pair_jacobians[capsule-capsule]; an exact contact needs a "
    "line-line kind in _kernels.py"))
def crossed_capsules(angle, offset, rng=None):
    """Capsule A (r 0.05, axis rotated by ``angle`` about z from y) above capsule B (r 0.04, along y).

    Their axes cross at their middles; ``offset`` is the distance between the axes (along z)."""
    m = td.Model(gravity=(0, 0, 0))
    a = m.add_body("a", mass=2.0, inertia=[0.1, 0.12, 0.14], pos=[0.01, -0.02, offset])
    b = m.add_body("b", mass=3.0, inertia=[0.2, 0.15, 0.25], pos=[0.01, -0.02, 0.0])
    cs = ContactSystem(m, use_material_properties=False, law="hooke")
    axis = [-math.sin(angle), math.cos(angle), 0.0]
    cs.add_shape(a, shapes.Capsule(0.05, 0.6, axis=axis), material=HARD)
    cs.add_shape(b, shapes.Capsule(0.04, 0.5), material=HARD)
    return m, cs


@NO_LINE_LINE
@pytest.mark.parametrize("angle", [math.pi / 2, math.pi / 5])
def test_crossed_capsules_touch_along_the_common_perpendicular(angle):
    m, cs = crossed_capsules(angle, 0.087)
    c = contacts_now(m, cs)
    assert len(c["penetration"]) == 1
    assert c["penetration"][0] == pytest.approx(0.05 + 0.04 - 0.087, abs=1e-12)
    n = c["normal"][0]
    assert abs(abs(n[2]) - 1.0) < 1e-12  # the common perpendicular of two horizontal axes
    # A is pushed up: force on A along +z equals the normal force k_n δ (no velocity)
    assert c["normal_force"][0] == pytest.approx(HARD.kn * 0.003, rel=1e-9)


def contacts_now(m, cs):
    sc = Scene(m, cs)
    q, v = sc.system.q0.copy(), np.zeros((m.n_bodies, 6))
    _, _, _, _, (rec, out, n) = sc.forces(q, v)
    act = out.fn[:n] > 0
    return {"penetration": out.delta[:n][act], "normal": out.normal[:n][act], "normal_force": out.fn[:n][act]}


@NO_LINE_LINE
def test_crossed_capsules_hand_over_to_the_end_sphere():
    """Moving the crossing to A's end: the interior contact's penetration meets the end sphere's."""
    pens = []
    for y in (0.2999, 0.3001):  # the crossing just inside / outside A's segment (half length 0.3)
        m = td.Model(gravity=(0, 0, 0))
        a = m.add_body("a", mass=2.0, inertia=[0.1] * 3, pos=[0.0, -y, 0.087])
        b = m.add_body("b", mass=3.0, inertia=[0.2] * 3, pos=[0.0, 0.0, 0.0])
        cs = ContactSystem(m, use_material_properties=False, law="hooke")
        cs.add_shape(a, shapes.Capsule(0.05, 0.6), material=HARD)
        cs.add_shape(b, shapes.Capsule(0.04, 0.5, axis=[1, 0, 0]), material=HARD)
        pens.append(contacts_now(m, cs)["penetration"])
    assert len(pens[0]) == 1 and len(pens[1]) == 1
    assert pens[0][0] == pytest.approx(0.003, abs=1e-12)
    assert pens[1][0] == pytest.approx(0.09 - math.hypot(0.087, 1e-4), abs=1e-12)


@NO_LINE_LINE
@pytest.mark.parametrize("angle", [math.pi / 2, math.pi / 5])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_crossed_capsules_jacobians(angle, seed):
    rng = np.random.default_rng(seed)
    axis = [-math.sin(angle), math.cos(angle), 0.0]
    sc = two_bodies([shapes.Capsule(0.05, 0.6, axis=axis)], [shapes.Capsule(0.04, 0.5)],
                    np.array([0.01, -0.02, 0.087]) + rng.normal(scale=5e-4, size=3), [0, 0, 0], rng, tilt=0.01)
    q, v = state(sc, rng)
    sc.check(q, v)


# --------------------------------------------------------------------------- 3. restitution 0
def test_restitution_zero_is_accepted_and_plastic():
    """e = 0: the damping is the table's largest (rebound <= 2.3e-4 of the impact speed, Hertz)."""
    m0 = Material("clay", young=1e7, restitution=0.0)
    assert m0.restitution == 0.0
    for law in ("hertz", "hooke"):
        c = damping_for_restitution(0.0, law)
        assert math.isfinite(c) and impact_restitution(c, law) < 3e-4
    with pytest.raises(ValueError, match="restitution"):
        Material("x", restitution=-0.1)
    with pytest.raises(ValueError, match="restitution"):
        Material("x", restitution=1.1)


@pytest.mark.parametrize("e", [0.0, 0.1])
def test_impact_rebound(e):
    """A 1-kg sphere hits the ground at 1 m/s (no gravity, Hertz, exact damping, h = 2e-5).

    e = 0: it leaves at under 1.4 mm/s, i.e. it would not bounce higher than 0.1 µm under gravity;
    e = 0.1 (existing behaviour): it leaves at e × 1 m/s within 2 % (docs/contact.md, drop)."""
    m = td.Model(gravity=(0, 0, 0))
    ball = m.add_body("ball", mass=1.0, inertia=[4e-3] * 3, pos=[0, 0, 0.1005], vel=[0, 0, -1.0])
    ground = tt.Flat(material=Material("ground", young=1e7, restitution=1.0))
    cs = ContactSystem(m, terrain=ground)
    cs.add_shape(ball, shapes.Sphere(0.1), Material("ball", young=1e7, restitution=e))
    sim = td.Simulation(m, step=2e-5, providers=[cs])
    sim.run(0.04)
    v_out = sim.state.v[0, 2]
    assert sim.state.q[0, 2] > 0.1 or e == 0.0  # left the ground (e > 0)
    if e == 0.0:
        assert 0.0 <= v_out < 1.4e-3
        assert v_out**2 / (2 * G) < 1e-7
    else:
        assert v_out == pytest.approx(e, rel=0.02)
