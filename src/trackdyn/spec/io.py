"""Spec files: TOML and JSON in and out, hull files (TOML part lists, OBJ and STL meshes), and the library
of built-in vehicles."""

from __future__ import annotations

import json
import os
import struct
import tomllib
from importlib import resources
from pathlib import Path

from .vehicle import SpecError, VehicleSpec, validate_spec

__all__ = ["load_spec", "loads_spec", "dump_toml", "dump_json", "library_names", "get", "read_hull_file",
           "MESH_CONVEX_TOLERANCE"]

MESH_CONVEX_TOLERANCE = 1e-6
"""Default convexity tolerance of a mesh component, as a fraction of its bounding-box diagonal: a vertex may
stand this far in front of a face plane (text meshes round coordinates) and the component still counts as
convex."""


def _clean(obj):
    """TOML has no null: drop None values (they mean 'use the default / derive')."""
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def dump_toml(spec: VehicleSpec) -> str:
    import tomli_w

    return tomli_w.dumps(_clean(spec.model_dump(mode="json")))


def dump_json(spec: VehicleSpec) -> str:
    return json.dumps(spec.model_dump(mode="json"), indent=2)


def loads_spec(text: str, fmt: str = "toml", source: str | None = None, base=None) -> VehicleSpec:
    """Parse and validate a spec from TOML or JSON text; errors name the field path.

    ``base``: the folder (a path or an ``importlib.resources`` traversable) against which relative file
    references in the spec (``chassis.hull = "hull.obj"``) resolve; default the working directory.
    """
    try:
        if fmt == "toml":
            data = tomllib.loads(text)
        elif fmt == "json":
            data = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"{c} is not allowed")))
        else:
            raise ValueError(f"unknown spec format {fmt!r}")
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, ValueError, TypeError, RecursionError) as err:
        raise SpecError([("(file)", None, f"cannot parse {fmt.upper()}: {err}")], source) from None
    if not isinstance(data, dict):
        raise SpecError([("(file)", type(data).__name__, "the top level must be a table")], source)
    return validate_spec(data, source, base=base)


def load_spec(path) -> VehicleSpec:
    """Load a spec file (``.toml`` or ``.json``)."""
    p = Path(path)
    fmt = "json" if p.suffix.lower() == ".json" else "toml"
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SpecError([("(file)", str(p), f"cannot read: {err}")], str(p)) from None
    return loads_spec(text, fmt, source=str(p), base=p.parent)


def library_names() -> list[str]:
    files = resources.files("trackdyn.spec").joinpath("library")
    return sorted(f.name[:-5] for f in files.iterdir() if f.name.endswith(".toml") and f.is_file())


def get(name: str) -> VehicleSpec:
    """A built-in vehicle by name (``trackdyn vehicles`` lists them), or a spec file path."""
    if name in library_names():
        text = resources.files("trackdyn.spec").joinpath("library", f"{name}.toml").read_text(encoding="utf-8")
        return loads_spec(text, "toml", source=f"library:{name}",
                          base=resources.files("trackdyn.spec").joinpath("library"))
    p = Path(name)
    if p.suffix.lower() in (".toml", ".json") and p.exists():
        return load_spec(p)
    raise ValueError(f"unknown vehicle {name!r}; built-in: {', '.join(library_names())} (or a .toml/.json path)")



# ------------------------------------------------------------------- hull files
_REF_KEYS = {"file", "scale", "offset", "tolerance"}


def _resolve(name: str, base):
    if os.path.isabs(name):
        return Path(name)
    return (Path.cwd() if base is None else base).joinpath(name)


