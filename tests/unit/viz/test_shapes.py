"""Visual shapes: validation, round trips, and their geometry against closed forms."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from trackdyn.viz import shapes as S
from trackdyn.viz.geometry import (SideBatch, convex_hull_2d, flat_normals, quats_to_matrices, shape_mesh,
                                   triangulate_polygon)
from trackdyn.math.quaternion import quat_from_axis_angle, quat_to_matrix


def volume(v, f):
    """Signed volume of a closed triangle mesh (divergence theorem): positive when faces point outwards."""
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    return np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0


def is_closed(f):
    """Every directed edge appears once and its reverse once: a closed, consistently wound surface."""
    edges = {}
    for t in f:
        for a, b in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
            edges[(a, b)] = edges.get((a, b), 0) + 1
    return all(n == 1 and edges.get((b, a)) == 1 for (a, b), n in edges.items())


def polygon_area(p):
    p = np.asarray(p)
    return 0.5 * np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1])


def lens_area(R, r, d):
    """Area of the intersection of discs of radii R and r whose centres are d apart."""
    a = r * r * np.arccos((d * d + r * r - R * R) / (2 * d * r))
    b = R * R * np.arccos((d * d + R * R - r * r) / (2 * d * R))
    c = 0.5 * np.sqrt((-d + r + R) * (d + r - R) * (d - r + R) * (d + r + R))
    return a + b - c


@pytest.mark.parametrize("bad, field", [
    (lambda: S.Box(size=(1, 0, 1)), "Box.size"),
    (lambda: S.Box(size=(1, 1, 1), quat=(1, 1, 0, 0)), "Box.quat"),
    (lambda: S.Cylinder(radius=-1, length=1), "Cylinder.radius"),
    (lambda: S.Cylinder(radius=1, length=1, axis=(0, 0, 0)), "Cylinder.axis"),
    (lambda: S.Sphere(radius=0.1, color="red"), "Sphere.color"),
    (lambda: S.Extrusion(outline=[(0, 0), (1, 0), (2, 0)], width=1), "Extrusion.outline"),
    (lambda: S.Extrusion(outline=[(0, 0), (1, 0), (0, 1)], width=1, axis="w"), "Extrusion.axis"),
    (lambda: S.Mesh(vertices=[(0, 0, 0), (1, 0, 0), (0, 1, 0)], faces=[(0, 1, 3)]), "Mesh.faces"),
    (lambda: S.Polyline(points=[(0, 0, 0)]), "Polyline.points"),
])
def test_bad_shapes_name_the_field(bad, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        bad()


def test_add_visual_requires_to_dict():
    import trackdyn as td

    m = td.Model()
    b = m.add_body("b", mass=1.0, inertia=[1, 1, 1])
    m.add_visual(b, S.Sphere(0.1))
    with pytest.raises(ValueError, match="to_dict"):
        m.add_visual(b, object())


@settings(max_examples=30, deadline=None)
@given(st.floats(0.01, 5), st.floats(0.01, 5), st.floats(0.01, 5), st.integers(0, 2**31 - 1))
def test_round_trip_and_closed_form_volumes(a, b, c, seed):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    axis = rng.normal(size=3)
    outline = [(0, 0), (a, 0), (a, b), (0.5 * a, 0.3 * b), (0, b)]  # non-convex pentagon
    cases = [
        (S.Box(size=(a, b, c), center=tuple(rng.normal(size=3)), quat=tuple(q)), a * b * c),
        (S.Cylinder(radius=a, length=b, axis=tuple(axis)), 0.5 * 24 * np.sin(2 * np.pi / 24) * a * a * b),
        (S.Extrusion(outline=outline, width=c, axis=str(rng.choice(["x", "y", "z"]))), polygon_area(outline) * c),
    ]
    for shape, exact in cases:
        d = shape.to_dict()
        assert S.shape_from_dict(d) == shape
        v, f = shape_mesh(d)
        assert is_closed(f), shape
        assert np.isclose(volume(v, f), exact, rtol=1e-9), shape


def test_sphere_mesh_volume_converges_from_below():
    v, f = shape_mesh(S.Sphere(radius=2.0).to_dict())
    vol = volume(v, f)
    assert is_closed(f)
    assert 0.9 * (4 / 3) * np.pi * 8 < vol < (4 / 3) * np.pi * 8


def test_sprocket_outline_matches_the_closed_form():
    n, rt, r, rc = 10, 0.2605, 0.089, 0.3  # Chrono's M113 sprocket profile parameters
    o = S.sprocket_outline(n, rt, r, rc, points_per_arc=200)
    radii = np.hypot(o[:, 0], o[:, 1])
    assert np.isclose(radii.max(), rt, rtol=1e-12)
    assert np.isclose(radii.min(), rc - r, atol=r * (1 - np.cos(np.pi / 200)) + 1e-12)
    exact = np.pi * rt**2 - n * lens_area(rt, r, rc)
    assert polygon_area(o) > 0
    assert np.isclose(polygon_area(o), exact, rtol=5e-5)  # chords: O((π/200)²) of each arc's segment
    # n-fold symmetry: the outline rotated by one tooth is the same point set
    c, s = np.cos(2 * np.pi / n), np.sin(2 * np.pi / n)
    rot = o @ np.array([[c, s], [-s, c]])
    dist = np.min(np.linalg.norm(rot[:, None, :] - o[None, :, :], axis=2), axis=1)
    assert dist.max() < 1e-9
    v, f = shape_mesh(S.sprocket(n, rt, r, rc, width=0.1, points_per_arc=200).to_dict())
    assert is_closed(f) and np.isclose(volume(v, f), 0.1 * polygon_area(o), rtol=1e-9)


@pytest.mark.parametrize("kw, msg", [
    (dict(n_teeth=2), "n_teeth"),
    (dict(outer_radius=0.5), "do not cut"),
    (dict(n_teeth=40), "overlap"),
])
def test_sprocket_rejects_impossible_geometry(kw, msg):
    args = dict(n_teeth=10, outer_radius=0.2605, arc_radius=0.089, arc_center_radius=0.3) | kw
    with pytest.raises(ValueError, match=msg):
        S.sprocket_outline(**args)


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 40), st.integers(0, 2**31 - 1))
def test_triangulation_covers_star_polygons(n, seed):
    rng = np.random.default_rng(seed)
    ang = np.sort(rng.uniform(0, 2 * np.pi, n))
    gaps = np.diff(np.concatenate([ang, [ang[0] + 2 * np.pi]]))
    if gaps.min() < 1e-3 or gaps.max() > 0.9 * np.pi:
        return  # not a simple polygon star-shaped about the origin
    rad = rng.uniform(0.2, 1.0, n)
    p = np.column_stack([rad * np.cos(ang), rad * np.sin(ang)])
    if rng.random() < 0.5:
        p = p[::-1]
    v, tri = triangulate_polygon(p)
    assert np.array_equal(v[:n], p) and len(tri) in (n - 2, n)
    areas = [polygon_area(v[t]) for t in tri]
    assert min(areas) > -1e-12
    assert np.isclose(sum(areas), abs(polygon_area(p)), rtol=1e-9)


def test_ear_clipping_covers_a_comb():
    """A comb (not star-shaped from its centroid) goes through ear clipping."""
    teeth = 6
    pts = [(0.0, 0.0), (2.0 * teeth, 0.0)]
    for k in range(teeth - 1, -1, -1):
        pts += [(2.0 * k + 2.0, 3.0), (2.0 * k + 1.0, 3.0), (2.0 * k + 1.0, 1.0), (2.0 * k + 0.5, 1.0)]
    p = np.array(pts[:-1] + [(0.0, 3.0)])
    v, tri = triangulate_polygon(p)
    assert len(v) == len(p) and len(tri) == len(p) - 2
    areas = [polygon_area(v[t]) for t in tri]
    assert min(areas) > 0 and np.isclose(sum(areas), polygon_area(p), rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_convex_hull_matches_qhull(seed):
    from scipy.spatial import ConvexHull

    p = np.random.default_rng(seed).normal(size=(40, 2))
    h = convex_hull_2d(p)
    ref = p[ConvexHull(p).vertices]
    assert np.isclose(polygon_area(h), ConvexHull(p).volume, rtol=1e-12)
    assert {tuple(x) for x in np.round(h, 12)} == {tuple(x) for x in np.round(ref, 12)}


def test_flat_normals_are_unit_and_outward():
    v, f = shape_mesh(S.Box(size=(1, 2, 3)).to_dict())
    pos, nrm = flat_normals(v, f)
    assert np.allclose(np.linalg.norm(nrm, axis=1), 1.0)
    centroids = pos.reshape(-1, 3, 3).mean(axis=1)
    assert np.all(np.einsum("ij,ij->i", centroids, nrm[::3]) > 0)


@settings(max_examples=30, deadline=None)
@given(st.floats(-np.pi, np.pi), st.integers(0, 2**31 - 1))
def test_side_silhouette_of_a_pitched_box(angle, seed):
    """A box turned by θ about y shows a silhouette of width lx|cos θ| + lz|sin θ| (closed form)."""
    lx, ly, lz = 0.8, 0.5, 0.3
    p = np.random.default_rng(seed).normal(size=3)
    batch = SideBatch([(0, S.Box(size=(lx, ly, lz)).to_dict(), "#000000", "#000000")])
    R = quat_to_matrix(quat_from_axis_angle([0, 1, 0], angle))[None]
    polys, *_ = batch.project(R, p[None])
    x, z = polys[0][:, 0], polys[0][:, 1]
    assert np.isclose(np.ptp(x), lx * abs(np.cos(angle)) + lz * abs(np.sin(angle)), rtol=1e-9)
    assert np.isclose(np.ptp(z), lx * abs(np.sin(angle)) + lz * abs(np.cos(angle)), rtol=1e-9)
    assert np.isclose(polygon_area(convex_hull_2d(polys[0])), lx * lz, rtol=1e-9)


def test_side_view_of_a_sprocket_keeps_its_teeth():
    sp = S.sprocket(10, 0.2605, 0.089, 0.3, width=0.1)
    batch = SideBatch([(0, sp.to_dict(), "#000000", "#000000")])
    th = 0.3
    R = quats_to_matrices(quat_from_axis_angle([0, 1, 0], th)[None])
    polys, *_ = batch.project(R, np.zeros((1, 3)))
    o = np.asarray(sp.outline)
    # the outline (x, z) turned by θ about y: x' = x cos θ + z sin θ, z' = -x sin θ + z cos θ
    exact = np.column_stack([o[:, 0] * np.cos(th) + o[:, 1] * np.sin(th), -o[:, 0] * np.sin(th) + o[:, 1] * np.cos(th)])
    assert polys[0].shape == exact.shape and np.allclose(polys[0], exact)
