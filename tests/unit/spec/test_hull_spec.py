"""Hull specs: boxes and convex polyhedra, refused before anything runs, and the built-in hulls' geometry
against the published dimensions cited in their spec files."""

import math

import numpy as np
import pytest

import trackdyn.spec as S
from trackdyn.assembly.contact import hull_shapes
from trackdyn.contact import shapes

CUBE = [[x, y, z] for x in (-3.0, -1.0) for y in (-0.5, 0.5) for z in (0.0, 0.5)]


@pytest.mark.parametrize("hull, path, reason", [
    ([{"vertices": CUBE + [[-2.0, 0.0, 0.25]]}], "chassis.hull[0].vertices", "not convex"),
    ([{"vertices": [[-3, 0, 0], [-1, 0, 0], [-3, 1, 0], [-1, 1, 0]]}], "chassis.hull[0].vertices", "flat"),
    ([{"vertices": CUBE[:3]}], "chassis.hull[0].vertices", "at least 4"),
    ([{"vertices": CUBE + [CUBE[0]]}], "chassis.hull[0].vertices", "coincide"),
    ([{"center": [-2.0, 0.0, 0.0], "size": [4.0, 1.7, 1.5]}], "chassis.hull[0]", "below the ground line"),
    ([{"vertices": [[x, y, z - 0.7] for x, y, z in CUBE]}], "chassis.hull[0]", "below the ground line"),
    ([{"center": [3.0, 0.0, 0.5], "size": [1.0, 1.7, 0.5]}], "chassis.hull", "not over the running gear"),
    ([{"vertices": CUBE, "centre": [0, 0, 0]}], "chassis.hull[0]", "Extra inputs"),
])
def test_invalid_hulls_are_refused_naming_the_field(hull, path, reason):
    with pytest.raises(S.SpecError) as ei:
        S.get("m113").replace({"chassis.hull": hull})
    msg = str(ei.value)
    assert path in msg and reason in msg, msg


def test_mixed_hull_round_trips_and_builds():
    spec = S.get("m113").replace({"chassis.hull": [{"center": [-2.0, 0.0, 0.4], "size": [4.0, 1.7, 0.8]},
                                                   {"vertices": CUBE, "label": "cube"}]})
    for fmt in ("toml", "json"):
        text = S.dump_toml(spec) if fmt == "toml" else S.dump_json(spec)
        assert S.loads_spec(text, fmt) == spec
    box, poly = hull_shapes(spec)
    assert isinstance(box, shapes.Box) and isinstance(poly, shapes.ConvexPolyhedron)
    # body frame: origin at the chassis centre of mass
    np.testing.assert_allclose(box.pos, np.array([-2.0, 0.0, 0.4]) - spec.chassis.com)
    verts = poly.vertices @ poly.rot.T + poly.pos + spec.chassis.com
    np.testing.assert_allclose(np.sort(verts, axis=0), np.sort(np.array(CUBE), axis=0), atol=1e-12)


def _plate_angles(part):
    """Angles from vertical (deg) of the faces whose outward normal points forward and down / up."""
    sh = shapes.ConvexPolyhedron(part.vertices)
    out = {}
    for n in sh.face_normal:
        if n[0] > 1e-6 and abs(n[1]) < 1e-9:
            out["lower" if n[2] < 0 else "upper"] = math.degrees(math.atan2(abs(n[2]), n[0]))
    return out


@pytest.mark.parametrize("name", ["m113", "apc", "m113-alternative"])
def test_m113_hull_has_the_published_dimensions(name):
    """Hunnicutt's M113 sheet: length 4.864 m, width over the track shrouds 2.686 m, lower front plate 30 deg
    and upper front plate 45 deg from vertical; ground clearance 0.43 m and hull height 1.85 m above the
    settled ground (0.543 m below the sprocket axis, the pose pitched 0.785 deg nose-down, spec comment)."""
    spec = S.get(name)
    V = np.concatenate([np.asarray(p.vertices) for p in spec.chassis.hull])
    assert V[:, 0].max() - V[:, 0].min() == pytest.approx(4.864, abs=1e-9)
    assert V[:, 1].max() - V[:, 1].min() == pytest.approx(2.686, abs=1e-9)
    lower, upper = spec.chassis.hull
    a = _plate_angles(lower)
    assert a["lower"] == pytest.approx(30.0, abs=0.01) and a["upper"] == pytest.approx(45.0, abs=0.01)
    floor = V[V[:, 2] == V[:, 2].min()]
    x_edge = floor[:, 0].max()  # the belly's front edge, where the settled clearance is measured
    assert V[:, 2].min() + 0.543 - x_edge * np.tan(np.radians(0.785)) == pytest.approx(0.43, abs=1e-4)
    assert V[:, 2].max() + 0.543 == pytest.approx(1.85, abs=1e-9)
    # the sponsons' front lies on the same plates
    assert _plate_angles(upper)["lower"] == pytest.approx(30.0, abs=0.05)
    # the lower hull stays inside the track loops' inner edges
    assert np.abs(np.asarray(lower.vertices)[:, 1]).max() < spec.tracks.lateral_offset - 0.5 * spec.shoes.width


def test_marder_hull_has_the_published_dimensions():
    spec = S.get("marder")
    V = np.concatenate([np.asarray(p.vertices) for p in spec.chassis.hull])
    assert V[:, 0].max() - V[:, 0].min() == pytest.approx(6.79, abs=1e-9)
    assert V[:, 1].max() - V[:, 1].min() == pytest.approx(3.24, abs=1e-9)
    assert V[:, 2].min() + 0.607 == pytest.approx(0.44, abs=1e-9)
