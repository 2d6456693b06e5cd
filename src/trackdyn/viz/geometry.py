"""Geometry of visual shapes: triangle meshes for the 3-D viewer, x–z silhouettes for the side view.

Works on the ``to_dict()`` form of :mod:`trackdyn.mbs.visuals` (what
``scene.json`` stores), so it runs from a results folder alone. All
coordinates are metres; meshes are in the body frame, silhouettes in the world
x–z plane.
"""

from __future__ import annotations

import numpy as np

from ..math.quaternion import quat_to_matrix
from ..mbs.visuals import EXTRUSION_PLANES

__all__ = ["triangulate_polygon", "shape_mesh", "flat_normals", "convex_hull_2d",
           "body_poses"]


def _signed_area(p: np.ndarray) -> float:
    return 0.5 * float(np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1]))


def triangulate_polygon(poly):
    """Triangulate a simple polygon (n, 2): ``(vertices (m, 2), triangles (k, 3))``, counter-clockwise.

    A polygon that is star-shaped from its centroid (sprockets, wheels, most
    outlines) is fanned from the centroid, which becomes vertex n; any other
    simple polygon is cut by ear clipping (O(n²)) and keeps its n vertices.
    """
    p = np.asarray(poly, dtype=float)
    n = len(p)
    sign = 1.0 if _signed_area(p) > 0 else -1.0
    c = p.mean(axis=0)
    a, b = p - c, np.roll(p, -1, axis=0) - c
    if np.all(sign * (a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]) > 1e-14 * np.max(np.abs(a)) ** 2):
        k = np.arange(n)
        tris = np.column_stack([np.full(n, n), k, (k + 1) % n]) if sign > 0 else \
            np.column_stack([np.full(n, n), (k + 1) % n, k])
        return np.vstack([p, c]), tris
    return p, _ear_clip(p)


def _ear_clip(p):
    n = len(p)
    idx = list(range(n)) if _signed_area(p) > 0 else list(range(n - 1, -1, -1))
    tris = []

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    guard = 0
    while len(idx) > 3 and guard < 4 * n * n:
        guard += 1
        m = len(idx)
        cut = False
        for k in range(m):
            i0, i1, i2 = idx[k - 1], idx[k], idx[(k + 1) % m]
            a, b, c = p[i0], p[i1], p[i2]
            if cross(a, b, c) <= 1e-15:
                continue  # reflex or degenerate corner: not an ear
            inside = False
            for j in idx:
                if j in (i0, i1, i2):
                    continue
                q = p[j]
                if cross(a, b, q) >= 0 and cross(b, c, q) >= 0 and cross(c, a, q) >= 0:
                    inside = True
                    break
            if inside:
                continue
            tris.append((i0, i1, i2))
            del idx[k]
            cut = True
            break
        if not cut:  # numerically degenerate remainder: fan it
            for k in range(1, len(idx) - 1):
                tris.append((idx[0], idx[k], idx[k + 1]))
            idx = []
            break
    if len(idx) == 3:
        tris.append(tuple(idx))
    return np.array(tris, dtype=np.int64).reshape(-1, 3)


def _frame_from_axis(axis):
    """Orthonormal (u, w, axis) with u, w spanning the plane normal to ``axis``."""
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    ref = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    u = np.cross(a, ref)
    u /= np.linalg.norm(u)
    w = np.cross(a, u)
    return u, w, a


def _box_mesh(d):
    sx, sy, sz = 0.5 * np.asarray(d["size"])
    v = np.array([[x, y, z] for x in (-sx, sx) for y in (-sy, sy) for z in (-sz, sz)])
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    R = quat_to_matrix(d.get("quat", (1, 0, 0, 0)))
    return v @ R.T + np.asarray(d.get("center", (0, 0, 0))), faces


