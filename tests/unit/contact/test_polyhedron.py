"""Convex polyhedra against the terrain: the same contacts as a box where they are one, closed-form
penetrations and forces of a wedge on a step edge, exact Jacobians through detection, refused shapes."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import trackdyn as td
from trackdyn import terrain as tt
from trackdyn.contact import ContactSystem, Material, shapes
from trackdyn.contact import _kernels as CK

sys.path.insert(0, str(Path(__file__).parent))
from test_pairs import GROUND, HARD, PROFILE, mesh_terrain, one_body, penetrations, state  # noqa: E402


def cuboid(size, quat=(1.0, 0.0, 0.0, 0.0), pos=(0.0, 0.0, 0.0)):
    h = 0.5 * np.asarray(size, float)
    return shapes.ConvexPolyhedron([[sx * h[0], sy * h[1], sz * h[2]] for sx in (-1, 1) for sy in (-1, 1)
                                    for sz in (-1, 1)], pos=pos, quat=quat)


def wedge(length=0.4, width=0.3, height=0.1, angle=math.pi / 6):
    """A prism seen from the side as a hull's nose: a flat top z = +height/2 from x = -length/2 to
    +length/2, a vertical rear face, a flat bottom z = -height/2 from the rear to ``x_b``, and a front face
    rising from the bottom's front edge at ``angle`` to the horizontal to the top's front edge (outward
    normal forward and down)."""
    x_b = length / 2 - height / math.tan(angle)
    pts = []
    for y in (-width / 2, width / 2):
        pts += [[-length / 2, y, -height / 2], [x_b, y, -height / 2], [length / 2, y, height / 2],
                [-length / 2, y, height / 2]]
    return shapes.ConvexPolyhedron(pts)


def step_mesh():
    """A 0.3 m step as a triangle mesh: floor, wall at x = 0.5 (facing -x), top; convex edge (0.5, 0.3)."""
    V = np.array([[-1, -1, 0], [0.5, -1, 0], [0.5, -1, 0.3], [2, -1, 0.3],
                  [-1, 1, 0], [0.5, 1, 0], [0.5, 1, 0.3], [2, 1, 0.3]], float)
    F = np.array([[0, 1, 5], [0, 5, 4], [1, 2, 6], [1, 6, 5], [2, 3, 7], [2, 7, 6]])
    return tt.TriangleMesh(V, F, material=GROUND)


SCENES = {
    "plane": (tt.Flat(material=GROUND), [0.0, 0.0, 0.047]),
    "step-edge": (PROFILE, [1.05, 0.0, 0.347]),
    "half-round": (PROFILE, [2.15, 0.0, 0.3 + 0.15 + 0.047]),
    "mesh-ridge": (mesh_terrain(), [0.5, 0.0, 0.247]),
}


@pytest.mark.parametrize("name", list(SCENES))
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cuboid_polyhedron_is_the_box(name, seed):
    """A polyhedron with a box's 8 corners gives the box's contacts: the same generalized forces and
    Jacobians on a plane, a step edge, a half-round and a mesh ridge, at a random tilted pose."""
    terrain, pos = SCENES[name]
    res = []
    for shape in (shapes.Box([0.4, 0.3, 0.1]), cuboid([0.4, 0.3, 0.1])):
        rng = np.random.default_rng(seed)
        sc = one_body(lambda shape=shape: [shape], terrain, np.array(pos) + rng.normal(scale=5e-4, size=3), rng)
        q, v = state(sc, rng)
        f, Kx, Kv, active, _ = sc.forces(q, v, want=True)
        res.append((f, Kx, Kv, active))
    (fb, kxb, kvb, nb), (fp, kxp, kvp, npo) = res
    assert nb == npo
    np.testing.assert_allclose(fp, fb, rtol=0, atol=1e-9 * max(1.0, np.abs(fb).max()))
    np.testing.assert_allclose(kxp, kxb, rtol=0, atol=1e-9 * max(1.0, np.abs(kxb).max()))
    np.testing.assert_allclose(kvp, kvb, rtol=0, atol=1e-9 * max(1.0, np.abs(kvb).max()))


WEDGE_SCENES = {
    # the sloped face (30 deg) on a step's edge (a profile and a mesh), on a half-round's top; the bottom on
    # a plane
    "wedge-step-edge": (PROFILE, [0.93, 0.0, 0.321]),
    "wedge-mesh-step-edge": (step_mesh(), [0.43, 0.0, 0.321]),
    "wedge-half-round": (PROFILE, [1.9626, 0.0, 0.4283]),
    "wedge-plane": (tt.Flat(material=GROUND), [0.0, 0.0, 0.048]),
}


@pytest.mark.parametrize("name", list(WEDGE_SCENES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wedge_jacobians_against_finite_differences(name, seed):
    terrain, pos = WEDGE_SCENES[name]
    rng = np.random.default_rng(seed)
    sc = one_body(lambda: [wedge()], terrain, np.array(pos) + rng.normal(scale=5e-4, size=3), rng)
    q, v = state(sc, rng)
    sc.check(q, v)


@pytest.mark.parametrize("terrain, edge", [(PROFILE, (1.0, 0.3)), (step_mesh(), (0.5, 0.3))],
                         ids=["profile", "mesh"])
def test_wedge_on_step_edge_closed_form(terrain, edge):
    """A wedge's sloped front face (30 deg) pushed onto the top edge of a 0.3 m step: the edge is cut at the
    two Gauss stations across the width; each has the depth of the edge below the face plane, the force
    acts along the face's normal (up and back), and the total is the law's kn δ (Hooke, given
    coefficients; the wedge of the ground's material)."""
    angle = math.radians(30.0)
    sc = one_body(lambda: [wedge(angle=angle)], terrain, [0.0, 0.0, 0.0], np.random.default_rng(0), mat=GROUND)
    nf = np.array([math.sin(angle), 0.0, -math.cos(angle)])  # outward normal of the sloped face
    x_b = 0.2 - 0.1 / math.tan(angle)
    on_face = np.array([0.5 * (x_b + 0.2), 0.0, 0.0])  # the face's middle line (shape frame = body frame)
    delta = 0.002
    e = np.array([edge[0], 0.0, edge[1]])
    sc.system.q0[0, :3] = e - on_face + delta * nf  # nf . (e - centre - on_face) = -delta
    sc.system.q0[0, 3:] = [1, 0, 0, 0]
    d, n, p, k = penetrations(sc)
    assert len(d) == 2 and np.all(k == CK.K_PN)  # no vertex reaches the terrain
    np.testing.assert_allclose(d, delta, rtol=0, atol=1e-12)
    # side A is the ground: B (the wedge) is pushed along n = -(outward normal): up and back
    np.testing.assert_allclose(n, np.tile(-nf, (2, 1)), atol=1e-12)
    # the contact point: on the edge line, midway into the overlap
    np.testing.assert_allclose(p[:, [0, 2]], np.tile((e + 0.5 * delta * nf)[[0, 2]], (2, 1)), atol=1e-12)
    np.testing.assert_allclose(np.sort(p[:, 1]), [-0.15 / math.sqrt(3), 0.15 / math.sqrt(3)], atol=1e-12)
    f, *_ = sc.forces(sc.system.q0, np.zeros((1, 6)))
    np.testing.assert_allclose(f[0, :3], GROUND.kn * delta * -nf, rtol=1e-9, atol=1e-9)
    # the force's moment about the centre of mass: it acts at the contact points
    r = e + 0.5 * delta * nf - sc.system.q0[0, :3]
    np.testing.assert_allclose(f[0, 3:], np.cross(r, f[0, :3]), rtol=1e-9, atol=1e-9)


def test_cuboid_polyhedron_rests_on_ground_like_the_box():
    """Dropped on flat ground, a polyhedron with a box's corners follows the box (positions to 1e-9 m) and
    settles with the contact force equal to its weight."""
    steel = Material("steel", young=2e9, restitution=0.3, friction=0.5)
    zs = []
    for shape in (shapes.Box([0.4, 0.3, 0.1]), cuboid([0.4, 0.3, 0.1])):
        m = td.Model()
        b = m.add_body("b", mass=5.0, inertia=[0.05, 0.07, 0.1], pos=[0, 0, 0.06],
                       quat=[math.cos(0.02), math.sin(0.02), 0, 0])
        cs = ContactSystem(m, terrain=tt.Flat(material=steel))
        cs.add_shape(b, shape, material=steel)
        df = td.Simulation(m, step=2e-4, providers=[cs], output_step=0.01).run(0.6).frame()
        zs.append(df)
    np.testing.assert_allclose(zs[1]["b.pos.z"], zs[0]["b.pos.z"], rtol=0, atol=1e-9)
    fz = zs[1]["b.contact.force.z"].to_numpy()
    assert abs(fz[-1] - 5.0 * 9.81) < 1e-3 * 5.0 * 9.81


@pytest.mark.parametrize("points, reason", [
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], "at least 4 vertices"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], "flat"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]], "coincide"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.1, 0.1, 0.1]], "not convex"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, float("nan")]], "finite"),
])
def test_refused_polyhedra(points, reason):
    with pytest.raises(ValueError, match=reason):
        shapes.ConvexPolyhedron(points)