def read_hull_file(ref, base=None) -> list:
    """The hull parts of a hull file reference, validated (``BoxSpec`` / ``ConvexSpec``, vehicle frame).

    ``ref`` is a file name or a table ``{file, scale, offset, tolerance}``: ``scale`` (-) multiplies the file's
    coordinates and ``offset`` (m, vehicle frame) is then added (a CAD mesh in mm: ``scale = 0.001``);
    ``tolerance`` (m) is how far a mesh vertex may stand in front of a face plane of its component (default
    :data:`MESH_CONVEX_TOLERANCE` times the component's bounding-box diagonal). A relative name resolves
    against ``base`` (the spec file's folder). The file is

    - ``.toml``: a list of parts ``[[hull]]`` in the spec's own format (boxes ``center``/``size``, convex
      polyhedra ``vertices``/``label``), so that several specs share one hull;
    - ``.obj`` (Wavefront, ``v`` and ``f`` lines; polygons are fanned into triangles) or ``.stl`` (ASCII or
      binary; coincident corners are merged): a triangle mesh whose connected components are each checked
      closed (every edge shared by exactly two triangles), consistently oriented (the two triangles run
      their shared edge in opposite directions) and convex (every vertex of the component on or behind each
      of its triangles' planes), and each becomes one convex polyhedron.

    Raises ``ValueError`` naming the file and the reason (the open edge, the flipped triangle, the vertex
    that breaks convexity, with their coordinates and line numbers).
    """
    if isinstance(ref, dict):
        unknown = sorted(set(ref) - _REF_KEYS)
        if unknown:
            raise ValueError(f"unknown key(s) {', '.join(unknown)} in a hull file reference; allowed: "
                             f"{', '.join(sorted(_REF_KEYS))}")
        name = ref.get("file")
        scale = ref.get("scale", 1.0)
        offset = ref.get("offset", (0.0, 0.0, 0.0))
        tol = ref.get("tolerance")
    else:
        name, scale, offset, tol = ref, 1.0, (0.0, 0.0, 0.0), None
    if isinstance(name, os.PathLike):
        name = os.fspath(name)
    if not isinstance(name, str) or not name:
        raise ValueError(f"file must be a file name, got {name!r}")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < float("inf"):
        raise ValueError(f"scale = {scale!r} must be a positive number")
    if (not isinstance(offset, (list, tuple)) or len(offset) != 3
            or not all(isinstance(c, (int, float)) and not isinstance(c, bool) and abs(c) < float("inf")
                       for c in offset)):
        raise ValueError(f"offset = {offset!r} must be 3 finite numbers (x, y, z), m")
    if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol > 0):
        raise ValueError(f"tolerance = {tol!r} must be a positive length, m")
    path = _resolve(name, base)
    where = f"hull file {name!r}" + ("" if os.path.isabs(name) else f" (resolved to {path})")
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    if suffix not in ("toml", "obj", "stl"):
        raise ValueError(f"{where}: unknown hull file type {('.' + suffix) if suffix else '(no suffix)'!r}; "
                         f"expected .toml (a list of parts), .obj or .stl (a triangle mesh)")
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ValueError(f"{where}: cannot read: {err.strerror or err}") from None
    if suffix == "toml":
        parts = _toml_parts(raw, where)
    elif suffix in ("obj", "stl"):
        if suffix == "obj":
            V, T, lines, groups = _read_obj(raw, where)
        else:
            V, T, lines, groups = _read_stl(raw, where)
        parts = _mesh_parts(V, T, lines, groups, where, name, tol, "line" if suffix == "obj" else "facet")
    if scale != 1.0 or any(offset):
        parts = [_moved(p, float(scale), offset) for p in parts]
    return _validated(parts, where)


def _moved(part: dict, scale: float, offset) -> dict:
    part = dict(part)
    if "vertices" in part:
        part["vertices"] = [[c * scale + o for c, o in zip(v, offset)] for v in part["vertices"]]
    else:
        if "center" in part:
            part["center"] = [c * scale + o for c, o in zip(part["center"], offset)]
        if "size" in part:
            part["size"] = [s * scale for s in part["size"]]
    return part


def _validated(parts: list, where: str) -> list:
    from pydantic import TypeAdapter, ValidationError

    from .vehicle import HullPart, _path

    try:
        return list(TypeAdapter(tuple[HullPart, ...]).validate_python(parts))
    except ValidationError as err:
        probs = []
        for e in err.errors():
            msg = e.get("msg", "invalid")
            msg = msg[len("Value error, "):] if msg.startswith("Value error, ") else msg
            probs.append(f"hull{_path(e.get('loc', ()))}: {msg}")
        raise ValueError(f"{where}: " + "; ".join(probs)) from None


def _toml_parts(raw: bytes, where: str) -> list:
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ValueError(f"{where}: cannot parse TOML: {err}") from None
    extra = sorted(set(data) - {"hull", "description"})
    if extra or not isinstance(data.get("hull"), list) or not data["hull"]:
        raise ValueError(f"{where}: a hull file holds a non-empty list of parts [[hull]] (and an optional "
                         f"description), got keys {sorted(data)}")
    for k, p in enumerate(data["hull"]):
        if isinstance(p, dict) and "file" in p:
            raise ValueError(f"{where}: hull[{k}] refers to another file ({p['file']!r}); a hull file holds "
                             f"the parts themselves")
    return data["hull"]