def _cylinder_mesh(d, segments=24):
    u, w, a = _frame_from_axis(d.get("axis", (0, 1, 0)))
    r, half = d["radius"], 0.5 * d["length"]
    c = np.asarray(d.get("center", (0, 0, 0)), float)
    s = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    ring = r * (np.cos(s)[:, None] * u + np.sin(s)[:, None] * w)
    v = np.vstack([ring - half * a, ring + half * a, [-half * a], [half * a]]) + c
    n = segments
    faces = []
    for k in range(n):
        k1 = (k + 1) % n
        faces += [[k, k1, n + k1], [k, n + k1, n + k]]
        faces += [[2 * n, k1, k], [2 * n + 1, n + k, n + k1]]
    return v, np.array(faces)


def _sphere_mesh(d, n_lat=10, n_lon=20):
    r = d["radius"]
    c = np.asarray(d.get("center", (0, 0, 0)), float)
    verts = [[0, 0, r]]
    for i in range(1, n_lat):
        th = np.pi * i / n_lat
        for j in range(n_lon):
            ph = 2 * np.pi * j / n_lon
            verts.append([r * np.sin(th) * np.cos(ph), r * np.sin(th) * np.sin(ph), r * np.cos(th)])
    verts.append([0, 0, -r])
    faces = []
    for j in range(n_lon):
        faces.append([0, 1 + j, 1 + (j + 1) % n_lon])
    for i in range(n_lat - 2):
        b0, b1 = 1 + i * n_lon, 1 + (i + 1) * n_lon
        for j in range(n_lon):
            j1 = (j + 1) % n_lon
            faces += [[b0 + j, b1 + j, b1 + j1], [b0 + j, b1 + j1, b0 + j1]]
    last = len(verts) - 1
    b0 = 1 + (n_lat - 2) * n_lon
    for j in range(n_lon):
        faces.append([last, b0 + (j + 1) % n_lon, b0 + j])
    return np.array(verts) + c, np.array(faces)


def _extrusion_points(d, a_coord):
    """Outline (n, 2) lifted to 3-D at position ``a_coord`` along the extrusion axis."""
    o = np.asarray(d["outline"], float)
    i, j = EXTRUSION_PLANES[d.get("axis", "y")]
    k = 3 - i - j
    v = np.zeros((len(o), 3))
    v[:, i], v[:, j], v[:, k] = o[:, 0], o[:, 1], a_coord
    return v


def _extrusion_mesh(d):
    o = np.asarray(d["outline"], float)
    if _signed_area(o) < 0:
        o = o[::-1]
    o, tri = triangulate_polygon(o)  # may append the centroid as vertex n (a fan)
    n_outline = len(np.asarray(d["outline"]))
    d = {**d, "outline": o}
    off, half = float(d.get("offset", 0.0)), 0.5 * d["width"]
    lo, hi = _extrusion_points(d, off - half), _extrusion_points(d, off + half)
    n = len(o)
    # the in-plane basis (e_i, e_j) is right-handed with the axis for "x" and "z", left-handed for "y"
    flip = d.get("axis", "y") == "y"
    faces = []
    for t in tri:
        top = [n + t[0], n + t[1], n + t[2]]
        bot = [t[0], t[2], t[1]]
        faces += [bot, top] if not flip else [top[::-1], bot[::-1]]
    for k in range(n_outline):
        k1 = (k + 1) % n_outline
        side = [[k, k1, n + k1], [k, n + k1, n + k]]
        faces += [s[::-1] for s in side] if flip else side
    return np.vstack([lo, hi]), np.array(faces)


def _mesh_mesh(d):
    return np.asarray(d["vertices"], float), np.asarray(d["faces"], np.int64)


_MESHERS = {"box": _box_mesh, "cylinder": _cylinder_mesh, "sphere": _sphere_mesh,
            "extrusion": _extrusion_mesh, "mesh": _mesh_mesh}


def shape_mesh(d: dict):
    """Triangle mesh of a shape dict in the body frame: ``(vertices (n,3), faces (m,3))``.

    Polylines have no surface: returns ``None``.
    """
    fn = _MESHERS.get(d["type"])
    return None if fn is None else fn(d)


