"""Every shape pair and every terrain kind: exact Jacobians through detection, and closed-form geometry.

The generalized contact forces of a scene are recomputed from scratch
(detection + forces) at finite-difference perturbations of the state and
compared with the sum of the records' analytic Jacobians.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import trackdyn as td
from trackdyn import terrain as tt
from trackdyn.contact import ContactSystem, Material, shapes
from trackdyn.contact import _detect as D
from trackdyn.contact import _kernels as CK
from trackdyn.contact._buffers import new_outputs, new_records
from trackdyn.formulations import AbsoluteSystem
from trackdyn.math.quaternion import quat_from_axis_angle, quat_to_matrix
from trackdyn.testing.fd import fd_position_jacobian, fd_velocity_jacobian

seeds = st.integers(0, 2**31 - 1)
HARD = Material("hard", young=None, kn=2e5, kt=1e5, gn=30.0, gt=20.0, friction=0.5)
GROUND = Material("ground", young=None, kn=3e5, kt=2e5, gn=40.0, gt=20.0, friction=0.7)


def quat(rng, scale):
    ax = rng.normal(size=3)
    return quat_from_axis_angle(ax / np.linalg.norm(ax), scale * rng.normal())


class Scene:
    """A model with shapes and a contact system bound to an AbsoluteSystem (Hooke law from coefficients)."""

    def __init__(self, model, cs):
        self.model, self.cs = model, cs
        self.system = AbsoluteSystem(model, providers=[cs])
        self.nb = model.n_bodies

    def records(self, q, v):
        s, cs = self.system, self.cs
        s.update_kinematics(q, v)
        rec = new_records(512)
        n = D.detect(rec, cs.shapes, cs.scratch, cs.filters, cs.terrain_arrays, s.kin.pos, s.kin.R, cs.margin,
                     cs.default_radius, cs.max_penetration, cs.winkler_grid)
        return rec, n

    def forces(self, q, v, want=False):
        s, cs = self.system, self.cs
        rec, n = self.records(q, v)
        out = new_outputs(512)
        f = np.zeros((self.nb, 6))
        Kx = np.zeros((6 * self.nb, 6 * self.nb))
        Kv = np.zeros((6 * self.nb, 6 * self.nb))
        kx, kv = np.zeros((12, 12)), np.zeros((12, 12))
        active = 0
        hk, hd = np.zeros((0, 2), np.int64), np.zeros((0, 3))
        for r in range(n):
            if CK.record_element(r, rec, out, cs.pair_law, cs.pair_par, cs.mass, hk, hd, s.kin.pos, s.kin.R,
                                 s.kin.vel, s.kin.omega_w, v, 1e-3, f, kx, kv):
                active += 1
                if want:
                    for a in range(2):
                        for c in range(2):
                            ba, bc = rec.body[r, a], rec.body[r, c]
                            if ba >= 0 and bc >= 0:
                                Kx[6 * ba:6 * ba + 6, 6 * bc:6 * bc + 6] += kx[6 * a:6 * a + 6, 6 * c:6 * c + 6]
                                Kv[6 * ba:6 * ba + 6, 6 * bc:6 * bc + 6] += kv[6 * a:6 * a + 6, 6 * c:6 * c + 6]
        return f, Kx, Kv, active, (rec, out, n)

    def check(self, q, v, min_active=1):
        f, Kx, Kv, active, _ = self.forces(q, v, want=True)
        assert active >= min_active, f"scene not in contact ({active} active)"
        bodies = list(range(self.nb))
        fx = fd_position_jacobian(lambda qq, vv: self.forces(qq, vv)[0].ravel(), q, v, bodies, eps=1e-7)
        fv = fd_velocity_jacobian(lambda qq, vv: self.forces(qq, vv)[0].ravel(), q, v, bodies, eps=1e-7)
        sx = max(np.abs(fx).max(), 1.0)
        sv = max(np.abs(fv).max(), 1.0)
        np.testing.assert_allclose(Kx, fx, atol=3e-5 * sx, rtol=0)
        np.testing.assert_allclose(Kv, fv, atol=3e-5 * sv, rtol=0)
        return active


def one_body(shape_fn, terrain, pos, rng, mat=HARD, tilt=0.03):
    m = td.Model()
    b = m.add_body("b", mass=2.0, inertia=[0.1, 0.12, 0.14], pos=pos, quat=quat(rng, tilt))
    cs = ContactSystem(m, terrain=terrain, use_material_properties=False, law="hooke")
    for sh in shape_fn():
        cs.add_shape(b, sh, material=mat)
    return Scene(m, cs)


def two_bodies(sa, sb, pa, pb, rng, tilt=0.15):
    m = td.Model()
    a = m.add_body("a", mass=2.0, inertia=[0.1, 0.12, 0.14], pos=pa, quat=quat(rng, tilt))
    b = m.add_body("b", mass=3.0, inertia=[0.2, 0.15, 0.25], pos=pb, quat=quat(rng, tilt))
    cs = ContactSystem(m, use_material_properties=False, law="hooke")
    for sh in sa:
        cs.add_shape(a, sh, material=HARD)
    for sh in sb:
        cs.add_shape(b, sh, material=HARD)
    return Scene(m, cs)


def state(scene, rng, vscale=0.05):
    s = scene.system
    q = s.q0.copy()
    v = rng.normal(scale=vscale, size=(scene.nb, 6))
    return q, v


# --------------------------------------------------------------------------- terrain scenes
PROFILE = tt.ProfileTerrain([tt.Step(0.3, x=1.0), tt.HalfRound(0.15, x=2.0), tt.Gap(0.4, 0.3, x=3.0)],
                            material=GROUND)


def mesh_terrain():
    # a ridge: convex edge along y at x = 0.5, z = 0.2
    V = np.array([[-1, -1, 0], [0.5, -1, 0.2], [2, -1, 0], [-1, 1, 0], [0.5, 1, 0.2], [2, 1, 0]], float)
    F = np.array([[0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4]])
    return tt.TriangleMesh(V, F, material=GROUND)


TERRAIN_SCENES = {
    # name: (shapes, terrain, nominal position)
    "sphere-plane": (lambda: [shapes.Sphere(0.1)], tt.Plane.incline(0.2, material=GROUND), [0.0, 0.0, 0.097]),
    "sphere-step-edge": (lambda: [shapes.Sphere(0.1)], PROFILE, [0.96, 0.0, 0.36]),
    "sphere-halfround": (lambda: [shapes.Sphere(0.1)], PROFILE, [2.15, 0.0, 0.3 + 0.246]),
    "sphere-mesh-face": (lambda: [shapes.Sphere(0.1)], mesh_terrain(), [-0.2, 0.1, 0.2]),
    "sphere-mesh-edge": (lambda: [shapes.Sphere(0.1)], mesh_terrain(), [0.5, 0.1, 0.297]),
    "capsule-plane": (lambda: [shapes.Capsule(0.05, 0.3)], tt.Flat(material=GROUND), [0.0, 0.0, 0.048]),
    "cylinder-plane": (lambda: [shapes.Cylinder(0.3, 0.2)], tt.Flat(material=GROUND), [0.0, 0.0, 0.297]),
    "cylinder-step": (lambda: [shapes.Cylinder(0.3, 0.2)], PROFILE, [0.8, 0.0, 0.5]),
    "cylinder-mesh": (lambda: [shapes.Cylinder(0.3, 0.2)], mesh_terrain(), [0.5, 0.0, 0.497]),
    "box-plane": (lambda: [shapes.Box([0.4, 0.3, 0.1])], tt.Flat(material=GROUND), [0.0, 0.0, 0.047]),
    "box-step-edge": (lambda: [shapes.Box([0.4, 0.3, 0.1])], PROFILE, [1.05, 0.0, 0.347]),
    "box-halfround": (lambda: [shapes.Box([0.4, 0.3, 0.1])], PROFILE, [2.15, 0.0, 0.3 + 0.15 + 0.047]),
    "box-mesh-edge": (lambda: [shapes.Box([0.4, 0.3, 0.1])], mesh_terrain(), [0.5, 0.0, 0.247]),
}


@pytest.mark.parametrize("name", list(TERRAIN_SCENES))
@given(seed=seeds)
def test_terrain_jacobians(name, seed):
    rng = np.random.default_rng(seed)
    fn, terrain, pos = TERRAIN_SCENES[name]
    sc = one_body(fn, terrain, np.array(pos) + rng.normal(scale=5e-4, size=3), rng)
    q, v = state(sc, rng)
    sc.check(q, v)


# --------------------------------------------------------------------------- body pairs
PAIR_SCENES = {
    "sphere-sphere": ([shapes.Sphere(0.1)], [shapes.Sphere(0.15)], [0, 0, 0], [0.24, 0.02, 0.0]),
    "sphere-box-face": ([shapes.Sphere(0.1)], [shapes.Box([0.4, 0.4, 0.2])], [0, 0, 0.195], [0.02, 0.0, 0.0]),
    "sphere-box-edge": ([shapes.Sphere(0.1)], [shapes.Box([0.4, 0.4, 0.2])], [0.265, 0.0, 0.165], [0, 0, 0]),
    "sphere-box-corner": ([shapes.Sphere(0.1)], [shapes.Box([0.4, 0.4, 0.2])], [0.25, 0.25, 0.15], [0, 0, 0]),
    "sphere-capsule": ([shapes.Sphere(0.1)], [shapes.Capsule(0.05, 0.4)], [0.0, 0.05, 0.145], [0, 0, 0]),
    "sphere-capsule-end": ([shapes.Sphere(0.1)], [shapes.Capsule(0.05, 0.4)], [0.0, 0.34, 0.0], [0, 0, 0]),
    "sphere-cylinder-side": ([shapes.Sphere(0.1)], [shapes.Cylinder(0.3, 0.2)], [0.0, 0.0, 0.395], [0, 0, 0]),
    "sphere-cylinder-face": ([shapes.Sphere(0.1)], [shapes.Cylinder(0.3, 0.2)], [0.05, 0.195, 0.0], [0, 0, 0]),
    "sphere-segment": ([shapes.Sphere(0.05)], [shapes.Segment([-0.2, 0, 0], [0.2, 0, 0], 0.2)],
                       [0.02, 0.0, 0.048], [0, 0, 0]),
    "box-box": ([shapes.Box([0.2, 0.2, 0.2])], [shapes.Box([0.6, 0.6, 0.2])], [0.0, 0.0, 0.197], [0, 0, 0]),
    "capsule-box": ([shapes.Capsule(0.05, 0.3)], [shapes.Box([0.6, 0.6, 0.2])], [0.0, 0.0, 0.147], [0, 0, 0]),
    "cylinder-box-face": ([shapes.Cylinder(0.3, 0.2)], [shapes.Box([0.3, 0.3, 0.1])], [0.02, 0.0, 0.347],
                          [0, 0, 0]),
    "cylinder-box-edge": ([shapes.Cylinder(0.3, 0.2)], [shapes.Box([0.3, 0.3, 0.1])], [0.3, 0.0, 0.25],
                          [0, 0, 0]),
    "cylinder-guide": ([shapes.Cylinder(0.3, 0.1, pos=[0, 0.1, 0])], [shapes.Box([0.1, 0.11, 0.1])],
                       [0.0, 0.0, 0.25], [0, 0, 0]),
    "cylinder-segment": ([shapes.Cylinder(0.2, 0.1)], [shapes.Segment([-0.3, 0, 0], [0.3, 0, 0], 0.3)],
                         [0.0, 0.0, 0.197], [0, 0, 0]),
    "capsule-capsule": ([shapes.Capsule(0.05, 0.3)], [shapes.Capsule(0.05, 0.3, axis=[1, 0, 0])],
                        [0.0, 0.15, 0.097], [0, 0, 0]),
}


@pytest.mark.parametrize("name", list(PAIR_SCENES))
@given(seed=seeds)
def test_pair_jacobians(name, seed):
    rng = np.random.default_rng(seed)
    sa, sb, pa, pb = PAIR_SCENES[name]
    sc = two_bodies(sa, sb, np.array(pa, float) + rng.normal(scale=5e-4, size=3), pb, rng, tilt=0.01)
    q, v = state(sc, rng)
    sc.check(q, v)


M113_SPROCKET = dict(teeth=10, addendum_radius=0.2605, arc_centre_radius=0.3, arc_radius=0.089, separation=0.225)


@pytest.mark.parametrize("where", ["gap", "tip", "corner"])
@given(seed=seeds)
def test_sprocket_pin_jacobians(where, seed):
    """A shoe pin (cylinder across both gears) in a tooth gap, on a tooth tip, on the corner between."""
    rng = np.random.default_rng(seed)
    sp = shapes.Sprocket(**M113_SPROCKET)
    rp = 0.0125
    RC, R, RO, a = 0.3, 0.089, 0.2605, sp.gap_half_angle
    if where == "gap":  # pin against the gap's flank, at the bottom of gap 0
        c = np.array([0.0, 0.0, -(RC - R + rp - 0.002)])
    elif where == "tip":  # on the tooth tip between gaps 0 and 1
        ang = 0.5 * (2 * math.pi / 10)
        c = (RO + rp - 0.002) * np.array([math.sin(ang), 0, -math.cos(ang)])
    else:  # on the corner of gap 0
        ang = a
        cn = RO * np.array([math.sin(ang), 0, -math.cos(ang)])
        d = cn / RO + (np.array([0, 0, -RC]) - cn) / R
        d /= np.linalg.norm(d)
        c = cn + (rp - 0.002) * d
    sc = two_bodies([shapes.Cylinder(rp, 0.4)], [sp], c + rng.normal(scale=2e-4, size=3), [0, 0, 0], rng, tilt=0.002)
    q, v = state(sc, rng, 0.02)
    sc.check(q, v)


# --------------------------------------------------------------------------- closed-form geometry
def penetrations(scene, q=None):
    q = scene.system.q0 if q is None else q
    v = np.zeros((scene.nb, 6))
    _, _, _, _, (rec, out, n) = scene.forces(q, v)
    act = out.fn[:n] > 0
    return out.delta[:n][act], out.normal[:n][act], out.point[:n][act], rec.kind[:n][act]


def test_sphere_on_step_edge_and_face():
    """A sphere touching the top edge of a step: one vertex contact, normal from the edge to the centre."""
    rng = np.random.default_rng(0)
    sc = one_body(lambda: [shapes.Sphere(0.1)], PROFILE, [0.95, 0.0, 0.35], rng)
    sc.model.set_initial_pose(0, quat=[1, 0, 0, 0])
    sc = one_body(lambda: [shapes.Sphere(0.1)], PROFILE, [0.95, 0.0, 0.35], np.random.default_rng(1))
    sc.system.q0[0, 3:] = [1, 0, 0, 0]
    d, n, p, k = penetrations(sc)
    edge = np.array([1.0, 0.0, 0.3])
    expected = 0.1 - np.linalg.norm(np.array([0.95, 0.0, 0.35]) - edge)
    assert len(d) == 1 and k[0] == CK.K_PL
    assert abs(d[0] - expected) < 1e-12
    u = (np.array([0.95, 0.0, 0.35]) - edge) / np.linalg.norm(np.array([0.95, 0.0, 0.35]) - edge)
    np.testing.assert_allclose(-n[0], u, atol=1e-12)  # the sphere (side A) is pushed along -n


def test_wheel_in_step_corner_two_contacts():
    """A wheel resting in the corner of a step taller than it: floor and face, both."""
    sc = one_body(lambda: [shapes.Cylinder(0.1, 0.2)], tt.Flat(material=GROUND) + tt.Step(0.3, x=1.0),
                  [0.902, 0.0, 0.099], np.random.default_rng(0))
    sc.system.q0[0, 3:] = [1, 0, 0, 0]
    d, n, p, k = penetrations(sc)
    assert len(d) == 4  # two slices x (floor, face)
    np.testing.assert_allclose(sorted(np.round(d, 12)), [0.001, 0.001, 0.002, 0.002], atol=1e-12)


def test_box_on_flat_four_corners():
    sc = one_body(lambda: [shapes.Box([0.4, 0.3, 0.1])], tt.Flat(material=GROUND), [0.0, 0.0, 0.049],
                  np.random.default_rng(0))
    sc.system.q0[0, 3:] = [1, 0, 0, 0]
    d, n, p, k = penetrations(sc)
    assert len(d) == 4
    np.testing.assert_allclose(d, 0.001, atol=1e-12)
    np.testing.assert_allclose(n, np.tile([0, 0, -1.0], (4, 1)), atol=1e-12)


def test_box_on_step_edge_stations():
    """A box lying across a step edge: two corners on the top and the edge at two stations."""
    sc = one_body(lambda: [shapes.Box([0.4, 0.3, 0.1])], PROFILE, [1.1, 0.0, 0.349], np.random.default_rng(0))
    sc.system.q0[0, 3:] = [1, 0, 0, 0]
    d, n, p, k = penetrations(sc)
    assert len(d) == 4
    edge = p[k == CK.K_PN]
    np.testing.assert_allclose(d, 0.001, atol=1e-12)
    # the edge contacts sit at the Gauss stations across the box width
    st = sorted(np.round(p[:, 1], 9))
    assert np.isclose(st[0], -0.15) or np.isclose(st[0], -0.15 / math.sqrt(3))
    assert len(edge) == 4


def test_pin_seated_in_gap():
    """A pin at the bottom of a gap touches the gap arc of both gears: δ = L + r - R."""
    sp = shapes.Sprocket(**M113_SPROCKET)
    rp = 0.0125
    c = np.array([0.0, 0.0, -(0.3 - 0.089 + rp - 0.001)])
    sc = two_bodies([shapes.Cylinder(rp, 0.4)], [sp], c, [0, 0, 0], np.random.default_rng(0), tilt=0.0)
    sc.system.q0[:, 3:] = [1, 0, 0, 0]
    d, n, p, k = penetrations(sc)
    assert len(d) == 2
    np.testing.assert_allclose(d, 0.001, atol=1e-12)
    np.testing.assert_allclose(np.abs(p[:, 1]), 0.1125, atol=1e-12)
    np.testing.assert_allclose(n[:, 2], [1.0, 1.0], atol=1e-12)  # the sprocket is pushed up, the pin down


def _surface_points(shape):
    """Points of a shape's surface in its own frame (exact extremes for boxes, fine rims for cylinders)."""
    if isinstance(shape, shapes.Sphere):
        u = np.random.default_rng(1).normal(size=(20000, 3))
        return shape.radius * u / np.linalg.norm(u, axis=1)[:, None]
    if isinstance(shape, shapes.Box):
        return np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * shape.half
    a = np.linspace(0.0, 2.0 * np.pi, 20001)
    if isinstance(shape, shapes.Cylinder):
        hw = 0.5 * shape.width
        rim = np.stack([shape.radius * np.cos(a), np.zeros_like(a), shape.radius * np.sin(a)], axis=1)
        return np.concatenate([rim + [0.0, -hw, 0.0], rim + [0.0, hw, 0.0]])
    u = np.random.default_rng(1).normal(size=(20000, 3))  # capsule: the two end spheres
    ball = shape.radius * u / np.linalg.norm(u, axis=1)[:, None]
    return np.concatenate([ball + [0.0, -0.5 * shape.length, 0.0], ball + [0.0, 0.5 * shape.length, 0.0]])