def _read_obj(raw: bytes, where: str):
    """Vertices (n, 3), triangles (m, 3), each triangle's line number, each triangle's object/group name."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{where}: not a text OBJ file: {err}") from None
    V, T, lines, groups = [], [], [], []
    group = ""
    for ln, line in enumerate(text.splitlines(), 1):
        tok = line.split("#", 1)[0].split()
        if not tok:
            continue
        if tok[0] == "v":
            try:
                xyz = [float(c) for c in tok[1:4]]
            except ValueError:
                xyz = []
            if len(xyz) != 3 or not all(abs(c) < float("inf") for c in xyz):
                raise ValueError(f"{where}: line {ln}: a vertex needs 3 finite coordinates, got {line.strip()!r}")
            V.append(xyz)
        elif tok[0] == "f":
            idx = []
            for t in tok[1:]:
                try:
                    i = int(t.split("/", 1)[0])
                except ValueError:
                    raise ValueError(f"{where}: line {ln}: bad vertex index {t!r}") from None
                i = i - 1 if i > 0 else len(V) + i  # OBJ: 1-based, negative counts back from the last vertex
                if not 0 <= i < len(V):
                    raise ValueError(f"{where}: line {ln}: vertex index {t!r} refers to no vertex defined so far "
                                     f"({len(V)})")
                idx.append(i)
            if len(idx) < 3:
                raise ValueError(f"{where}: line {ln}: a face needs at least 3 vertices, got {line.strip()!r}")
            for j in range(1, len(idx) - 1):  # a polygon fanned from its first vertex
                T.append((idx[0], idx[j], idx[j + 1]))
                lines.append(ln)
                groups.append(group)
        elif tok[0] in ("o", "g"):
            group = " ".join(tok[1:])
        elif tok[0] in ("l", "p", "curv", "surf"):
            raise ValueError(f"{where}: line {ln}: {tok[0]!r} elements are not part of a closed triangle mesh")
        # vn, vt, vp, s, mtllib, usemtl: irrelevant to the solid
    if not T:
        raise ValueError(f"{where}: no faces")
    return V, T, lines, groups


def _read_stl(raw: bytes, where: str):
    """Vertices (coincident corners merged), triangles, each triangle's facet number, no groups."""
    corners = []
    n_bin = struct.unpack("<I", raw[80:84])[0] if len(raw) >= 84 else -1
    if len(raw) == 84 + 50 * n_bin:
        for k in range(n_bin):
            vals = struct.unpack("<12f", raw[84 + 50 * k: 84 + 50 * k + 48])
            corners.append([vals[3:6], vals[6:9], vals[9:12]])
    else:
        try:
            tok = raw.decode("ascii").split()
        except UnicodeDecodeError:
            raise ValueError(f"{where}: neither ASCII STL nor a binary STL of consistent length") from None
        i, cur = 0, []
        while i < len(tok):
            if tok[i] == "vertex":
                try:
                    cur.append(tuple(float(c) for c in tok[i + 1:i + 4]))
                except ValueError:
                    raise ValueError(f"{where}: facet {len(corners) + 1}: bad vertex {tok[i:i + 4]}") from None
                i += 4
                continue
            if tok[i] == "endfacet":
                if len(cur) != 3:
                    raise ValueError(f"{where}: facet {len(corners) + 1} has {len(cur)} vertices, not 3")
                corners.append(cur)
                cur = []
            i += 1
    if not corners:
        raise ValueError(f"{where}: no facets")
    index, V, T = {}, [], []
    for tri in corners:
        if not all(abs(c) < float("inf") for p in tri for c in p):
            raise ValueError(f"{where}: facet {len(T) + 1} has a non-finite coordinate")
        ids = []
        for p in tri:
            key = tuple(float(c) for c in p)
            if key not in index:
                index[key] = len(V)
                V.append(list(key))
            ids.append(index[key])
        T.append(tuple(ids))
    return V, T, list(range(1, len(T) + 1)), [""] * len(T)