def flat_normals(vertices, faces):
    """Unrolled triangles for flat shading: ``(positions (3m, 3), normals (3m, 3))``."""
    v = np.asarray(vertices, float)[np.asarray(faces).ravel()].reshape(-1, 3, 3)
    n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    ln = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.where(ln > 0, n / np.where(ln > 0, ln, 1), 0.0)
    return v.reshape(-1, 3), np.repeat(n, 3, axis=0)


def convex_hull_2d(p) -> np.ndarray:
    """Convex hull (Andrew's monotone chain) of points (n, 2), counter-clockwise."""
    pts = np.unique(np.asarray(p, float), axis=0)
    if len(pts) < 3:
        return pts

    def half(points):
        h = []
        for q in points:
            while len(h) >= 2 and ((h[-1][0] - h[-2][0]) * (q[1] - h[-2][1])
                                   - (h[-1][1] - h[-2][1]) * (q[0] - h[-2][0])) <= 0:
                h.pop()
            h.append(q)
        return h

    lower = half(pts)
    upper = half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


class SidePrimitive:
    """A shape prepared for the x–z side view: body-frame points and how to turn them into polygons."""

    __slots__ = ("kind", "points", "faces", "axis_b", "color", "center_b", "radius")

    def __init__(self, d):
        self.color = d.get("color")
        self.kind = d["type"]
        self.faces = None
        self.axis_b = None
        self.radius = None
        self.center_b = np.asarray(d.get("center", (0.0, 0.0, 0.0)), float)
        if self.kind == "sphere":
            self.radius = d["radius"]
            self.points = self.center_b[None, :]
        elif self.kind == "polyline":
            p = np.asarray(d["points"], float)
            self.points = np.vstack([p, p[:1]]) if d.get("closed") else p
        elif self.kind == "extrusion":
            off = float(d.get("offset", 0.0))
            half = 0.5 * d["width"]
            ax = d.get("axis", "y")
            self.axis_b = np.eye(3)[3 - sum(EXTRUSION_PLANES[ax])]
            self.center_b = self.axis_b * off
            # cap nearest the viewer (who looks along +y from -y) is chosen per frame; keep both
            self.points = np.vstack([_extrusion_points(d, off - half), _extrusion_points(d, off + half)])
        elif self.kind == "mesh":
            self.points, self.faces = _mesh_mesh(d)
            self.faces = np.asarray(self.faces, np.int64)
            self.center_b = self.points.mean(axis=0)
        else:
            self.points, _ = shape_mesh(d)
            self.center_b = self.points.mean(axis=0)

    def polygons(self, R, p):
        """World x–z polygons of this shape at pose (R (3,3), p (3,)): list of (k, 2), and its depth y."""
        depth = float((R @ self.center_b + p)[1])
        if self.kind == "sphere":
            c = R @ self.center_b + p
            s = np.linspace(0, 2 * np.pi, 32, endpoint=False)
            return [np.column_stack([c[0] + self.radius * np.cos(s), c[2] + self.radius * np.sin(s)])], depth
        w = self.points @ R.T + p
        xz = w[:, [0, 2]]
        if self.kind == "polyline":
            return [xz], depth
        if self.kind == "mesh":
            tri = w[self.faces]  # (m, 3, 3) world corners
            keep, shade, tri_depth = _mesh_front_faces(tri)
            return [xz[f] for f in self.faces[keep]], (depth, shade, tri_depth)
        if self.kind == "extrusion":
            a_w = R @ self.axis_b
            if abs(a_w[1]) > 0.9:  # seen end-on: the outline itself (teeth and all) is the silhouette
                n = len(xz) // 2
                cap = xz[:n] if a_w[1] > 0 else xz[n:]
                return [cap], depth
        return [convex_hull_2d(xz)], depth


