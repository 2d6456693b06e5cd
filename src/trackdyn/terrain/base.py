"""Terrains: what the contact system collides with, and what plots draw.

Every terrain has a surface material, exact heights (:meth:`Terrain.height`)
and a drawable profile along a path (:meth:`Terrain.profile`, an x–z
polyline). Terrains compose with ``+``: profile pieces on a flat ground form
one exact :class:`ProfileTerrain`; terrains of different kinds (a mesh on a
plane) form a :class:`Composite`, whose parts all collide.

Frames: world, z up; profile terrains run along ``heading`` (rad, from +x
towards +y) from ``origin``; heights are world z.
"""

from __future__ import annotations

import math

import numpy as np

from ..materials import Material
from .profile import PRIM_ARC, PRIM_SEG, Piece, ProfileChain, compose

__all__ = ["Terrain", "Flat", "Plane", "ProfileTerrain", "Composite", "as_terrain", "DEFAULT_MATERIAL"]

# thesis §4.2: ground and obstacles of concrete, μ = 0.8, E = 20 GPa
DEFAULT_MATERIAL = Material("ground", young=2e10, poisson=0.3, restitution=0.1, friction=0.8)


def _material(m, what):
    if m is None:
        return DEFAULT_MATERIAL
    if not isinstance(m, Material):
        raise ValueError(f"{what}: material must be a trackdyn.contact.Material, got {type(m).__name__}")
    return m


class Terrain:
    """Base class of terrains (see the module docstring)."""

    material: Material = DEFAULT_MATERIAL

    def height(self, x, y=0.0):
        """Height (world z, m) of the top surface at world (x, y); arrays broadcast."""
        raise NotImplementedError  # pragma: no cover

    def profile(self, x0: float, x1: float, y: float = 0.0, n: int = 400):
        """Drawing polyline ``(x, z)`` of the surface along x at lateral position y."""
        x = np.linspace(x0, x1, n)
        return x, np.asarray(self.height(x, np.full_like(x, y)), float)

    def parts(self) -> list:
        """The collidable parts (each a Flat/Plane, ProfileTerrain, TriangleMesh)."""
        return [self]

    def __add__(self, other):
        other = as_terrain(other)
        if isinstance(other, Piece):  # pragma: no cover - as_terrain converts pieces
            raise TypeError
        return Composite([self, other])

    def __radd__(self, other):
        if other == 0:  # sum([...])
            return self
        return as_terrain(other) + self


def as_terrain(x) -> Terrain:
    if isinstance(x, Terrain):
        return x
    if isinstance(x, Piece):
        return ProfileTerrain([x])
    raise ValueError(f"expected a terrain or a profile piece, got {type(x).__name__}")


class Plane(Terrain):
    """Infinite plane through ``point`` with upward ``normal`` (an incline, a wall)."""

    def __init__(self, normal=(0.0, 0.0, 1.0), point=(0.0, 0.0, 0.0), material: Material | None = None):
        n = np.asarray(normal, float)
        p = np.asarray(point, float)
        if n.shape != (3,) or not np.all(np.isfinite(n)) or np.linalg.norm(n) == 0:
            raise ValueError(f"Plane: normal must be a non-zero 3-vector, got {normal!r}")
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise ValueError(f"Plane: point must be a finite 3-vector, got {point!r}")
        self.normal = n / np.linalg.norm(n)
        self.point = p
        self.material = _material(material, "Plane")

    @classmethod
    def incline(cls, angle: float, z: float = 0.0, material: Material | None = None, heading: float = 0.0):
        """A plane rising at ``angle`` (rad) along ``heading`` (rad from +x), through (0, 0, z)."""
        c, s = math.cos(heading), math.sin(heading)
        u = np.array([c, s, 0.0])
        n = np.array([0.0, 0.0, 1.0]) * math.cos(angle) - u * math.sin(angle)
        return cls(n, (0.0, 0.0, z), material)

    def height(self, x, y=0.0):
        x = np.asarray(x, float)
        y = np.asarray(y, float)
        n, p = self.normal, self.point
        if abs(n[2]) < 1e-12:
            raise ValueError("Plane.height: a vertical plane has no height")
        return p[2] - (n[0] * (x - p[0]) + n[1] * (y - p[1])) / n[2]

    def __add__(self, other):
        other = as_terrain(other)
        if isinstance(other, ProfileTerrain) and self.is_flat:
            return other.on_base(self.point[2] if self.normal[2] > 0 else 0.0, self.material)
        return super().__add__(other)

    @property
    def is_flat(self) -> bool:
        return bool(abs(self.normal[2] - 1.0) < 1e-15)


