"""Collision shapes attached to bodies.

Every shape is placed in its body's frame (origin at the centre of mass,
body axes) by ``pos`` (m) and an orientation: ``axis`` for shapes with an
axis (cylinders, capsules, point-circles, sprockets: the shape's local y
axis) or ``quat`` (scalar first) for boxes. What each shape does in contact:

- :class:`Sphere`: exact against everything.
- :class:`Box`: its 8 corners against faces and terrain; terrain edges and
  half-round tops against its faces (shoe pads, hull).
- :class:`ConvexPolyhedron`: a convex solid given by its vertices (the faces
  are their convex hull): against the terrain only, like a box -- its
  vertices inside the terrain solid, and terrain edges and half-round tops
  against its face planes (a vehicle's hull).
- :class:`Cylinder`: a wheel of ``width``, sampled by ``slices`` discs at
  Gauss points across the width (each carries its share of the force); rims
  against faces and terrain, its flat sides against box corners (guides).
- :class:`Capsule`: a segment with a radius (pins); its two end spheres.
- :class:`PointCircle` and :class:`Segment`: the planar primitives of
  han-sander-mao §3.5 (a circle of a given width; a straight segment with one
  free side, outward normal ``(end - start) × axis``).
- :class:`Sprocket`: a parametric gear pair (han-sander-mao Fig. 7, Chrono's
  single-pin sprocket: tooth count, addendum radius, arc-centre radius, arc
  radius, gear separation) against the cylinders/capsules of shoe pins, with
  a lateral guide against spheres (the shoes' guide pins).
- :class:`ToothSprocket`: a gear pair with han-sander-mao's seven-parameter
  tooth (Fig. 7: n_t, θ, r1-r4, w), a G1 chain of a flat, seating arcs,
  straight faces, tip rounds and the tip circle, against shoe pins.
"""

from __future__ import annotations

import math
import numpy as np

from ..math.quaternion import quat_to_matrix

__all__ = ["Shape", "Sphere", "Box", "ConvexPolyhedron", "Cylinder", "Capsule", "PointCircle", "Segment",
           "Sprocket", "ToothSprocket", "S_SPHERE", "S_BOX", "S_CYLINDER", "S_CAPSULE", "S_SEGMENT", "S_SPROCKET", "S_POLY",
           "S_TOOTH", "convex_faces", "tooth_points"]

S_SPHERE = 0
S_BOX = 1
S_CYLINDER = 2
S_CAPSULE = 3
S_SEGMENT = 4
S_SPROCKET = 5
S_POLY = 6
S_TOOTH = 7
TYPE_NAMES = ("sphere", "box", "cylinder", "capsule", "segment", "sprocket", "polyhedron", "tooth-sprocket")
N_SHAPE_TYPES = len(TYPE_NAMES)
N_SHAPE_PAR = 8


def _pos(x, what):
    v = float(x)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{what}: must be positive and finite, got {x!r}")
    return v