@pytest.mark.parametrize("shape", [shapes.Sphere(0.1), shapes.Box([0.2, 0.76, 0.06]), shapes.Cylinder(0.3, 0.064),
                                   shapes.Capsule(0.02, 0.3)], ids=["sphere", "box", "cylinder", "capsule"])
@given(seed=seeds)
def test_support_distance_bounds_the_shape(shape, seed):
    """``_support`` (the half extents of the broad phase and the whole-shape test against planes) is the
    largest d . (x - c) over the shape, for a random pose and direction: sampled surface points reach it and
    none exceeds it."""
    rng = np.random.default_rng(seed)
    m = td.Model()
    b = m.add_body("b", mass=1.0, inertia=[0.1, 0.1, 0.1])
    cs = ContactSystem(m, use_material_properties=False, law="hooke")
    cs.add_shape(b, shape, material=HARD)
    AbsoluteSystem(m, providers=[cs])
    sh = cs.shapes
    Rw = quat_to_matrix(quat(rng, 2.0)) @ sh.s_rot[0]  # world axes of the shape
    d = rng.normal(size=3)
    d /= np.linalg.norm(d)
    a = d @ Rw
    sup = D._support(sh.s_type[0], sh.s_par, 0, a[0], a[1], a[2])
    reach = (_surface_points(shape) @ Rw.T @ d).max()
    assert reach <= sup + 1e-12
    assert sup - reach < 1e-6 * shape.bounding_radius() + (0.0 if isinstance(shape, shapes.Box) else 2e-3 * sup)


