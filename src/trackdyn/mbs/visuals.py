"""Visual shapes attached to bodies with :meth:`Model.add_visual <trackdyn.mbs.model.Model.add_visual>`.

Shapes are data: frozen dataclasses in **body-frame** coordinates (metres,
origin at the body's centre of mass, axes of the body frame), with an optional
colour ``"#rrggbb"``. They have no effect on the dynamics. Each one serialises
with ``to_dict()`` (stored in a results folder's ``scene.json``) and comes back
with :func:`shape_from_dict`, so plots, the side-view animation and the 3-D
viewer work from a results folder alone.

What belongs here: the shape types, their validation, and generators of
outlines that vehicles need (:func:`sprocket_outline`, :func:`sprocket`).
They are plain data of a model's bodies, so they sit in ``mbs``, below
``assembly`` (which attaches them to a vehicle's bodies) and ``viz`` (which
draws them); :mod:`trackdyn.viz.shapes` re-exports them. Tessellation and
projection live in :mod:`trackdyn.viz.geometry`.

Example
-------
>>> import trackdyn as td
>>> from trackdyn.mbs import visuals as S
>>> m = td.Model()
>>> wheel = m.add_body("wheel", mass=30.0, inertia=[1.0, 2.0, 1.0])
>>> m.add_visual(wheel, S.Cylinder(radius=0.3, length=0.2, axis=(0, 1, 0), color="#404040"))
>>> m.add_visual(wheel, S.sprocket(n_teeth=10, outer_radius=0.26, arc_radius=0.089,
...                                arc_center_radius=0.3, width=0.05, offset=0.12))
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

import numpy as np

__all__ = [
    "Box",
    "Cylinder",
    "Sphere",
    "Extrusion",
    "Polyline",
    "Mesh",
    "SHAPES",
    "shape_from_dict",
    "sprocket_outline",
    "sprocket",
    "EXTRUSION_PLANES",
]

_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")

#: In-plane coordinates of an :class:`Extrusion` outline for each extrusion axis:
#: the outline's (a, b) map to these body axes.
EXTRUSION_PLANES = {"x": (1, 2), "y": (0, 2), "z": (0, 1)}


def _vec(x, n, what, positive=False):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected {n} numbers, got {x!r}") from None
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: expected {n} finite numbers, got {np.asarray(x).tolist()!r}")
    if positive and np.any(a <= 0):
        raise ValueError(f"{what}: every entry must be positive, got {a.tolist()}")
    return tuple(float(v) for v in a)


def _pos(x, what):
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected a positive number, got {x!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{what}: must be positive and finite, got {x!r}")
    return v


def _color(c, what):
    if c is None:
        return None
    if not isinstance(c, str) or not _COLOR.match(c):
        raise ValueError(f"{what}: colour must be '#rrggbb', got {c!r}")
    return c.lower()


def _points(x, dim, min_n, what):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected an array of {dim}-vectors") from None
    if a.ndim != 2 or a.shape[1] != dim or a.shape[0] < min_n:
        raise ValueError(f"{what}: expected at least {min_n} points of {dim} coordinates, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: points must be finite")
    return tuple(tuple(float(v) for v in p) for p in a)


class _Shape:
    """Common behaviour: ``to_dict`` with a ``type`` tag, ``set``-style copies."""

    kind = ""

    def to_dict(self) -> dict:
        d = {"type": self.kind}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, tuple):
                v = [list(p) if isinstance(p, tuple) else p for p in v]
            d[f.name] = v
        return d


@dataclass(frozen=True)
class Box(_Shape):
    """A rectangular box.

    Parameters
    ----------
    size : (3,) float
        Edge lengths along the box's own x, y, z axes, m.
    center : (3,) float
        Box centre in the body frame, m.
    quat : (4,) float
        Orientation of the box axes in the body frame (unit quaternion, scalar first).
    color : str, optional
        ``"#rrggbb"``.
    """

    size: tuple
    center: tuple = (0.0, 0.0, 0.0)
    quat: tuple = (1.0, 0.0, 0.0, 0.0)
    color: str | None = None
    kind = "box"

    def __post_init__(self):
        object.__setattr__(self, "size", _vec(self.size, 3, "Box.size", positive=True))
        object.__setattr__(self, "center", _vec(self.center, 3, "Box.center"))
        q = np.asarray(_vec(self.quat, 4, "Box.quat"))
        n = np.linalg.norm(q)
        if abs(n - 1.0) > 1e-3:
            raise ValueError(f"Box.quat: {q.tolist()} is not a unit quaternion (norm {n:.6g})")
        q = q if abs(n - 1.0) < 1e-14 else q / n  # keep exact values on a round trip
        object.__setattr__(self, "quat", tuple(float(v) for v in q))
        object.__setattr__(self, "color", _color(self.color, "Box.color"))


@dataclass(frozen=True)
class Cylinder(_Shape):
    """A solid cylinder (wheel, idler, pin, hub).

    Parameters
    ----------
    radius : float
        m.
    length : float
        Length along ``axis``, m.
    axis : (3,) float
        Axis direction in the body frame (normalised on construction); wheels of
        a vehicle use ``(0, 1, 0)``.
    center : (3,) float
        Centre of the cylinder in the body frame, m.
    color : str, optional
    """

    radius: float
    length: float
    axis: tuple = (0.0, 1.0, 0.0)
    center: tuple = (0.0, 0.0, 0.0)
    color: str | None = None
    kind = "cylinder"

    def __post_init__(self):
        object.__setattr__(self, "radius", _pos(self.radius, "Cylinder.radius"))
        object.__setattr__(self, "length", _pos(self.length, "Cylinder.length"))
        a = np.asarray(_vec(self.axis, 3, "Cylinder.axis"))
        n = np.linalg.norm(a)
        if n == 0:
            raise ValueError("Cylinder.axis: must be a non-zero vector")
        a = a if abs(n - 1.0) < 1e-14 else a / n  # keep exact values on a round trip
        object.__setattr__(self, "axis", tuple(float(v) for v in a))
        object.__setattr__(self, "center", _vec(self.center, 3, "Cylinder.center"))
        object.__setattr__(self, "color", _color(self.color, "Cylinder.color"))


@dataclass(frozen=True)
class Sphere(_Shape):
    """A sphere of ``radius`` (m) centred at ``center`` (body frame, m)."""

    radius: float
    center: tuple = (0.0, 0.0, 0.0)
    color: str | None = None
    kind = "sphere"

    def __post_init__(self):
        object.__setattr__(self, "radius", _pos(self.radius, "Sphere.radius"))
        object.__setattr__(self, "center", _vec(self.center, 3, "Sphere.center"))
        object.__setattr__(self, "color", _color(self.color, "Sphere.color"))


@dataclass(frozen=True)
class Extrusion(_Shape):
    """A planar outline extruded along one body axis (hull side, sprocket, shoe profile).

    Parameters
    ----------
    outline : (n, 2) float
        A simple closed polygon (first point not repeated), m. Its (a, b)
        coordinates are body (x, z) for ``axis="y"``, (y, z) for ``"x"`` and
        (x, y) for ``"z"`` (:data:`EXTRUSION_PLANES`).
    width : float
        Extent along ``axis``, m.
    axis : {"x", "y", "z"}
        Extrusion direction in the body frame.
    offset : float
        Position of the mid-plane along ``axis``, m.
    color : str, optional
    """

    outline: tuple
    width: float
    axis: str = "y"
    offset: float = 0.0
    color: str | None = None
    kind = "extrusion"

    def __post_init__(self):
        pts = _points(self.outline, 2, 3, "Extrusion.outline")
        a = np.asarray(pts)
        if np.allclose(a[0], a[-1]) and len(a) > 3:
            a = a[:-1]
            pts = pts[:-1]
        area = 0.5 * np.sum(a[:, 0] * np.roll(a[:, 1], -1) - np.roll(a[:, 0], -1) * a[:, 1])
        if abs(area) < 1e-12:
            raise ValueError("Extrusion.outline: the polygon has zero area")
        object.__setattr__(self, "outline", pts)
        object.__setattr__(self, "width", _pos(self.width, "Extrusion.width"))
        if self.axis not in EXTRUSION_PLANES:
            raise ValueError(f"Extrusion.axis: must be 'x', 'y' or 'z', got {self.axis!r}")
        try:
            off = float(self.offset)
        except (TypeError, ValueError):
            raise ValueError(f"Extrusion.offset: expected a number, got {self.offset!r}") from None
        if not np.isfinite(off):
            raise ValueError(f"Extrusion.offset: must be finite, got {self.offset!r}")
        object.__setattr__(self, "offset", off)
        object.__setattr__(self, "color", _color(self.color, "Extrusion.color"))


@dataclass(frozen=True)
class Polyline(_Shape):
    """A line through ``points`` ((n, 3), body frame, m), closed into a loop when ``closed``."""

    points: tuple
    closed: bool = False
    color: str | None = None
    kind = "polyline"

    def __post_init__(self):
        object.__setattr__(self, "points", _points(self.points, 3, 2, "Polyline.points"))
        object.__setattr__(self, "closed", bool(self.closed))
        object.__setattr__(self, "color", _color(self.color, "Polyline.color"))


@dataclass(frozen=True)
class Mesh(_Shape):
    """A triangle mesh: ``vertices`` (n, 3) in the body frame (m), ``faces`` (m, 3) vertex indices.

    Faces are wound counter-clockwise seen from outside.
    """

    vertices: tuple
    faces: tuple
    color: str | None = None
    kind = "mesh"

    def __post_init__(self):
        v = _points(self.vertices, 3, 3, "Mesh.vertices")
        try:
            f = np.asarray(self.faces)
        except (TypeError, ValueError):
            raise ValueError("Mesh.faces: expected an (m, 3) array of vertex indices") from None
        if f.ndim != 2 or f.shape[1] != 3 or len(f) == 0 or not np.issubdtype(f.dtype, np.integer):
            if f.ndim == 2 and f.shape[1] == 3 and len(f) and np.all(np.equal(np.mod(f, 1), 0)):
                f = f.astype(np.int64)
            else:
                raise ValueError(f"Mesh.faces: expected an (m, 3) array of integer indices, got shape {f.shape}")
        if f.min() < 0 or f.max() >= len(v):
            raise ValueError(f"Mesh.faces: indices must lie in [0, {len(v) - 1}], got {f.min()}..{f.max()}")
        object.__setattr__(self, "vertices", v)
        object.__setattr__(self, "faces", tuple(tuple(int(i) for i in t) for t in f))
        object.__setattr__(self, "color", _color(self.color, "Mesh.color"))


#: Shape classes by their ``type`` tag.
SHAPES = {cls.kind: cls for cls in (Box, Cylinder, Sphere, Extrusion, Polyline, Mesh)}


def shape_from_dict(d: dict):
    """Rebuild a shape from :meth:`to_dict` output (``{"type": ..., fields...}``)."""
    if not isinstance(d, dict) or "type" not in d:
        raise ValueError(f"shape_from_dict: expected a dict with a 'type', got {d!r}")
    cls = SHAPES.get(d["type"])
    if cls is None:
        raise ValueError(f"shape_from_dict: unknown shape type {d['type']!r}; known: {sorted(SHAPES)}")
    names = {f.name for f in fields(cls)}
    extra = set(d) - names - {"type"}
    if extra:
        raise ValueError(f"shape_from_dict: {d['type']} has no field(s) {sorted(extra)}")
    return cls(**{k: v for k, v in d.items() if k != "type"})


def sprocket_outline(n_teeth: int, outer_radius: float, arc_radius: float, arc_center_radius: float,
                     points_per_arc: int = 10) -> np.ndarray:
    """Outline of a sprocket (or gear) whose tooth gaps are circular arcs.

    The profile is the one used by link-track sprockets (Chrono's
    ``ChSprocketSinglePin``): the tips of the teeth lie on the circle of
    ``outer_radius`` R_T; gap k is a circular arc of radius r centred at
    radius R_C and angle θ_k = (k + ½) 2π/n. The gap meets the tip circle at
    θ_k ± β with ``cos β = (R_T² + R_C² − r²) / (2 R_T R_C)``.

    Parameters
    ----------
    n_teeth : int
        Number of teeth n ≥ 3.
    outer_radius : float
        R_T, radius of the tooth tips, m.
    arc_radius : float
        r, radius of the gap arcs, m.
    arc_center_radius : float
        R_C, distance of the gap-arc centres from the sprocket centre, m.
    points_per_arc : int
        Resolution of each gap and each tip arc.

    Returns
    -------
    ndarray (m, 2)
        Counter-clockwise closed polygon (first point not repeated), m, in the
        plane of the sprocket (pass it to :class:`Extrusion` with ``axis="y"``
        for a sprocket turning about the body y axis).
    """
    try:
        n = int(n_teeth)
    except (TypeError, ValueError):
        raise ValueError(f"sprocket_outline: n_teeth must be an integer, got {n_teeth!r}") from None
    if n != n_teeth or n < 3:
        raise ValueError(f"sprocket_outline: n_teeth must be an integer >= 3, got {n_teeth!r}")
    rt = _pos(outer_radius, "sprocket_outline: outer_radius")
    r = _pos(arc_radius, "sprocket_outline: arc_radius")
    rc = _pos(arc_center_radius, "sprocket_outline: arc_center_radius")
    if not rc - r < rt < rc + r:
        raise ValueError(
            f"sprocket_outline: the gap circles (centre radius {rc}, radius {r}) do not cut the tip circle "
            f"of radius {rt}: need {rc - r:.6g} < outer_radius < {rc + r:.6g}")
    if rc - r <= 0:
        raise ValueError(f"sprocket_outline: arc_radius {r} >= arc_center_radius {rc}: the gaps reach the centre")
    cos_b = (rt**2 + rc**2 - r**2) / (2 * rt * rc)
    beta = np.arccos(np.clip(cos_b, -1.0, 1.0))
    pitch = 2 * np.pi / n
    if 2 * beta >= pitch:
        raise ValueError(
            f"sprocket_outline: neighbouring gaps overlap (gap half-angle {np.degrees(beta):.3g} deg, "
            f"tooth pitch {np.degrees(pitch):.3g} deg); reduce arc_radius or raise outer_radius")
    k = max(2, int(points_per_arc))
    pts = []
    for j in range(n):
        th = (j + 0.5) * pitch
        # tip arc from the end of the previous gap to the start of this gap
        a0 = th - pitch + beta
        a1 = th - beta
        for s in np.linspace(a0, a1, k, endpoint=False):
            pts.append((rt * np.cos(s), rt * np.sin(s)))
        c = rc * np.array([np.cos(th), np.sin(th)])
        p1 = rt * np.array([np.cos(a1), np.sin(a1)])
        p2 = rt * np.array([np.cos(th + beta), np.sin(th + beta)])
        phi1 = np.arctan2(*(p1 - c)[::-1])
        phi2 = np.arctan2(*(p2 - c)[::-1])
        # walk the gap circle the way that passes through its point nearest the hub (angle θ + π)
        inner = th + np.pi
        ccw = (phi2 - phi1) % (2 * np.pi)
        phi2 = phi1 + ccw if (inner - phi1) % (2 * np.pi) < ccw else phi1 - (2 * np.pi - ccw)
        for s in np.linspace(phi1, phi2, k, endpoint=False):
            pts.append(tuple(c + r * np.array([np.cos(s), np.sin(s)])))
    return np.array(pts)


def sprocket(n_teeth: int, outer_radius: float, arc_radius: float, arc_center_radius: float, width: float,
             axis: str = "y", offset: float = 0.0, color: str | None = None, points_per_arc: int = 10) -> Extrusion:
    """A sprocket gear as an :class:`Extrusion` of :func:`sprocket_outline` (``width`` m along ``axis``)."""
    return Extrusion(sprocket_outline(n_teeth, outer_radius, arc_radius, arc_center_radius, points_per_arc),
                     width=width, axis=axis, offset=offset, color=color)
