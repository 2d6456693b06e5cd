"""Hull files: ``chassis.hull`` as a TOML list of parts or an OBJ/STL triangle mesh, each mesh component checked
closed, consistently oriented and convex; relative names resolve against the spec file's folder; the M113 hull
lives in one file shared by the specs on its geometry."""

import struct
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pytest

import trackdyn.spec as S
from trackdyn.contact.shapes import convex_faces
from trackdyn.spec.vehicle import BoxSpec, ConvexSpec

ROOT = Path(__file__).resolve().parents[3]
LIB = ROOT / "src" / "trackdyn" / "spec" / "library"

# a box between the M113's tracks: x -3 .. -1, y -0.5 .. 0.5, z 0 .. 0.5 (vehicle frame), over the running gear
LO, HI = (-3.0, -0.5, 0.0), (-1.0, 0.5, 0.5)


def box_mesh(lo=LO, hi=HI):
    """The 8 corners and 6 outward quads (counter-clockwise seen from outside) of an axis-aligned box."""
    V = [(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    i = {v: k for k, v in enumerate(V)}
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    quads = [
        [(x0, y0, z0), (x0, y0, z1), (x0, y1, z1), (x0, y1, z0)],  # -x
        [(x1, y0, z0), (x1, y1, z0), (x1, y1, z1), (x1, y0, z1)],  # +x
        [(x0, y0, z0), (x1, y0, z0), (x1, y0, z1), (x0, y0, z1)],  # -y
        [(x0, y1, z0), (x0, y1, z1), (x1, y1, z1), (x1, y1, z0)],  # +y
        [(x0, y0, z0), (x0, y1, z0), (x1, y1, z0), (x1, y0, z0)],  # -z
        [(x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)],  # +z
    ]
    return V, [[i[p] for p in q] for q in quads]


def triangles(faces):
    return [(f[0], f[j], f[j + 1]) for f in faces for j in range(1, len(f) - 1)]


def obj_text(V, F, name=None, first=1):
    head = f"o {name}\n" if name else ""
    return head + "".join(f"v {x!r} {y!r} {z!r}\n" for x, y, z in V) + \
        "".join("f " + " ".join(str(k + first) for k in f) + "\n" for f in F)


def stl_ascii(V, T):
    out = ["solid box"]
    for t in T:
        out += ["facet normal 0 0 0", "outer loop", *[f"vertex {V[k][0]!r} {V[k][1]!r} {V[k][2]!r}" for k in t],
                "endloop", "endfacet"]
    return "\n".join(out + ["endsolid box"]) + "\n"


def stl_binary(V, T):
    data = b"binary box".ljust(80, b" ") + struct.pack("<I", len(T))
    for t in T:
        data += struct.pack("<12fH", 0, 0, 0, *[c for k in t for c in V[k]], 0)
    return data


def with_hull(hull, base=None):
    return S.validate_spec({**S.get("m113").model_dump(mode="json"), "chassis": {
        **S.get("m113").chassis.model_dump(mode="json"), "hull": hull}}, base=base)


def refused(hull, base=None) -> str:
    with pytest.raises(S.SpecError) as ei:
        with_hull(hull, base)
    return str(ei.value)


def box_corners(lo=LO, hi=HI):
    return sorted((x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2]))


# ------------------------------------------------------------------ a closed convex mesh is its convex part
@pytest.mark.parametrize("kind", ["obj-quads", "obj-triangles", "stl-ascii", "stl-binary"])
def test_a_cube_mesh_is_the_equivalent_box(tmp_path, kind):
    V, F = box_mesh()
    T = triangles(F)
    if kind == "obj-quads":
        (tmp_path / "h.obj").write_text(obj_text(V, F, name="box"))
    elif kind == "obj-triangles":
        (tmp_path / "h.obj").write_text(obj_text(V, T, name="box"))
    elif kind == "stl-ascii":
        (tmp_path / "h.stl").write_text(stl_ascii(V, T))
    else:
        (tmp_path / "h.stl").write_bytes(stl_binary(V, T))
    name = "h.obj" if kind.startswith("obj") else "h.stl"
    spec = with_hull(name, base=tmp_path)
    (part,) = spec.chassis.hull
    assert isinstance(part, ConvexSpec)
    assert sorted(part.vertices) == box_corners()
    assert part.label == ("box" if kind.startswith("obj") else "h.stl component 1")
    box = BoxSpec(center=tuple((a + b) / 2 for a, b in zip(LO, HI)), size=tuple(b - a for a, b in zip(LO, HI)))
    assert part.extent() == S.vehicle.hull_part_extent(box)
    # the solid is the box's: its six planes n.x <= d
    N, D, _ = convex_faces(part.vertices)
    planes = sorted((tuple(np.round(n, 12) + 0.0), round(d, 12)) for n, d in zip(N, D))
    expect = sorted([((-1.0, 0.0, 0.0), 3.0), ((1.0, 0.0, 0.0), -1.0), ((0.0, -1.0, 0.0), 0.5),
                     ((0.0, 1.0, 0.0), 0.5), ((0.0, 0.0, -1.0), 0.0), ((0.0, 0.0, 1.0), 0.5)])
    assert planes == expect


def test_inward_orientation_several_components_and_face_centre_vertices(tmp_path):
    """A mesh whose triangles all face inward is the same solid; two cubes are two parts; a vertex in the middle
    of a face (a subdivided face) is not a corner of the part."""
    V, F = box_mesh()
    V2, F2 = box_mesh((-2.5, -0.4, 0.6), (-1.5, 0.4, 1.0))
    inward = [f[::-1] for f in F]
    # split the first cube's +z face into 4 triangles around its centre
    centre = len(V) + len(V2)
    top = F[5]
    F_split = F[:5] + [[top[k], top[(k + 1) % 4], centre] for k in range(4)]
    # vertices of the second cube were written after the first's, the centre vertex last
    text = obj_text(V, [], name=None) + obj_text(V2, [], name=None) + "v -2.0 0.0 0.5\n" + \
        "o lower\n" + "".join("f " + " ".join(str(k + 1) for k in f) + "\n" for f in F_split) + \
        "o upper\n" + "".join("f " + " ".join(str(k + 1 + len(V)) for k in f) + "\n" for f in inward)
    (tmp_path / "two.obj").write_text(text)
    lower, upper = with_hull("two.obj", base=tmp_path).chassis.hull
    assert (lower.label, upper.label) == ("lower", "upper")
    assert sorted(lower.vertices) == box_corners()
    assert sorted(upper.vertices) == box_corners((-2.5, -0.4, 0.6), (-1.5, 0.4, 1.0))


# ------------------------------------------------------------------ refused meshes, naming edge / vertex
def test_an_open_mesh_is_refused_naming_the_open_edge(tmp_path):
    V, F = box_mesh()
    (tmp_path / "open.obj").write_text(obj_text(V, F[:5]))  # the top face missing
    msg = refused("open.obj", base=tmp_path)
    assert "chassis.hull = 'open.obj'" in msg and "not closed" in msg and "open edge" in msg, msg
    # the open edge is one of the top face's edges: both its vertices at z = 0.5
    import re

    ends = re.findall(r"vertex \d+ \[([^\]]+)\]", msg)[:2]
    assert len(ends) == 2 and all(float(e.split(",")[2]) == 0.5 for e in ends), msg


def test_a_flipped_triangle_is_refused(tmp_path):
    V, F = box_mesh()
    T = triangles(F)
    T[3] = T[3][::-1]
    (tmp_path / "flip.obj").write_text(obj_text(V, T))
    msg = refused("flip.obj", base=tmp_path)
    assert "not consistently oriented" in msg and "line 12" in msg, msg  # 8 vertex lines, T[3] on line 12


def test_a_non_convex_component_is_refused_naming_the_vertex(tmp_path):
    """A cube with its top dented: the top's centre vertex 0.2 m below the top face."""
    V, F = box_mesh()
    V = V + [(-2.0, 0.0, 0.3)]
    top = F[5]
    F = F[:5] + [[top[k], top[(k + 1) % 4], 8] for k in range(4)]
    (tmp_path / "dent.obj").write_text(obj_text(V, F))
    msg = refused("dent.obj", base=tmp_path)
    assert "not convex" in msg and "in front of the plane" in msg, msg
    # the offender is a top corner standing in front of a dented triangle's plane
    import re

    vertex = re.search(r"not convex: vertex \d+ \[([^\]]+)\] stands ([0-9.e-]+) m", msg)
    assert vertex and float(vertex.group(1).split(",")[2]) == 0.5 and float(vertex.group(2)) > 0.05, msg


def test_convexity_tolerance(tmp_path):
    """A top corner raised 1e-9 m (below the default tolerance, 1e-6 of the 2.29 m diagonal) is accepted; raised
    1 mm it is refused, and accepted again with tolerance = 2 mm."""
    V, F = box_mesh()
    top = F[5][1]  # a top corner off the diagonal the top quad is fanned along: raised, it makes a valley
    for dz, ok, tol in ((1e-9, True, None), (1e-3, False, None), (1e-3, True, 2e-3)):
        Vd = [(x, y, z + dz) if k == top else (x, y, z) for k, (x, y, z) in enumerate(V)]
        (tmp_path / "t.obj").write_text(obj_text(Vd, triangles(F)))
        ref = {"file": "t.obj"} if tol is None else {"file": "t.obj", "tolerance": tol}
        if ok:
            assert len(with_hull(ref, base=tmp_path).chassis.hull) == 1
        else:
            assert "not convex" in refused(ref, base=tmp_path)


@pytest.mark.parametrize("text, reason", [
    ("v 0 0 0\nv 1 0 0\nf 1 2 3\n", "refers to no vertex"),
    ("v 0 0 zero\n", "3 finite coordinates"),
    ("v 0 0 0\n", "no faces"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2\n", "not part of a closed triangle mesh"),
])
def test_malformed_obj_is_refused_naming_the_line(tmp_path, text, reason):
    (tmp_path / "bad.obj").write_text(text)
    msg = refused("bad.obj", base=tmp_path)
    assert reason in msg and "bad.obj" in msg, msg


def test_file_reference_errors(tmp_path):
    assert "cannot read" in refused("missing.obj", base=tmp_path)
    assert "unknown key(s) scal" in refused({"file": "h.obj", "scal": 2.0}, base=tmp_path)
    assert "unknown hull file type '.ply'" in refused("h.ply", base=tmp_path)
    assert "scale = -1" in refused({"file": "h.obj", "scale": -1}, base=tmp_path)


# ------------------------------------------------------------------ placement, scale, offset, relative paths
def test_the_placement_checks_apply_to_file_hulls(tmp_path):
    V, F = box_mesh()
    (tmp_path / "low.obj").write_text(obj_text([(x, y, z - 0.7) for x, y, z in V], F))
    assert "below the ground line" in refused("low.obj", base=tmp_path)
    (tmp_path / "ahead.obj").write_text(obj_text([(x + 4.0, y, z) for x, y, z in V], F))
    assert "not over the running gear" in refused("ahead.obj", base=tmp_path)


def test_scale_and_offset_place_a_cad_mesh(tmp_path):
    """The same box drawn in mm about its own centre, scaled by 0.001 and moved to its place."""
    V, F = box_mesh((-1000.0, -500.0, -250.0), (1000.0, 500.0, 250.0))
    (tmp_path / "mm.obj").write_text(obj_text(V, F))
    (part,) = with_hull({"file": "mm.obj", "scale": 0.001, "offset": [-2.0, 0.0, 0.25]}, base=tmp_path).chassis.hull
    np.testing.assert_allclose(sorted(part.vertices), box_corners(), atol=1e-12)


def test_relative_names_resolve_against_the_spec_files_folder(tmp_path, monkeypatch):
    """A spec file and its hull in one folder load from any working directory; the hull may mix inline parts
    and file parts, and a TOML hull file's bad part is refused naming the file and the part."""
    folder = tmp_path / "vehicle"
    folder.mkdir()
    V, F = box_mesh()
    (folder / "box.obj").write_text(obj_text(V, F, name="box"))
    data = tomllib.loads(S.dump_toml(S.get("m113")))
    data["chassis"]["hull"] = [{"center": [-2.0, 0.0, 0.9], "size": [1.0, 1.0, 0.2]}, {"file": "box.obj"}]
    import tomli_w

    (folder / "v.toml").write_text(tomli_w.dumps(data))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    box, mesh = S.load_spec("../vehicle/v.toml").chassis.hull
    assert isinstance(box, BoxSpec) and sorted(mesh.vertices) == box_corners()
    # a TOML hull file with a bad part
    (folder / "parts.toml").write_text('[[hull]]\nvertices = [[-3, 0, 0], [-1, 0, 0], [-3, 1, 0], [-1, 1, 0]]\n')
    data["chassis"]["hull"] = [{"center": [-2.0, 0.0, 0.9], "size": [1.0, 1.0, 0.2]}, {"file": "parts.toml"}]
    (folder / "v.toml").write_text(tomli_w.dumps(data))
    with pytest.raises(S.SpecError) as ei:
        S.load_spec(folder / "v.toml")
    msg = str(ei.value)
    assert "chassis.hull" in msg and "[1]: hull file 'parts.toml'" in msg and "hull[0].vertices" in msg \
        and "flat" in msg, msg


# ------------------------------------------------------------------ the M113 hull, defined once
# The vertices the four specs carried inline before the hull moved to hulls/m113.toml (git 2aaf211,
# src/trackdyn/spec/library/m113.toml, [[chassis.hull]]), copied here as written there.
FORMER_M113_HULL = [
    [[-4.4, 0.85, -0.1108], [0.1614, 0.85, -0.1108], [0.464, 0.85, 0.4134], [-0.4296, 0.85, 1.307],
     [-4.4, 0.85, 1.307], [-4.4, -0.85, -0.1108], [0.1614, -0.85, -0.1108], [0.464, -0.85, 0.4134],
     [-0.4296, -0.85, 1.307], [-4.4, -0.85, 1.307]],
    [[-4.4, 1.343, 0.33], [0.4159, 1.343, 0.33], [0.464, 1.343, 0.4134], [-0.4296, 1.343, 1.307],
     [-4.4, 1.343, 1.307], [-4.4, -1.343, 0.33], [0.4159, -1.343, 0.33], [0.464, -1.343, 0.4134],
     [-0.4296, -1.343, 1.307], [-4.4, -1.343, 1.307]],
]


@pytest.mark.parametrize("name", ["m113", "m113-base", "m113-alternative", "m113-evaluation", "apc"])
def test_the_m113_hull_from_its_file_is_the_former_inline_hull(name):
    text = (LIB / f"{name}.toml").read_text()
    assert 'hull = "hulls/m113.toml"' in text and "[[chassis.hull]]" not in text
    hull = S.get(name).chassis.hull
    assert [[list(v) for v in p.vertices] for p in hull] == FORMER_M113_HULL  # exactly, not approximately
    assert [p.label for p in hull] == [
        "lower hull between the tracks: floor, lower front plate, upper front plate, roof, rear ramp",
        "upper hull over the tracks (sponsons): the same front plates, roof and rear above the track loops"]


def test_hull_files_ship_as_package_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["trackdyn"]
    for f in (LIB / "hulls").iterdir():
        rel = f.relative_to(ROOT / "src" / "trackdyn").as_posix()
        assert any(fnmatch(rel, g) for g in globs), rel
    assert not any(n.startswith("hulls") for n in S.library_names())  # a hull file is not a vehicle