@pytest.mark.parametrize("box", [[0.11, 0.38, 0.06], [0.05, 0.04, 0.06], [0.3, 0.3, 0.1], [0.02, 0.02, 0.02]],
                         ids=["shoe", "guide-tooth", "plate", "pin-end"])
@given(seed=seeds)
def test_wheel_box_prefilter_keeps_every_record(box, seed):
    """The wheel-box narrow phase skips its rims or its corners when ``_wheel_box_filter``'s necessary
    conditions fail: on random poses around a thin wheel (touching, beside it, a box side within a few
    max_pen of a flat side of the wheel) and for a max_pen wider and narrower than the wheel, the records are
    those of the full narrow phase."""
    rng = np.random.default_rng(seed)
    rc, width = 0.3, 0.064
    max_pen = float(rng.choice([0.05, 0.01, 0.003]))
    offset = rng.uniform([-0.45, -0.08, -0.45], [0.45, 0.08, 0.45])
    if rng.random() < 0.5:  # the box's near side about max_pen inside a flat side: corner records
        offset[1] = rng.choice([-1.0, 1.0]) * (0.5 * width + 0.5 * box[1] - rng.uniform(-0.5, 2.0) * max_pen)
    sc = two_bodies([shapes.Cylinder(rc, width, slices=int(rng.integers(1, 4)))], [shapes.Box(box)],
                    [0.0, 0.0, 0.0], offset, rng, tilt=0.3)
    q, v = state(sc, rng)
    sc.records(q, v)  # the shapes' world poses
    cs = sc.cs
    sh = cs.shapes
    pair = cs.filters.mat_pair[sh.s_mat[0], sh.s_mat[1]]
    got = []
    filt = D._wheel_box_filter(0, 1, sh.s_par, sh.s_rbound, cs.scratch.sw_c, cs.scratch.sw_R, max_pen)
    for rims, corners in (filt, (True, True)):
        rec = new_records(64)
        n = D._cylinder_box(rec, 0, 0, 0, 1, 1, sh.s_pos, sh.s_rot, sh.s_par, cs.scratch.sw_c, cs.scratch.sw_R,
                            pair, cs.default_radius, np.int64(1) << 32, cs.filters.pidx, max_pen, rims,
                            corners)
        got.append((n, {f: getattr(rec, f)[:n].copy() for f in rec._fields}))
    assert got[0][0] == got[1][0]
    for f in got[0][1]:
        np.testing.assert_array_equal(got[0][1][f], got[1][1][f])