def _mesh_front_faces(tri):
    """Triangles (m, 3, 3) seen by the side view's viewer (on -y looking +y): which face them, a Lambert
    shade in [0.55, 1] from the y component of their normal, and their mean depth y.

    A closed mesh's faces turned away are hidden behind those turned towards the viewer; dropping them
    halves the polygons and lets the shade show the hull's form (a flat silhouette would not)."""
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    ln = np.linalg.norm(n, axis=1)
    ny = np.where(ln > 0, n[:, 1] / np.where(ln > 0, ln, 1.0), 0.0)
    keep = ny < -1e-6
    return keep, 0.55 + 0.45 * (-ny[keep]), tri[keep, :, 1].mean(axis=1)


def wheel_hub(d, color=None):
    """A hub mark for a wheel drawn in side view: an extrusion dict on the wheel's near face, or ``None``.

    For a cylinder whose axis is the body's y axis (wheels, idlers): a disc of
    0.3 radius with one spoke to 0.8 radius, just outside the face nearer
    the viewer (on -y), so that the wheel's rotation shows (a plain disc looks
    the same at every angle).
    """
    if d.get("type") != "cylinder":
        return None
    a = np.asarray(d.get("axis", (0, 1, 0)), float)
    a = a / np.linalg.norm(a)
    if abs(a[1]) < 0.99:
        return None
    r = float(d["radius"])
    c = np.asarray(d.get("center", (0, 0, 0)), float)
    s = np.linspace(0.25, 2 * np.pi - 0.25, 24)
    disc = np.column_stack([0.3 * r * np.cos(s), 0.3 * r * np.sin(s)])
    spoke = np.array([[0.8 * r, -0.06 * r], [0.8 * r, 0.06 * r]])
    outline = np.vstack([spoke[1:], disc, spoke[:1]]) + c[[0, 2]]
    near = c[1] - 0.5 * float(d["length"]) - 0.004
    return {"type": "extrusion", "outline": outline.tolist(), "width": 0.002, "axis": "y", "offset": near,
            "color": color}


def pose_columns(name) -> list[str]:
    """Series names of a body's pose: ``NAME.pos.{x,y,z}``, ``NAME.quat.{e0..e3}``."""
    return [f"{name}.pos.{c}" for c in "xyz"] + [f"{name}.quat.e{k}" for k in range(4)]


def prefetch_poses(result, names) -> None:
    """Read the pose series of several bodies in one pass (results read lazily from disk)."""
    if hasattr(result, "prefetch"):
        result.prefetch([c for n in names for c in pose_columns(n)])


def body_poses(result, name):
    """Recorded pose of body ``name``: ``(pos (n, 3), quat (n, 4))`` or ``None`` when not recorded."""
    cols = pose_columns(name)
    if not all(c in result for c in cols):
        return None
    arr = np.column_stack([result[c] for c in cols])
    return arr[:, :3], arr[:, 3:]


def quats_to_matrices(q) -> np.ndarray:
    """Rotation matrices (n, 3, 3) of quaternions (n, 4), scalar first, normalised here (recorded series drift
    from unit length by round-off): :func:`trackdyn.math.quaternion.quat_to_matrix` of the unit quaternions."""
    q = np.asarray(q, float)
    return quat_to_matrix(q / np.linalg.norm(q, axis=1, keepdims=True))


def _rgb(color):
    """``(r, g, b)`` in [0, 1] of a ``#rrggbb`` string or an RGB(A) tuple."""
    if isinstance(color, str):
        h = color.lstrip("#")
        return tuple(int(h[k: k + 2], 16) / 255.0 for k in (0, 2, 4))
    return tuple(float(c) for c in color[:3])