def _mesh_parts(V, T, lines, groups, where, name, tol, unit) -> list[dict]:
    """Split a triangle mesh into connected components, check each closed, oriented and convex."""
    import numpy as np

    V = np.asarray(V, float)
    T = np.asarray(T, np.int64)
    fmt = lambda i: f"vertex {i + 1} {np.round(V[i], 6).tolist()}"  # noqa: E731 (1-based as in the file)
    # connected components over shared vertices (union-find)
    parent = np.arange(len(V))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b, c in T:
        for u, w in ((a, b), (a, c)):
            ru, rw = find(u), find(w)
            if ru != rw:
                parent[max(ru, rw)] = min(ru, rw)
    root = np.array([find(a) for a in T[:, 0]])
    parts = []
    for k, r in enumerate(dict.fromkeys(root.tolist())):
        tris = np.nonzero(root == r)[0]
        Tk = T[tris]
        what = f"{where}: component {k + 1} ({len(tris)} triangles from {unit} {lines[tris[0]]})"
        P = V[Tk]
        cross = np.cross(P[:, 1] - P[:, 0], P[:, 2] - P[:, 0])
        area2 = np.linalg.norm(cross, axis=1)
        verts = np.unique(Tk)
        diag = float(np.linalg.norm(np.ptp(V[verts], axis=0)))
        bad = np.nonzero(area2 <= 1e-12 * max(diag, 1e-300) ** 2)[0]
        if len(bad):
            t = tris[bad[0]]
            raise ValueError(f"{what}: the triangle at {unit} {lines[t]} ({', '.join(fmt(i) for i in T[t])}) has "
                             f"no area")
        # closed: every undirected edge in exactly two triangles; oriented: they run it in opposite directions
        uses: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for t, (a, b, c) in zip(tris, Tk):
            for u, w in ((a, b), (b, c), (c, a)):
                uses.setdefault((min(u, w), max(u, w)), []).append((t, 1 if u < w else -1))
        for (u, w), us in uses.items():
            if len(us) != 2:
                at = ", ".join(f"{unit} {lines[t]}" for t, _ in us)
                reason = ("an open edge: the mesh has a hole there" if len(us) == 1 else
                          "a non-manifold edge: more than two faces meet there")
                raise ValueError(f"{what} is not closed: the edge from {fmt(u)} to {fmt(w)} belongs to {len(us)} "
                                 f"triangle(s) ({at}), {reason}")
            (t1, s1), (t2, s2) = us
            if s1 == s2:
                raise ValueError(f"{what} is not consistently oriented: the triangles at {unit} {lines[t1]} and "
                                 f"{unit} {lines[t2]} run the edge from {fmt(u)} to {fmt(w)} in the same direction "
                                 f"(one of them is flipped)")
        # outward normals: a closed, consistently oriented surface encloses a signed volume; inward -> flip
        volume = float(np.einsum("ij,ij->i", P[:, 0], np.cross(P[:, 1], P[:, 2])).sum()) / 6.0
        if volume < 0:
            cross = -cross
        normal = cross / area2[:, None]
        tol_k = MESH_CONVEX_TOLERANCE * diag if tol is None else float(tol)
        Vk = V[verts]
        for s in range(0, len(tris), 256):
            d = np.einsum("tj,tvj->tv", normal[s:s + 256], Vk[None, :, :] - P[s:s + 256, 0][:, None, :])
            if d.max() > tol_k:
                ti, vi = np.unravel_index(int(np.argmax(d)), d.shape)
                t = tris[s + ti]
                raise ValueError(f"{what} is not convex: {fmt(int(verts[vi]))} stands {d[ti, vi]:.4g} m in front "
                                 f"of the plane of the triangle at {unit} {lines[t]} (tolerance {tol_k:.3g} m); "
                                 f"split it into convex components")
        names = {groups[t] for t in tris}
        label = names.pop() if len(names) == 1 and "" not in names else f"{os.path.basename(name)} component {k + 1}"
        parts.append({"vertices": _extreme(Vk), "label": label})
    return parts


def _extreme(Vk) -> list:
    """The component's corners: its vertices that are extreme points of their convex hull (a vertex inside a
    flat face or on an edge is dropped; within the tolerance the solid is the same)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        keep = sorted(ConvexHull(Vk).vertices.tolist())
    except QhullError:
        keep = range(len(Vk))  # flat: ConvexSpec says why
    return [Vk[i].tolist() for i in keep]
