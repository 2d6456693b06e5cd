"""Ground profiles along a straight path: analytic obstacles with exact edges and road profiles.

A profile terrain is a 2-D curve ``z(s)`` along a path (``s`` the distance
along the path direction, extruded laterally without end), made of exact
primitives: straight segments, convex circular arcs (half-round obstacles)
and the convex corners between them (the edges of steps, gaps, barriers and
ditches). Smooth road profiles (bump, trough, sinusoid, ISO 8608 random road)
are sampled into segments at a chosen resolution.

Pieces are composed along the path with ``+``: ``Flat() + Step(0.6, x=3.0)``.
Every piece starts at its ``x`` (the leading edge) at the current ground
level; a :class:`Step` changes the level for the pieces after it. Pieces must
not overlap. Each piece may carry its own material (``None``: the base's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Piece", "HalfRound", "Step", "Gap", "TrapezoidBarrier", "TrapezoidDitch", "Bump", "Trough", "Sinusoid",
    "RandomRoad", "ProfileChain", "PRIM_SEG", "PRIM_ARC", "PRIM_VERTEX", "FAR",
]

PRIM_SEG = 0
PRIM_ARC = 1
PRIM_VERTEX = 2
FAR = 1.0e5  # the profile continues flat this far beyond its first and last pieces (m)


def _num(x, what, positive=True, allow_zero=False, allow_negative=False):
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected a number, got {x!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{what}: must be finite, got {x!r}")
    if not allow_negative and (v < 0 or (v == 0 and not allow_zero)):
        raise ValueError(f"{what}: must be {'non-negative' if allow_zero else 'positive'}, got {x!r}")
    return v


@dataclass(frozen=True, kw_only=True)
class Piece:
    """Base of profile pieces: ``x`` is the leading edge (m along the path), ``material`` its surface."""

    x: float = 0.0
    material: object = field(default=None, compare=False)

    @property
    def extent(self) -> float:  # pragma: no cover - abstract
        """Length covered along the path, m."""
        raise NotImplementedError

    def level_change(self) -> float:
        return 0.0

    def curve(self, base: float):
        """Primitives relative to ``base``: list of ("seg", (s0, z0, s1, z1)) / ("arc", (cs, cz, r, a0, a1))."""
        raise NotImplementedError  # pragma: no cover

    def __add__(self, other):
        from .base import as_terrain  # base imports this module (Piece, compose): not at the top, a cycle

        return as_terrain(self) + other

    def __radd__(self, other):
        from .base import as_terrain  # base imports this module (Piece, compose): not at the top, a cycle

        return other + as_terrain(self)

    # drawing and tests
    def height(self, s, base: float = 0.0):
        """Exact ground height at path coordinates ``s`` (array), on a base level."""
        from .base import as_terrain  # base imports this module (Piece, compose): not at the top, a cycle

        return as_terrain(self).height_along(np.asarray(s, float)) + base


def _polyline(pts):
    return [("seg", (pts[k][0], pts[k][1], pts[k + 1][0], pts[k + 1][1])) for k in range(len(pts) - 1)]


@dataclass(frozen=True)
class HalfRound(Piece):
    """Half-round (semicircular) obstacle of radius = height, on the ground from x to x + 2h."""

    height: float = 0.1

    def __post_init__(self):
        _num(self.height, "HalfRound: height")
        _num(self.x, "HalfRound: x", allow_negative=True)

    @property
    def extent(self):
        return 2 * self.height

    def curve(self, base):
        r = self.height
        return [("arc", (self.x + r, base, r, math.pi, 0.0))]


@dataclass(frozen=True)
class Step(Piece):
    """Vertical step of ``height`` at x (negative: a step down); the ground stays at the new level."""

    height: float = 0.1

    def __post_init__(self):
        _num(self.height, "Step: height", allow_negative=True)
        if self.height == 0:
            raise ValueError("Step: height must not be zero")
        _num(self.x, "Step: x", allow_negative=True)

    @property
    def extent(self):
        return 0.0

    def level_change(self):
        return self.height

    def curve(self, base):
        return [("seg", (self.x, base, self.x, base + self.height))]


@dataclass(frozen=True)
class Gap(Piece):
    """Trench with vertical walls: ``width`` (m) and ``depth`` (m), from x to x + width."""

    width: float = 0.5
    depth: float = 0.5

    def __post_init__(self):
        _num(self.width, "Gap: width")
        _num(self.depth, "Gap: depth")
        _num(self.x, "Gap: x", allow_negative=True)

    @property
    def extent(self):
        return self.width

    def curve(self, base):
        x, w, d = self.x, self.width, self.depth
        return _polyline([(x, base), (x, base - d), (x + w, base - d), (x + w, base)])


def _check_slope(slope, what):
    s = _num(slope, f"{what}: slope")
    if not 0 < s <= math.pi / 2:
        raise ValueError(f"{what}: slope must be in (0, π/2] rad, got {slope!r}")
    return s


@dataclass(frozen=True)
class TrapezoidBarrier(Piece):
    """Trapezoidal barrier: ``height``, flat ``top_length`` and flank ``slope`` (rad) from the ground."""

    height: float = 0.5
    top_length: float = 1.0
    slope: float = math.pi / 4

    def __post_init__(self):
        _num(self.height, "TrapezoidBarrier: height")
        _num(self.top_length, "TrapezoidBarrier: top_length", allow_zero=True)
        _check_slope(self.slope, "TrapezoidBarrier")
        _num(self.x, "TrapezoidBarrier: x", allow_negative=True)

    @property
    def run(self):
        return 0.0 if self.slope == math.pi / 2 else self.height / math.tan(self.slope)

    @property
    def extent(self):
        return 2 * self.run + self.top_length

    def curve(self, base):
        x, h, a, t = self.x, self.height, self.run, self.top_length
        return _polyline([(x, base), (x + a, base + h), (x + a + t, base + h), (x + 2 * a + t, base)])


@dataclass(frozen=True)
class TrapezoidDitch(Piece):
    """Trapezoidal ditch: ``depth``, opening ``top_length`` at ground level and flank ``slope`` (rad)."""

    depth: float = 0.5
    top_length: float = 2.0
    slope: float = math.pi / 4

    def __post_init__(self):
        _num(self.depth, "TrapezoidDitch: depth")
        _num(self.top_length, "TrapezoidDitch: top_length")
        _check_slope(self.slope, "TrapezoidDitch")
        _num(self.x, "TrapezoidDitch: x", allow_negative=True)
        if self.top_length - 2 * self.run < 0:
            raise ValueError(
                f"TrapezoidDitch: top_length {self.top_length} is shorter than the two flanks "
                f"({2 * self.run:.4g} m at slope {self.slope:.4g} rad and depth {self.depth})")

    @property
    def run(self):
        return 0.0 if self.slope == math.pi / 2 else self.depth / math.tan(self.slope)

    @property
    def extent(self):
        return self.top_length

    def curve(self, base):
        x, d, a, t = self.x, self.depth, self.run, self.top_length
        return _polyline([(x, base), (x + a, base - d), (x + t - a, base - d), (x + t, base)])


def _sampled(x0, length, fn, resolution):
    n = max(2, int(math.ceil(length / resolution)) + 1)
    s = np.linspace(0.0, length, n)
    z = fn(s)
    return [(x0 + si, zi) for si, zi in zip(s, z)]


@dataclass(frozen=True)
class Bump(Piece):
    """Cosine bump ``z = h/2 (1 - cos(2π (s - x)/L))`` of height h and length L, sampled every ``resolution`` m."""

    height: float = 0.1
    length: float = 1.0
    resolution: float = 0.01

    def __post_init__(self):
        _num(self.height, "Bump: height")
        _num(self.length, "Bump: length")
        _num(self.resolution, "Bump: resolution")
        _num(self.x, "Bump: x", allow_negative=True)

    @property
    def extent(self):
        return self.length

    def shape(self, s):
        return 0.5 * self.height * (1 - np.cos(2 * np.pi * s / self.length))

    def curve(self, base):
        return _polyline(_sampled(self.x, self.length, lambda s: base + self.shape(s), self.resolution))


@dataclass(frozen=True)
class Trough(Piece):
    """Cosine trough ``z = -d/2 (1 - cos(2π (s - x)/L))`` of depth d and length L, sampled every ``resolution`` m."""

    depth: float = 0.1
    length: float = 1.0
    resolution: float = 0.01

    def __post_init__(self):
        _num(self.depth, "Trough: depth")
        _num(self.length, "Trough: length")
        _num(self.resolution, "Trough: resolution")
        _num(self.x, "Trough: x", allow_negative=True)

    @property
    def extent(self):
        return self.length

    def shape(self, s):
        return -0.5 * self.depth * (1 - np.cos(2 * np.pi * s / self.length))

    def curve(self, base):
        return _polyline(_sampled(self.x, self.length, lambda s: base + self.shape(s), self.resolution))


@dataclass(frozen=True)
class Sinusoid(Piece):
    """Sinusoidal road ``z = A sin(2π (s - x)/λ)`` over ``length`` m, sampled every ``resolution`` m."""

    amplitude: float = 0.05
    wavelength: float = 2.0
    length: float = 10.0
    resolution: float = 0.01

    def __post_init__(self):
        _num(self.amplitude, "Sinusoid: amplitude")
        _num(self.wavelength, "Sinusoid: wavelength")
        _num(self.length, "Sinusoid: length")
        _num(self.resolution, "Sinusoid: resolution")
        _num(self.x, "Sinusoid: x", allow_negative=True)

    @property
    def extent(self):
        return self.length

    def shape(self, s):
        return self.amplitude * np.sin(2 * np.pi * s / self.wavelength)

    def curve(self, base):
        return _polyline(_sampled(self.x, self.length, lambda s: base + self.shape(s), self.resolution))


ISO8608_GD = {c: 16e-6 * 4 ** k for k, c in enumerate("ABCDEFGH")}  # Gd(n0), m³, n0 = 0.1 cycle/m


@dataclass(frozen=True)
class RandomRoad(Piece):
    """ISO 8608 random road of class ``road_class`` (A..H), reproducible from ``seed``.

    Displacement PSD ``G_d(n) = G_d(n0) (n/n0)^-2`` with ``n0 = 0.1`` cycle/m and
    ``G_d(n0) = 16·4^k 10⁻⁶ m³`` (class A: k = 0, the geometric mean of the
    class); the profile is a sum of harmonics with random phases at the
    frequencies ``k/L`` between ``n_min`` and ``n_max`` (cycle/m), sampled every
    ``resolution`` m and faded in and out over ``taper`` m at both ends.
    """

    road_class: str = "C"
    length: float = 100.0
    seed: int = 0
    resolution: float = 0.05
    n_min: float = 0.011
    n_max: float = 2.83
    taper: float = 1.0

    def __post_init__(self):
        if self.road_class not in ISO8608_GD:
            raise ValueError(f"RandomRoad: road_class must be one of A..H, got {self.road_class!r}")
        _num(self.length, "RandomRoad: length")
        _num(self.resolution, "RandomRoad: resolution")
        _num(self.n_min, "RandomRoad: n_min")
        _num(self.n_max, "RandomRoad: n_max")
        _num(self.taper, "RandomRoad: taper", allow_zero=True)
        if self.n_max <= self.n_min:
            raise ValueError(f"RandomRoad: n_max {self.n_max} must exceed n_min {self.n_min}")
        if 2 * self.taper >= self.length:
            raise ValueError(f"RandomRoad: taper {self.taper} is too long for length {self.length}")
        _num(self.x, "RandomRoad: x", allow_negative=True)

    @property
    def extent(self):
        return self.length

    def shape(self, s):
        s = np.asarray(s, float)
        rng = np.random.default_rng(self.seed)
        dn = 1.0 / self.length
        k0 = max(1, int(math.ceil(self.n_min / dn)))
        k1 = int(math.floor(self.n_max / dn))
        n = np.arange(k0, k1 + 1) * dn
        phase = rng.uniform(0, 2 * np.pi, size=n.size)
        gd = ISO8608_GD[self.road_class] * (n / 0.1) ** -2.0
        amp = np.sqrt(2.0 * gd * dn)
        z = np.zeros_like(s)
        for a, nn, ph in zip(amp, n, phase):
            z += a * np.cos(2 * np.pi * nn * s + ph)
        if self.taper > 0:
            w = np.ones_like(s)
            lo = s < self.taper
            hi = s > self.length - self.taper
            w[lo] = 0.5 * (1 - np.cos(np.pi * s[lo] / self.taper))
            w[hi] = 0.5 * (1 - np.cos(np.pi * (self.length - s[hi]) / self.taper))
            z = z * w
        return z

    def curve(self, base):
        return _polyline(_sampled(self.x, self.length, lambda s: base + self.shape(s), self.resolution))


# --------------------------------------------------------------------------- chain of primitives
@dataclass
class ProfileChain:
    """The exact primitives of a composed profile, in path order, with their materials (indices).

    ``prim_type`` (n,) PRIM_SEG / PRIM_ARC / PRIM_VERTEX; ``prim_a`` (n, 4):
    segment ``(s0, z0, s1, z1)``, arc ``(cs, cz, r, 0)``, vertex ``(s, z, 0, 0)``;
    ``prim_n`` (n, 4): segment outward normal ``(ns, nz, 0, 0)``; arc and vertex
    the outward normals at start and end ``(ns0, nz0, ns1, nz1)`` (their region
    is swept clockwise from the first to the second); ``prim_smin``,
    ``prim_smax`` the extent along the path; ``prim_mat`` material index.
    """

    prim_type: np.ndarray
    prim_a: np.ndarray
    prim_n: np.ndarray
    prim_smin: np.ndarray
    prim_smax: np.ndarray
    prim_smax_cum: np.ndarray
    prim_mat: np.ndarray

    @classmethod
    def build(cls, items):
        """``items``: list of (kind, data, material_index) along the path, ground-connected."""
        types, A, N, smin, smax, mats = [], [], [], [], [], []

        def tangents(kind, d):
            if kind == "seg":
                t = np.array([d[2] - d[0], d[3] - d[1]])
                t = t / np.linalg.norm(t)
                return t, t
            cs, cz, r, a0, a1 = d
            # clockwise over a convex arc: tangent = (sin a, -cos a)
            return np.array([math.sin(a0), -math.cos(a0)]), np.array([math.sin(a1), -math.cos(a1)])

        def left_normal(t):
            return np.array([-t[1], t[0]])

        prev_t = None
        prev_end = None
        for kind, d, mat in items:
            t0, t1 = tangents(kind, d)
            start = np.array(d[:2]) if kind == "seg" else np.array(
                [d[0] + d[2] * math.cos(d[3]), d[1] + d[2] * math.sin(d[3])])
            if prev_t is not None:
                if np.linalg.norm(start - prev_end) > 1e-9:
                    raise ValueError(f"profile: pieces do not connect at s = {prev_end[0]:.6g}")
                cross = prev_t[0] * t0[1] - prev_t[1] * t0[0]
                if cross < -1e-12:
                    types.append(PRIM_VERTEX)
                    A.append([start[0], start[1], 0.0, 0.0])
                    N.append([*left_normal(prev_t), *left_normal(t0)])
                    smin.append(start[0])
                    smax.append(start[0])
                    mats.append(mat)
            if kind == "seg":
                types.append(PRIM_SEG)
                A.append(list(d))
                nrm = left_normal(t0)
                N.append([nrm[0], nrm[1], 0.0, 0.0])
                smin.append(min(d[0], d[2]))
                smax.append(max(d[0], d[2]))
                end = np.array(d[2:4])
            else:
                cs, cz, r, a0, a1 = d
                types.append(PRIM_ARC)
                A.append([cs, cz, r, 0.0])
                N.append([math.cos(a0), math.sin(a0), math.cos(a1), math.sin(a1)])
                angs = np.linspace(a1, a0, 65)
                xs = cs + r * np.cos(angs)
                smin.append(xs.min())
                smax.append(xs.max())
                end = np.array([cs + r * math.cos(a1), cz + r * math.sin(a1)])
            mats.append(mat)
            prev_t = t1
            prev_end = end
        smax_a = np.array(smax)
        return cls(np.array(types, dtype=np.int64), np.array(A, float).reshape(-1, 4),
                   np.array(N, float).reshape(-1, 4), np.array(smin), smax_a, np.maximum.accumulate(smax_a),
                   np.array(mats, dtype=np.int64))


def compose(pieces, base_level: float = 0.0):
    """Items (kind, data, piece) of the profile made of ``pieces`` on a flat base at ``base_level``.

    Returns (items, pieces sorted); the base parts carry ``None`` as their piece.
    """
    ps = sorted(pieces, key=lambda p: p.x)
    for a, b in zip(ps[:-1], ps[1:]):
        if a.x + a.extent > b.x + 1e-12:
            raise ValueError(f"profile: {type(a).__name__} at x = {a.x} (extent {a.extent:.4g} m) overlaps "
                             f"{type(b).__name__} at x = {b.x}")
    items = []
    level = float(base_level)
    s = -FAR if not ps else min(-FAR, ps[0].x - FAR)
    for p in ps:
        if p.x > s:
            items.append(("seg", (s, level, p.x, level), None))
        for kind, d in p.curve(level):
            items.append((kind, d, p))
        level += p.level_change()
        s = p.x + p.extent
    end = max(FAR, s + FAR)
    items.append(("seg", (s, level, end, level), None))
    # merge consecutive collinear segments of the same piece/base
    merged = []
    for it in items:
        if merged and it[0] == "seg" and merged[-1][0] == "seg" and merged[-1][2] is it[2]:
            a = merged[-1][1]
            b = it[1]
            t1 = np.array([a[2] - a[0], a[3] - a[1]])
            t2 = np.array([b[2] - b[0], b[3] - b[1]])
            if abs(t1[0] * t2[1] - t1[1] * t2[0]) < 1e-15 * np.linalg.norm(t1) * np.linalg.norm(t2) and t1 @ t2 > 0:
                merged[-1] = ("seg", (a[0], a[1], b[2], b[3]), it[2])
                continue
        merged.append(it)
    return merged, ps