@pytest.mark.parametrize("seed", [0, 1])
def test_cuboid_polyhedron_on_winkler_ground_is_the_box(seed):
    """On Winkler ground (han-sander-mao §5) the probes of the face turned most against the ground: a
    polyhedron with a box's corners carries the box's lattice (same points, same cell areas): the same
    forces and Jacobians."""
    soil = Material.winkler("soil", 1e6)
    res = []
    for shape in (shapes.Box([0.4, 0.3, 0.1]), cuboid([0.4, 0.3, 0.1])):
        rng = np.random.default_rng(seed)
        sc = one_body(lambda shape=shape: [shape], tt.Flat(material=soil), np.array([0.0, 0.0, 0.045]), rng, mat=HARD)
        q, v = state(sc, rng)
        f, Kx, Kv, active, _ = sc.forces(q, v, want=True)
        res.append((f, Kx, Kv, active))
    (fb, kxb, kvb, nb), (fp, kxp, kvp, npo) = res
    assert nb == npo and nb >= 12  # of the 4 x 4 lattice of the bottom face (tilted: not every probe is in)
    np.testing.assert_allclose(fp, fb, rtol=0, atol=1e-9 * np.abs(fb).max())
    np.testing.assert_allclose(kxp, kxb, rtol=0, atol=1e-9 * np.abs(kxb).max())
    np.testing.assert_allclose(kvp, kvb, rtol=0, atol=1e-9 * np.abs(kvb).max())