class SideBatch:
    """All bodies' shapes prepared for the x–z side view, projected together with NumPy per frame.

    Convex shapes (boxes, cylinders, extrusions seen obliquely) become the
    polygon of their support points in ``n_dirs`` directions of the x–z plane
    (their silhouette's vertices, to the angular resolution 2π/``n_dirs``);
    extrusions seen end-on (axis within 26° of y) keep their outline (teeth
    and all); spheres become circles; meshes their triangles that face the
    viewer, shaded by how squarely they face it.

    Parameters
    ----------
    items : list of (body index, shape dict, face colour, edge colour)
    n_dirs : int
    """

    def __init__(self, items, n_dirs: int = 36):
        s = np.linspace(0, 2 * np.pi, n_dirs, endpoint=False)
        self.dirs = np.column_stack([np.cos(s), np.sin(s)])
        groups: dict[tuple, dict] = {}
        self.others = []  # (body index, SidePrimitive, face, edge) for spheres, meshes, polylines
        self.reach = 0.0
        for bi, d, face, edge in items:
            prim = SidePrimitive(d)
            self.reach = max(self.reach, float(np.abs(prim.points).max()) + (prim.radius or 0.0))
            if prim.kind in ("sphere", "mesh", "polyline"):
                self.others.append((bi, prim, face, edge))
                continue
            key = (prim.kind, len(prim.points))
            g = groups.setdefault(key, {"body": [], "pts": [], "axis": [], "face": [], "edge": []})
            g["body"].append(bi)
            g["pts"].append(prim.points)
            g["axis"].append(prim.axis_b if prim.axis_b is not None else np.zeros(3))
            g["face"].append(face)
            g["edge"].append(edge)
        self.groups = []
        for (kind, n), g in groups.items():
            self.groups.append((kind, np.array(g["body"]), np.array(g["pts"]), np.array(g["axis"]), g["face"],
                                g["edge"]))

    def project(self, R, p):
        """Polygons at body rotations R (nb, 3, 3) and positions p (nb, 3) (NaN rows are skipped).

        Returns ``(polygons, face colours, edge colours, depths, lines, line colours)``.
        """
        polys, faces, edges, depth = [], [], [], []
        ok_body = np.isfinite(p).all(axis=1) & np.isfinite(R).all(axis=(1, 2))
        for kind, bidx, pts, axis, face, edge in self.groups:
            ok = ok_body[bidx]
            if not ok.any():
                continue
            b = bidx[ok]
            w = np.einsum("sij,spj->spi", R[b], pts[ok]) + p[b][:, None, :]
            xz = w[:, :, [0, 2]]
            dep = w[:, :, 1].mean(axis=1)
            arg = np.argmax(xz @ self.dirs.T, axis=1)  # (s, n_dirs) support point per direction
            hull = np.take_along_axis(xz, arg[:, :, None], axis=1)
            out = list(hull)
            if kind == "extrusion":
                a_y = np.einsum("sij,sj->si", R[b], axis[ok])[:, 1]
                half = pts.shape[1] // 2
                for k in np.nonzero(np.abs(a_y) > 0.9)[0]:
                    out[k] = xz[k, :half] if a_y[k] > 0 else xz[k, half:]
            sel = np.nonzero(ok)[0]
            polys += out
            faces += [face[k] for k in sel]
            edges += [edge[k] for k in sel]
            depth += dep.tolist()
        lines, line_cols = [], []
        for bi, prim, face, edge in self.others:
            if not ok_body[bi]:
                continue
            pl, dep = prim.polygons(R[bi], p[bi])
            if prim.kind == "polyline":
                lines += pl
                line_cols += [face] * len(pl)
                continue
            polys += pl
            if prim.kind == "mesh":  # shaded front faces, seams hidden by edges of the face's own colour
                _, shade, tri_depth = dep
                rgb = np.clip(np.asarray(_rgb(face))[None, :] * shade[:, None], 0.0, 1.0)
                cols = [tuple(c) for c in rgb]
                faces += cols
                edges += cols
                depth += tri_depth.tolist()
                continue
            faces += [face] * len(pl)
            edges += [edge] * len(pl)
            depth += [dep] * len(pl)
        return polys, faces, edges, depth, lines, line_cols