def _vec(x, what):
    a = np.asarray(x, float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: expected 3 finite numbers, got {x!r}")
    return a


def frame_from_axis(axis) -> np.ndarray:
    """Rotation whose local y is ``axis`` (shape frame in the body frame)."""
    y = np.asarray(axis, float)
    y = y / np.linalg.norm(y)
    t = np.array([1.0, 0.0, 0.0]) if abs(y[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    z = np.cross(t, y)
    z /= np.linalg.norm(z)
    x = np.cross(y, z)
    return np.column_stack([x, y, z])


class Shape:
    """Base of shapes: position ``pos`` in the body frame and rotation ``rot`` (3, 3) shape -> body.

    Shapes are immutable after construction.
    """

    type_code = -1

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __repr__(self):
        keys = [k for k in self.__dict__ if k not in ("rot",)]
        return f"{type(self).__name__}(" + ", ".join(f"{k}={self.__dict__[k]!r}" for k in keys) + ")"

    def params(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def bounding_radius(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError


def _axis_rot(axis, what):
    a = _vec(axis, f"{what}: axis")
    if np.linalg.norm(a) == 0:
        raise ValueError(f"{what}: axis must be non-zero")
    return frame_from_axis(a)


class Sphere(Shape):
    """Sphere of ``radius`` (m) centred at ``pos``."""

    type_code = S_SPHERE

    def __init__(self, radius: float, pos=(0.0, 0.0, 0.0)):
        object.__setattr__(self, "radius", _pos(radius, "Sphere: radius"))
        object.__setattr__(self, "pos", tuple(_vec(pos, "Sphere: pos")))
        object.__setattr__(self, "rot", np.eye(3))

    def params(self):
        p = np.zeros(N_SHAPE_PAR)
        p[0] = self.radius
        return p

    def bounding_radius(self):
        return self.radius


class Box(Shape):
    """Box of edge lengths ``size`` (m, along its local x, y, z) centred at ``pos``, rotated by ``quat``."""

    type_code = S_BOX

    def __init__(self, size, pos=(0.0, 0.0, 0.0), quat=(1.0, 0.0, 0.0, 0.0)):
        s = _vec(size, "Box: size")
        if np.any(s <= 0):
            raise ValueError(f"Box: size must be positive, got {list(size)}")
        q = np.asarray(quat, float)
        if q.shape != (4,) or abs(np.linalg.norm(q) - 1) > 1e-6:
            raise ValueError(f"Box: quat must be a unit quaternion, got {quat!r}")
        object.__setattr__(self, "half", 0.5 * s)
        object.__setattr__(self, "pos", tuple(_vec(pos, "Box: pos")))
        object.__setattr__(self, "rot", quat_to_matrix(q / np.linalg.norm(q)))

    def params(self):
        p = np.zeros(N_SHAPE_PAR)
        p[:3] = self.half
        return p

    def bounding_radius(self):
        return float(np.linalg.norm(self.half))


def convex_faces(vertices, what: str = "ConvexPolyhedron"):
    """Faces of the convex hull of ``vertices`` (n, 3), coplanar hull triangles merged.

    Returns ``(normals (F, 3), offsets (F,), polygons)``: the solid is ``normals @ x <= offsets``, and
    ``polygons[f]`` lists the vertex indices of face f counter-clockwise seen from outside. Raises
    ``ValueError`` naming the reason when the points do not span a closed convex solid (fewer than 4,
    not finite, coincident, flat) or when a vertex lies inside the hull (the shape they describe is not
    convex, or the vertex is superfluous).
    """
    from scipy.spatial import ConvexHull, QhullError

    V = np.asarray(vertices, float)
    if V.ndim != 2 or V.shape[1] != 3 or len(V) < 4:
        raise ValueError(f"{what}: need at least 4 vertices (x, y, z), got shape {V.shape}")
    if not np.all(np.isfinite(V)):
        raise ValueError(f"{what}: vertices must be finite")
    size = float(np.ptp(V, axis=0).max())
    tol = 1e-9 * max(size, 1e-300)
    for i in range(len(V)):
        d = np.linalg.norm(V[i + 1:] - V[i], axis=1)
        if len(d) and d.min() <= tol:
            j = i + 1 + int(np.argmin(d))
            raise ValueError(f"{what}: vertices {i} and {j} coincide at {V[i].tolist()}")
    try:
        hull = ConvexHull(V)
    except QhullError:
        raise ValueError(f"{what}: the vertices are flat (coplanar or collinear): no closed solid") from None
    if hull.volume <= 1e-9 * size ** 3:
        raise ValueError(f"{what}: the vertices enclose no volume ({hull.volume:.3g} m^3)")
    # merge coplanar hull triangles into faces
    normals, offsets, members = [], [], []
    for eq, simplex in zip(hull.equations, hull.simplices):
        n, off = eq[:3], -eq[3]
        for k in range(len(normals)):
            if np.dot(normals[k], n) > 1.0 - 1e-10 and abs(offsets[k] - off) <= tol:
                members[k].update(simplex.tolist())
                break
        else:
            normals.append(n / np.linalg.norm(n))
            offsets.append(off)
            members.append(set(simplex.tolist()))
    N = np.array(normals)
    D = np.array(offsets)
    # every vertex on the boundary: on at least one face plane
    depth = (N @ V.T - D[:, None]).max(axis=0)
    inner = np.nonzero(depth < -tol)[0]
    if len(inner):
        k = int(inner[0])
        raise ValueError(f"{what}: vertex {k} {V[k].tolist()} lies {-depth[k]:.4g} m inside the convex hull of the "
                         f"others: the shape is not convex (split it into convex parts)")
    polygons = []
    for n, idx in zip(N, members):
        idx = sorted(idx)
        P = V[idx]
        c = P.mean(axis=0)
        e1 = P[0] - c
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(n, e1)
        ang = np.arctan2((P - c) @ e2, (P - c) @ e1)
        polygons.append(np.array(idx, np.int64)[np.argsort(ang)])
    return N, D, polygons


class ConvexPolyhedron(Shape):
    """Convex solid with the given ``vertices`` (n, 3; m, in the frame placed at ``pos`` by ``quat``).

    The faces are the vertices' convex hull (coplanar triangles merged); every
    vertex must lie on it. The shape's own origin is moved to the centre of
    the vertices' bounding box (``pos`` and ``vertices`` are stored that way),
    so its bounding radius is small and its extent along each of its axes is
    symmetric (``half``). Touches the terrain only (a vehicle's hull): its vertices
    inside the terrain solid, terrain edges and half-round tops against its
    faces (as :class:`Box`).
    """

    type_code = S_POLY

    def __init__(self, vertices, pos=(0.0, 0.0, 0.0), quat=(1.0, 0.0, 0.0, 0.0)):
        N, D, polys = convex_faces(vertices)
        V = np.asarray(vertices, float)
        q = np.asarray(quat, float)
        if q.shape != (4,) or abs(np.linalg.norm(q) - 1) > 1e-6:
            raise ValueError(f"ConvexPolyhedron: quat must be a unit quaternion, got {quat!r}")
        c = 0.5 * (V.min(axis=0) + V.max(axis=0))
        rot = quat_to_matrix(q / np.linalg.norm(q))
        object.__setattr__(self, "vertices", V - c)
        object.__setattr__(self, "half", 0.5 * (V.max(axis=0) - V.min(axis=0)))
        object.__setattr__(self, "face_normal", N)
        object.__setattr__(self, "face_offset", D - N @ c)
        object.__setattr__(self, "face_vertices", tuple(polys))
        object.__setattr__(self, "pos", tuple(float(x) for x in _vec(pos, "ConvexPolyhedron: pos") + rot @ c))
        object.__setattr__(self, "rot", rot)

    def __repr__(self):
        return f"ConvexPolyhedron({len(self.vertices)} vertices, {len(self.face_normal)} faces, pos={self.pos!r})"

    def params(self):
        # the polyhedron's tables are packed by the ContactSystem; here: its bounding radius and half extents
        p = np.zeros(N_SHAPE_PAR)
        p[4] = self.bounding_radius()
        p[5:8] = self.half
        return p

    def bounding_radius(self):
        return float(np.linalg.norm(self.vertices, axis=1).max())

    def triangles(self) -> np.ndarray:
        """Faces as triangles (fans of the face polygons), counter-clockwise seen from outside: (m, 3) indices."""
        out = []
        for poly in self.face_vertices:
            for k in range(1, len(poly) - 1):
                out.append((poly[0], poly[k], poly[k + 1]))
        return np.array(out, np.int64)


class Cylinder(Shape):
    """Cylinder (wheel) of ``radius`` and ``width`` (m) about ``axis`` (body frame), centred at ``pos``.

    ``slices`` discs at Gauss-Legendre points across the width carry the
    contact (1, 2 or 3).
    """

    type_code = S_CYLINDER

    def __init__(self, radius: float, width: float, pos=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0), slices: int = 2):
        object.__setattr__(self, "radius", _pos(radius, "Cylinder: radius"))
        object.__setattr__(self, "width", _pos(width, "Cylinder: width"))
        if slices not in (1, 2, 3):
            raise ValueError(f"Cylinder: slices must be 1, 2 or 3, got {slices!r}")
        object.__setattr__(self, "slices", int(slices))
        object.__setattr__(self, "pos", tuple(_vec(pos, "Cylinder: pos")))
        object.__setattr__(self, "rot", _axis_rot(axis, "Cylinder"))

    def params(self):
        p = np.zeros(N_SHAPE_PAR)
        p[0] = self.radius
        p[1] = 0.5 * self.width
        p[2] = self.slices
        return p

    def bounding_radius(self):
        return math.hypot(self.radius, 0.5 * self.width)


class PointCircle(Cylinder):
    """Circle of ``radius`` in the plane normal to ``axis``, ``width`` wide (han-sander-mao §3.5); one slice."""

    def __init__(self, radius: float, width: float = 0.01, pos=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0)):
        super().__init__(radius, width, pos, axis, slices=1)


class Capsule(Shape):
    """Capsule: segment of ``length`` (m) along ``axis`` centred at ``pos``, with ``radius`` (m)."""

    type_code = S_CAPSULE

    def __init__(self, radius: float, length: float, pos=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0)):
        object.__setattr__(self, "radius", _pos(radius, "Capsule: radius"))
        object.__setattr__(self, "length", _pos(length, "Capsule: length"))
        object.__setattr__(self, "pos", tuple(_vec(pos, "Capsule: pos")))
        object.__setattr__(self, "rot", _axis_rot(axis, "Capsule"))

    def params(self):
        p = np.zeros(N_SHAPE_PAR)
        p[0] = self.radius
        p[1] = 0.5 * self.length
        return p

    def bounding_radius(self):
        return self.radius + 0.5 * self.length


class Segment(Shape):
    """Straight segment from ``start`` to ``end`` (body frame, m), ``width`` wide along ``axis``.

    Only its outward side, normal ``(end - start) × axis``, is solid (the top
    of a track link in han-sander-mao Fig. 8). ``ends``: the two end points
    also touch (as sharp edges).
    """

    type_code = S_SEGMENT

    def __init__(self, start, end, width: float = 0.2, axis=(0.0, 1.0, 0.0), ends: bool = True):
        a = _vec(start, "Segment: start")
        b = _vec(end, "Segment: end")
        ax = _vec(axis, "Segment: axis")
        d = b - a
        L = np.linalg.norm(d)
        if L == 0:
            raise ValueError("Segment: start and end coincide")
        ax = ax / np.linalg.norm(ax)
        if abs(d @ ax) > 1e-9 * L:
            raise ValueError("Segment: the segment must be perpendicular to its axis")
        x = d / L
        z = np.cross(x, ax)
        object.__setattr__(self, "half_length", 0.5 * L)
        object.__setattr__(self, "width", _pos(width, "Segment: width"))
        object.__setattr__(self, "ends", bool(ends))
        object.__setattr__(self, "pos", tuple(0.5 * (a + b)))
        object.__setattr__(self, "rot", np.column_stack([x, ax, z]))

    def params(self):
        p = np.zeros(N_SHAPE_PAR)
        p[0] = self.half_length
        p[1] = 0.5 * self.width
        p[2] = 1.0 if self.ends else 0.0
        return p

    def bounding_radius(self):
        return math.hypot(self.half_length, 0.5 * self.width)


class Sprocket(Shape):
    """Pair of gear profiles (single-pin sprocket) on ``axis`` through ``pos``.

    Each gear (in the planes ``±separation/2`` along the axis) is a disc of
    ``addendum_radius`` minus ``teeth`` circular gaps of ``arc_radius``
    centred on the circle of ``arc_centre_radius``; the first gap is centred
    at angle ``phase`` (rad) measured in the gear plane from the shape's -z
    towards +x (Chrono's convention). Pins (cylinders, capsules) of other bodies
    touch the gaps, the tooth tips and the corners between them.
    ``guide_clearance`` (m), if given, adds a lateral contact with spheres of
    other bodies (shoe guide pins) that move further than this from the
    mid-plane while within the addendum radius.
    """

    type_code = S_SPROCKET

    def __init__(self, teeth: int, addendum_radius: float, arc_centre_radius: float, arc_radius: float,
                 separation: float, pos=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0), phase: float = 0.0,
                 guide_clearance: float | None = None):
        if not isinstance(teeth, (int, np.integer)) or teeth < 3:
            raise ValueError(f"Sprocket: teeth must be an integer >= 3, got {teeth!r}")
        RO = _pos(addendum_radius, "Sprocket: addendum_radius")
        RC = _pos(arc_centre_radius, "Sprocket: arc_centre_radius")
        R = _pos(arc_radius, "Sprocket: arc_radius")
        if not abs(RC - R) < RO < RC + R:
            raise ValueError(f"Sprocket: the tooth arcs (centre radius {RC}, radius {R}) must cut the addendum "
                             f"circle (radius {RO}): need |RC - R| < RO < RC + R")
        cos_a = (RC * RC + RO * RO - R * R) / (2 * RC * RO)
        alpha = math.acos(cos_a)
        if alpha >= math.pi / teeth:
            raise ValueError(f"Sprocket: neighbouring tooth gaps overlap (gap half-angle {math.degrees(alpha):.3g}° "
                             f">= half pitch {180 / teeth:.3g}°): no tooth tip is left")
        sep = float(separation)
        if not math.isfinite(sep) or sep < 0:
            raise ValueError(f"Sprocket: separation must be non-negative, got {separation!r}")
        if guide_clearance is not None:
            _pos(guide_clearance, "Sprocket: guide_clearance")
        object.__setattr__(self, "teeth", int(teeth))
        object.__setattr__(self, "addendum_radius", RO)
        object.__setattr__(self, "arc_centre_radius", RC)
        object.__setattr__(self, "arc_radius", R)
        object.__setattr__(self, "separation", sep)
        object.__setattr__(self, "phase", float(phase))
        object.__setattr__(self, "guide_clearance", guide_clearance)
        object.__setattr__(self, "gap_half_angle", alpha)
        object.__setattr__(self, "pos", tuple(_vec(pos, "Sprocket: pos")))
        object.__setattr__(self, "rot", _axis_rot(axis, "Sprocket"))

    def params(self):
        p = np.zeros(N_SHAPE_PAR)
        p[0] = self.teeth
        p[1] = self.addendum_radius
        p[2] = self.arc_centre_radius
        p[3] = self.arc_radius
        p[4] = 0.5 * self.separation
        p[5] = self.phase
        p[6] = -1.0 if self.guide_clearance is None else self.guide_clearance
        p[7] = self.gap_half_angle
        return p

    def bounding_radius(self):
        return math.hypot(self.addendum_radius, 0.5 * self.separation)

    def profile(self, n_per_arc: int = 16) -> np.ndarray:
        """Closed gear outline (x, z) in the gear plane (shape frame), for drawing."""
        pts = []
        n = self.teeth
        RO, RC, R, a = self.addendum_radius, self.arc_centre_radius, self.arc_radius, self.gap_half_angle
        for k in range(n):
            phi = self.phase + 2 * math.pi * k / n
            A = RC * np.array([math.sin(phi), -math.cos(phi)])
            c0 = RO * np.array([math.sin(phi - a), -math.cos(phi - a)])
            c1 = RO * np.array([math.sin(phi + a), -math.cos(phi + a)])
            t0 = math.atan2(c0[1] - A[1], c0[0] - A[0])
            t1 = math.atan2(c1[1] - A[1], c1[0] - A[0])
            # the gap arc bulges towards the gear centre: go the short way through the inner side
            if t1 > t0:
                t1 -= 2 * math.pi
            for t in np.linspace(t0, t1, n_per_arc):
                pts.append(A + R * np.array([math.cos(t), math.sin(t)]))
            nxt = phi + 2 * math.pi / n
            for t in np.linspace(phi + a, nxt - a, max(2, n_per_arc // 4)):
                pts.append(RO * np.array([math.sin(t), -math.cos(t)]))
        return np.array(pts)


def tooth_points(teeth: int, face_angle: float, r1: float, r2: float, r3: float, r4: float, w: float) -> dict:
    """The control points of one tooth valley of han-sander-mao's seven-parameter sprocket (Fig. 7).

    Valley frame ``(u, v)``: ``v`` along the valley's centre line outwards from the sprocket centre, ``u``
    across it (towards the next valley). The right half of the valley (``u >= 0``), from the bottom up (the
    left half mirrors it in ``u``); every join is tangent (G1):

    - the flat: ``v = r1``, ``|u| <= w/2`` (end ``P0 = (w/2, r1)``);
    - the seating curve: a concave arc of ``r4`` centred at ``C4 = (w/2, r1 + r4)``, from ``P0`` to ``P1``,
      where its tangent reaches the face;
    - the tooth face: a straight line at ``face_angle`` θ from the valley's centre line, opening outwards
      (direction ``(sin θ, cos θ)``), from ``P1`` to ``P2``;
    - the round at the top of the tooth: a convex arc of ``r3`` centred at ``C3``, ``|C3| = r2 - r3``, from
      ``P2`` to ``P3 = r2 C3 / |C3|`` on the tip circle;
    - the tip circle of ``r2`` from ``P3`` to the next valley's ``P3'``.

    With the mirror images that is 8 control points per valley (``P0..P3`` each side), the paper's count.
    Returns a dict of the points (2,), centres, the face length ``face`` (m), the tip half-angle ``tip_half``
    (rad, the polar angle of ``P3`` from the centre line) and the valley's angular pitch. Raises ValueError
    naming the parameter when no valid tooth has them.
    """
    n = int(teeth)
    th = float(face_angle)
    if n < 3:
        raise ValueError(f"tooth: n_t = {teeth!r}: need at least 3 teeth")
    for name, v in (("r1", r1), ("r2", r2), ("r3", r3), ("r4", r4)):
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"tooth: {name} = {v!r}: must be positive and finite")
    if not (math.isfinite(w) and w >= 0):
        raise ValueError(f"tooth: w = {w!r}: must be non-negative and finite")
    if not 0.0 <= th < 0.5 * math.pi:
        raise ValueError(f"tooth: face angle θ = {th!r} rad: must lie in [0, π/2) (the face opens outwards)")
    if not r2 > r1:
        raise ValueError(f"tooth: r2 = {r2} (tooth top) must exceed r1 = {r1} (tooth bottom)")
    if not r3 < r2 - r1:
        raise ValueError(f"tooth: r3 = {r3} (round at the top) must be below the tooth height r2 - r1 = {r2 - r1:.4g}")
    d = np.array([math.sin(th), math.cos(th)])      # face direction, outwards
    m = np.array([math.cos(th), -math.sin(th)])     # face normal into the tooth (material side)
    P0 = np.array([0.5 * w, r1])
    C4 = np.array([0.5 * w, r1 + r4])
    P1 = C4 + r4 * m
    # the round's centre C3 = P1 + s d + r3 m lies on the circle |C3| = r2 - r3: s from a quadratic
    b0 = P1 + r3 * m
    B = 2.0 * float(b0 @ d)
    Cq = float(b0 @ b0) - (r2 - r3) ** 2
    disc = B * B - 4.0 * Cq
    if disc < 0.0:
        raise ValueError(f"tooth: the face at θ = {th:.4g} rad from the seating curve (r4 = {r4}) never reaches "
                         f"the round r3 = {r3} under the tip r2 = {r2}: no tooth")
    s = 0.5 * (-B + math.sqrt(disc))
    if s < 0.0:
        raise ValueError(f"tooth: the seating curve (r1 = {r1}, r4 = {r4}, w = {w}) reaches above the round at the "
                         f"top (r2 = {r2}, r3 = {r3}): the face would have negative length {s:.4g} m")
    P2 = P1 + s * d
    C3 = P2 + r3 * m
    P3 = C3 * (r2 / float(np.linalg.norm(C3)))
    tip_half = math.atan2(P3[0], P3[1])
    pitch = 2.0 * math.pi / n
    if not 0.0 < tip_half < 0.5 * pitch:
        raise ValueError(f"tooth: the valley spans ±{math.degrees(tip_half):.4g}° at the tip but the teeth are "
                         f"{math.degrees(pitch):.4g}° apart (n_t = {n}): no tooth top is left; reduce w, r4, θ or "
                         f"r3, or raise r2")
    # the valley must not reach past the neighbour's centre line at any radius (P1, P2 inside the half pitch)
    for name, P in (("seating curve", P1), ("face", P2)):
        if math.atan2(P[0], P[1]) >= 0.5 * pitch:
            raise ValueError(f"tooth: the {name} reaches {math.degrees(math.atan2(P[0], P[1])):.4g}° from the valley's "
                             f"centre line, past half the tooth pitch {math.degrees(0.5 * pitch):.4g}°")
    return {"P0": P0, "C4": C4, "P1": P1, "P2": P2, "C3": C3, "P3": P3, "face": s, "tip_half": tip_half,
            "pitch": pitch, "d": d, "m": m}


def _valley_to_plane(phi: float, u, v):
    """Valley frame (u, v) of the valley centred at angle phi (from -z towards +x) -> gear plane (x, z)."""
    return (u * math.cos(phi) + v * math.sin(phi), u * math.sin(phi) - v * math.cos(phi))


class ToothSprocket(Shape):
    """Pair of gears with han-sander-mao's seven-parameter tooth (Fig. 7) on ``axis`` through ``pos``.

    Parameters (:func:`tooth_points` draws the valley): ``teeth`` n_t, ``face_angle`` θ (rad, the tooth face
    from the valley's centre line), ``r1`` the radius to the bottom of the tooth (the flat), ``r2`` to its top,
    ``r3`` the round at the top, ``r4`` the seating curve, ``w`` the flat between the teeth (m). Each gear (in
    the planes ``±separation/2`` along the axis) is the disc of ``r2`` minus ``teeth`` valleys; the first
    valley is centred at ``phase`` (rad, in the gear plane from the shape's -z towards +x, as
    :class:`Sprocket`). The phase is folded into the shape's rotation, so the kernel's eight parameters are
    the tooth's seven and the half separation. Pins (cylinders, capsules) of other bodies touch the flat, the
    seating curves, the faces, the rounds and the tip: the profile is tangent-continuous, so there are no
    corners. No lateral guide (:class:`Sprocket` has one).
    """

    type_code = S_TOOTH

    def __init__(self, teeth: int, face_angle: float, r1: float, r2: float, r3: float, r4: float, w: float,
                 separation: float, pos=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0), phase: float = 0.0):
        if not isinstance(teeth, (int, np.integer)) or teeth < 3:
            raise ValueError(f"ToothSprocket: teeth must be an integer >= 3, got {teeth!r}")
        try:
            pts = tooth_points(teeth, face_angle, r1, r2, r3, r4, w)
        except ValueError as err:
            raise ValueError(f"ToothSprocket: {err}") from None
        sep = float(separation)
        if not math.isfinite(sep) or sep < 0:
            raise ValueError(f"ToothSprocket: separation must be non-negative, got {separation!r}")
        for k, v in (("teeth", int(teeth)), ("face_angle", float(face_angle)), ("r1", float(r1)), ("r2", float(r2)),
                     ("r3", float(r3)), ("r4", float(r4)), ("w", float(w)), ("separation", sep),
                     ("phase", float(phase)), ("points", pts)):
            object.__setattr__(self, k, v)
        object.__setattr__(self, "pos", tuple(_vec(pos, "ToothSprocket: pos")))
        c, s_ = math.cos(phase), math.sin(phase)
        # a rotation about the shape's y by -phase turns the valley at φ to φ + phase (see Sprocket.profile)
        Ry = np.array([[c, 0.0, -s_], [0.0, 1.0, 0.0], [s_, 0.0, c]])
        object.__setattr__(self, "rot", _axis_rot(axis, "ToothSprocket") @ Ry)

    def __repr__(self):
        return (f"ToothSprocket(teeth={self.teeth}, face_angle={self.face_angle!r}, r1={self.r1!r}, r2={self.r2!r}, "
                f"r3={self.r3!r}, r4={self.r4!r}, w={self.w!r}, separation={self.separation!r}, "
                f"phase={self.phase!r}, pos={self.pos!r})")

    def params(self):
        return np.array([self.teeth, self.face_angle, self.r1, self.r2, self.r3, self.r4, self.w,
                         0.5 * self.separation])

    def bounding_radius(self):
        return math.hypot(self.r2, 0.5 * self.separation)

    def valley_profile(self, n_per_arc: int = 12) -> np.ndarray:
        """One valley, left tip point to right tip point, in the valley frame (u, v): (k, 2)."""
        P = self.points
        right = [P["P0"]]
        a0 = -0.5 * math.pi
        a1 = math.atan2(P["P1"][1] - P["C4"][1], P["P1"][0] - P["C4"][0])
        for a in np.linspace(a0, a1, n_per_arc)[1:]:
            right.append(P["C4"] + self.r4 * np.array([math.cos(a), math.sin(a)]))
        right.append(P["P2"])
        b0 = math.atan2(P["P2"][1] - P["C3"][1], P["P2"][0] - P["C3"][0])
        b1 = math.atan2(P["P3"][1] - P["C3"][1], P["P3"][0] - P["C3"][0])
        if b1 > b0:
            b1 -= 2 * math.pi
        for a in np.linspace(b0, b1, n_per_arc)[1:]:
            right.append(P["C3"] + self.r3 * np.array([math.cos(a), math.sin(a)]))
        right = np.array(right)
        left = right[::-1] * np.array([-1.0, 1.0])
        if self.w == 0.0:
            left = left[:-1]
        return np.vstack([left, right])

    def profile(self, n_per_arc: int = 12) -> np.ndarray:
        """Closed gear outline (x, z) in the gear plane (shape frame, the phase applied), for drawing."""
        val = self.valley_profile(n_per_arc)
        pitch = 2 * math.pi / self.teeth
        th = self.points["tip_half"]
        out = []
        for k in range(self.teeth):
            phi = self.phase + pitch * k
            for u, v in val:
                out.append(_valley_to_plane(phi, u, v))
            for t in np.linspace(phi + th, phi + pitch - th, max(2, n_per_arc // 2))[1:-1]:
                out.append((self.r2 * math.sin(t), -self.r2 * math.cos(t)))
        return np.array(out)

    def signed_distance(self, x: float, z: float) -> float:
        """Distance (m) from a point (x, z) of the gear plane (shape frame) to the profile, negative inside the
        gear. A reference independent of the contact kernel: the distance to the outline drawn with 400
        points per arc (chord error below 1e-8 m for these radii) and the even-odd rule for the side."""
        poly = self.__dict__.get("_dense")
        if poly is None:
            poly = self.profile(400)
            object.__setattr__(self, "_dense", poly)
        a = poly
        b = np.roll(poly, -1, axis=0)
        q = np.array([x, z], float)
        ab = b - a
        t = np.clip(((q - a) * ab).sum(axis=1) / (ab * ab).sum(axis=1), 0.0, 1.0)
        d = float(np.sqrt((((a + t[:, None] * ab) - q) ** 2).sum(axis=1)).min())
        # even-odd rule along +x
        cross = (a[:, 1] > q[1]) != (b[:, 1] > q[1])
        with np.errstate(divide="ignore", invalid="ignore"):
            xc = a[:, 0] + (q[1] - a[:, 1]) * ab[:, 0] / ab[:, 1]
        inside = int(np.count_nonzero(cross & (xc > q[0]))) % 2 == 1
        return -d if inside else d

    def seated_radius(self, pin_radius: float) -> float:
        """Radius (m) of the centre of a pin of ``pin_radius`` at rest in the bottom of a valley, on its centre
        line: the lowest radius where the pin clears the profile (bisection on :meth:`signed_distance`)."""
        lo, hi = self.r1 - pin_radius, self.r2 + pin_radius
        x0, z0 = math.sin(self.phase), -math.cos(self.phase)
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self.signed_distance(mid * x0, mid * z0) < pin_radius:
                lo = mid
            else:
                hi = mid
        return hi