class Flat(Plane):
    """Horizontal ground at height ``z`` (m)."""

    def __init__(self, z: float = 0.0, material: Material | None = None):
        z = float(z)
        if not math.isfinite(z):
            raise ValueError(f"Flat: z must be finite, got {z!r}")
        super().__init__((0.0, 0.0, 1.0), (0.0, 0.0, z), material)
        self.z = z


class ProfileTerrain(Terrain):
    """Profile pieces on flat ground: exact segments, arcs and convex edges along a path.

    Parameters
    ----------
    pieces : list of Piece
        Obstacles and road profiles (:mod:`trackdyn.terrain.profile`).
    base : float
        Ground level before the first piece, m.
    material : Material
        Material of the flat ground and of pieces without their own.
    origin : (2,) or (3,)
        Where the path starts (x, y), m.
    heading : float
        Direction of the path, rad from +x towards +y.
    """

    def __init__(self, pieces, base: float = 0.0, material: Material | None = None, origin=(0.0, 0.0),
                 heading: float = 0.0):
        self.pieces = list(pieces)
        for p in self.pieces:
            if not isinstance(p, Piece):
                raise ValueError(f"ProfileTerrain: expected profile pieces, got {type(p).__name__}")
        self.base = float(base)
        self.material = _material(material, "ProfileTerrain")
        o = np.zeros(3)
        o[: len(origin)] = np.asarray(origin, float)[:2]
        self.origin = o
        self.heading = float(heading)
        self.u = np.array([math.cos(self.heading), math.sin(self.heading), 0.0])
        self.w = np.array([-math.sin(self.heading), math.cos(self.heading), 0.0])
        items, _ = compose(self.pieces, self.base)
        mats = [self.material]
        idx = []
        for _, _, piece in items:
            m = self.material if piece is None or piece.material is None else _material(piece.material, "piece")
            if m not in mats:
                mats.append(m)
            idx.append(mats.index(m))
        self.materials = mats
        self.chain = ProfileChain.build([(k, d, i) for (k, d, _), i in zip(items, idx)])

    def on_base(self, base, material):
        return ProfileTerrain(self.pieces, base, material, self.origin[:2], self.heading)

    def __add__(self, other):
        other = as_terrain(other)
        if isinstance(other, Plane) and other.is_flat:
            return self.on_base(other.point[2], other.material)
        if isinstance(other, ProfileTerrain) and other.heading == self.heading and np.allclose(
                other.origin, self.origin):
            return ProfileTerrain(self.pieces + other.pieces, self.base, self.material, self.origin[:2],
                                  self.heading)
        return super().__add__(other)

    # ------------------------------------------------------------------ geometry
    def path_coordinate(self, x, y):
        x = np.asarray(x, float)
        y = np.asarray(y, float)
        return (x - self.origin[0]) * self.u[0] + (y - self.origin[1]) * self.u[1]

    def height_along(self, s):
        """Exact top height at path coordinates s (array)."""
        s = np.atleast_1d(np.asarray(s, float))
        ch = self.chain
        z = np.full(s.shape, -np.inf)
        for k in range(len(ch.prim_type)):
            t = ch.prim_type[k]
            a = ch.prim_a[k]
            lo, hi = ch.prim_smin[k], ch.prim_smax[k]
            m = (s >= lo - 1e-12) & (s <= hi + 1e-12)
            if not m.any():
                continue
            if t == PRIM_SEG:
                if a[2] == a[0]:
                    zz = np.full(m.sum(), max(a[1], a[3]))
                else:
                    zz = a[1] + (a[3] - a[1]) * (s[m] - a[0]) / (a[2] - a[0])
            elif t == PRIM_ARC:
                zz = a[1] + np.sqrt(np.maximum(a[2] ** 2 - (s[m] - a[0]) ** 2, 0.0))
            else:
                zz = np.full(m.sum(), a[1])
            z[m] = np.maximum(z[m], zz)
        return z

    def height(self, x, y=0.0):
        x = np.asarray(x, float)
        return self.height_along(self.path_coordinate(x, np.broadcast_to(y, x.shape))).reshape(x.shape)

    def surface_points(self, s0: float, s1: float, spacing: float = 1e-3):
        """Points (s, z) on the exact surface between s0 and s1, every ``spacing`` m along it, with all corners."""
        ch = self.chain
        pts = []
        for k in range(len(ch.prim_type)):
            if ch.prim_smax[k] < s0 or ch.prim_smin[k] > s1:
                continue
            a = ch.prim_a[k]
            t = ch.prim_type[k]
            if t == PRIM_SEG:
                L = math.hypot(a[2] - a[0], a[3] - a[1])
                n = max(2, int(math.ceil(L / spacing)) + 1)
                if L > 10 * (s1 - s0) + 10:  # far-reaching flat ends: only the part in range
                    lo, hi = max(min(a[0], a[2]), s0), min(max(a[0], a[2]), s1)
                    ss = np.linspace(lo, hi, max(2, int((hi - lo) / spacing) + 1))
                    zz = a[1] + (a[3] - a[1]) * (ss - a[0]) / (a[2] - a[0])
                else:
                    f = np.linspace(0, 1, n)
                    ss = a[0] + f * (a[2] - a[0])
                    zz = a[1] + f * (a[3] - a[1])
            elif t == PRIM_ARC:
                a0 = math.atan2(ch.prim_n[k, 1], ch.prim_n[k, 0])
                a1 = math.atan2(ch.prim_n[k, 3], ch.prim_n[k, 2])
                n = max(3, int(math.ceil(a[2] * abs(a0 - a1) / spacing)) + 1)
                ang = np.linspace(a0, a1, n)
                ss = a[0] + a[2] * np.cos(ang)
                zz = a[1] + a[2] * np.sin(ang)
            else:
                ss, zz = np.array([a[0]]), np.array([a[1]])
            pts.append(np.column_stack([ss, zz]))
        P = np.concatenate(pts) if pts else np.zeros((0, 2))
        return P[(P[:, 0] >= s0 - 1) & (P[:, 0] <= s1 + 1)]

    def offset_profile(self, s, radius: float):
        """Height of the centre of a circle of ``radius`` resting on the profile at path coordinates s.

        The exact upper envelope of circles rolling on the surface (segments,
        arcs and corners): what a rigid wheel's centre follows when it is
        pushed slowly along the path.
        """
        s = np.atleast_1d(np.asarray(s, float))
        r = float(radius)
        ch = self.chain
        out = np.full(s.shape, -np.inf)
        for k in range(len(ch.prim_type)):
            if ch.prim_smax[k] < s.min() - r or ch.prim_smin[k] > s.max() + r:
                continue
            a = ch.prim_a[k]
            t = ch.prim_type[k]
            if t == PRIM_SEG:
                pts = [(a[0], a[1]), (a[2], a[3])]
                ns, nz = ch.prim_n[k, 0], ch.prim_n[k, 1]
                if nz > 0 and a[2] != a[0]:
                    foot = s - r * ns
                    lo, hi = min(a[0], a[2]), max(a[0], a[2])
                    m = (foot >= lo) & (foot <= hi)
                    zf = a[1] + (a[3] - a[1]) * (foot[m] - a[0]) / (a[2] - a[0]) + r * nz
                    out[m] = np.maximum(out[m], zf)
            elif t == PRIM_ARC:
                cs, cz, ra = a[0], a[1], a[2]
                ns0, nz0, ns1, nz1 = ch.prim_n[k]
                d = s - cs
                m = np.abs(d) <= ra + r
                zz = cz + np.sqrt(np.maximum((ra + r) ** 2 - d[m] ** 2, 0.0))
                # only where the contact direction lies on the arc
                ds, dz = d[m], zz - cz
                ok = (ns1 * dz - nz1 * ds >= -1e-12) & (ds * nz0 - dz * ns0 >= -1e-12)
                idx = np.nonzero(m)[0][ok]
                out[idx] = np.maximum(out[idx], zz[ok])
                pts = [(cs + ra * ns0, cz + ra * nz0), (cs + ra * ns1, cz + ra * nz1)]
            else:
                pts = [(a[0], a[1])]
            for ps, pz in pts:
                d = s - ps
                m = np.abs(d) <= r
                out[m] = np.maximum(out[m], pz + np.sqrt(r * r - d[m] ** 2))
        return out

    def profile(self, x0, x1, y=0.0, n=None):
        """Exact polyline (x, z) along the path between path coordinates x0 and x1 (arcs sampled by 1°)."""
        ch = self.chain
        pts = []
        for k in range(len(ch.prim_type)):
            if ch.prim_smax[k] < x0 or ch.prim_smin[k] > x1:
                continue
            a = ch.prim_a[k]
            if ch.prim_type[k] == PRIM_SEG:
                pts += [(a[0], a[1]), (a[2], a[3])]
            elif ch.prim_type[k] == PRIM_ARC:
                a0 = math.atan2(ch.prim_n[k, 1], ch.prim_n[k, 0])
                a1 = math.atan2(ch.prim_n[k, 3], ch.prim_n[k, 2])
                for ang in np.linspace(a0, a1, max(3, int(abs(a0 - a1) / math.radians(1)) + 1)):
                    pts.append((a[0] + a[2] * math.cos(ang), a[1] + a[2] * math.sin(ang)))
        xy = np.array(pts) if pts else np.zeros((0, 2))
        # clip the far-reaching ends to the requested range
        xs, zs = xy[:, 0].copy(), xy[:, 1].copy()
        keep = np.ones(len(xs), bool)
        for i in range(len(xs)):
            if xs[i] < x0 or xs[i] > x1:
                j = i + 1 if i + 1 < len(xs) and xs[i] < x0 else i - 1
                if 0 <= j < len(xs) and xs[j] != xs[i]:
                    xe = min(max(xs[i], x0), x1)
                    zs[i] = zs[i] + (zs[j] - zs[i]) * (xe - xs[i]) / (xs[j] - xs[i])
                    xs[i] = xe
                else:
                    keep[i] = False
        xs, zs = xs[keep], zs[keep]
        # remove consecutive duplicates
        m = np.ones(len(xs), bool)
        m[1:] = (np.abs(np.diff(xs)) > 1e-12) | (np.abs(np.diff(zs)) > 1e-12)
        return xs[m], zs[m]


class Composite(Terrain):
    """Several terrains at once (all collide); the height is the highest surface."""

    def __init__(self, parts):
        flat = []
        for p in parts:
            flat.extend(as_terrain(p).parts())
        self._parts = flat
        self.material = flat[0].material

    def parts(self):
        return list(self._parts)

    def height(self, x, y=0.0):
        return np.max(np.stack([np.asarray(p.height(x, y), float) for p in self._parts]), axis=0)

    def __add__(self, other):
        return Composite(self._parts + [as_terrain(other)])