def test_triangles_are_a_closed_outward_mesh():
    """``triangles()`` (the drawn hull): every edge shared by two triangles in opposite directions, each
    triangle wound counter-clockwise seen from outside, the enclosed volume (divergence theorem) that of the
    convex hull."""
    from scipy.spatial import ConvexHull

    import trackdyn.spec as S

    for part in S.get("m113").chassis.hull:
        sh = shapes.ConvexPolyhedron(part.vertices)
        V, T = sh.vertices, sh.triangles()
        edges = {}
        for t in T:
            for a, b in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
                edges[(a, b)] = edges.get((a, b), 0) + 1
        assert all(n == 1 and edges.get((b, a)) == 1 for (a, b), n in edges.items())
        c = V.mean(axis=0)
        vol = 0.0
        for t in T:
            a, b, d = V[t]
            nrm = np.cross(b - a, d - a)
            assert nrm @ (a - c) > 0  # outward
            vol += np.dot(a, np.cross(b, d)) / 6.0
        assert vol == pytest.approx(ConvexHull(V).volume, rel=1e-12)


@pytest.mark.parametrize("gap", [0.008, -0.004])
def test_an_edge_near_a_half_round_touches_only_where_the_round_reaches_it(gap):
    """The bottom rear edge of a cuboid beside a half-round's crown (PROFILE's 0.15 m half-round on its 0.3 m
    step, axis at x = 2.15 m, z = 0.3 m): 0.09 m behind the axis and low enough that both the bottom's plane and the rear face's
    plane lie within the radius of the axis, the edge itself ``gap`` from the round surface. The face planes
    pushed out by r would touch (the bottom by 0.15 - h); the polyhedron grown by r touches only when the
    edge does: with the gap open nothing, with it closed the two rear-bottom corners by the gap, as the box.
    (Before the fix the polyhedron took the bottom face's plane beyond the face, up to r (sqrt 2 - 1) short of
    the round; found while tracing the M113 hull's 12 in strike, which is a contact within the floor's face and
    the same after the fix: docs/study/README.md.)"""
    r, dx = 0.15, 0.09
    h = math.sqrt((r + gap) ** 2 - dx ** 2)  # the edge's height over the axis
    assert h < r and dx < r  # inside both pushed-out planes
    size = (0.4, 0.3, 0.1)
    centre = [2.15 + dx + size[0] / 2, 0.0, 0.3 + h + size[2] / 2]
    found = []
    for shape in (shapes.Box(list(size)), cuboid(size)):
        sc = one_body(lambda shape=shape: [shape], PROFILE, centre, np.random.default_rng(0), mat=GROUND)
        sc.system.q0[0, :3] = centre
        sc.system.q0[0, 3:] = [1, 0, 0, 0]
        found.append(penetrations(sc))
    for d, n, p, k in found:
        if gap > 0:
            assert len(d) == 0
        else:
            assert len(d) == 2 and np.all(k == CK.K_PL)  # the rear-bottom corners in the half-round
            np.testing.assert_allclose(d, -gap, rtol=0, atol=1e-12)
            # a corner's record has the shape on side A: the ground (B) is pushed from the corner to the axis
            np.testing.assert_allclose(n, np.tile([-dx, 0.0, -h], (2, 1)) / (r + gap), atol=1e-12)
    (db, nb_, pb, kb), (dp, np_, pp, kp) = found
    np.testing.assert_allclose(np.sort(dp), np.sort(db), rtol=0, atol=1e-12)
