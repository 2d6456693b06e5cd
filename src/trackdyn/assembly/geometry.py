"""Track-assembly geometry in the side plane: wheel layout, track path, shoe count, pin positions.

Everything here is planar (x, z) for one track side and derived from a
:class:`~trackdyn.spec.vehicle.VehicleSpec`; nothing is stored back in the
spec. The track's pin line wraps the convex hull of circles: the sprocket's
pin circle (``assembly_radius``) and, for the idler, road wheels and rollers,
the circle on which pins lie when the middle of every flat shoe touches the
wheel, ``√((r + top)² + (pitch/2)²)`` (the polygon effect: with ``r + top``
each shoe would cut into the wheel by up to 12 mm on the M113's idler). The loop is
traversed counter-clockwise seen from the left (+y): forward along the bottom,
up at the front, backwards along the top.

Pins are placed at chord length ``pitch`` along that path; the loop closes
exactly by moving the idler along its tensioner axis (a 1-D root find), so
every pin joint is satisfied to round-off. The shoe count follows the
geometry (korner-2024 §5.1): the count that needs the smallest idler shift
within the tensioner's travel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq
from scipy.spatial import ConvexHull

__all__ = ["Circle", "TrackPath", "SideLayout", "side_layout", "track_path", "close_track", "check_layout",
           "GeometryError"]


class GeometryError(ValueError):
    """The vehicle's geometry is inconsistent (intersecting wheels, a track that cannot close...)."""


@dataclass(frozen=True)
class Circle:
    kind: str        # "sprocket", "idler", "roadwheel", "roller"
    index: int
    center: tuple[float, float]
    radius: float    # the wheel's own radius (sprocket: addendum)
    path_radius: float  # radius of the pin line around it


@dataclass
class SideLayout:
    """Wheel centres of one side at the design pose, before the loop is closed."""

    side: str
    sprocket: tuple[float, float]
    idler_nominal: tuple[float, float]
    idler_direction: tuple[float, float]
    pivots: list[tuple[float, float]]
    wheels: list[tuple[float, float]]
    rollers: list[tuple[float, float]]
    circles_fixed: list[Circle] = field(default_factory=list)
    idler_radius: float = 0.0
    idler_path_radius: float = 0.0

    def circles(self, shift: float) -> list[Circle]:
        cx = self.idler_nominal[0] + shift * self.idler_direction[0]
        cz = self.idler_nominal[1] + shift * self.idler_direction[1]
        return self.circles_fixed + [Circle("idler", 0, (cx, cz), self.idler_radius, self.idler_path_radius)]

    def idler_center(self, shift: float) -> tuple[float, float]:
        return (self.idler_nominal[0] + shift * self.idler_direction[0],
                self.idler_nominal[1] + shift * self.idler_direction[1])


def side_layout(spec, side: str = "left") -> SideLayout:
    """Wheel and pivot positions (x, z) of one side at the design arm angle."""
    sus = spec.suspension
    dx = spec.tracks.right_suspension_offset if side == "right" else 0.0
    top = spec.shoes.top
    th = sus.design_angle
    sgn = -1.0 if sus.trailing else 1.0
    pivots, wheels = [], []
    for st in sus.stations:
        px, pz = st.pivot[0] + dx, st.pivot[1]
        pivots.append((px, pz))
        wheels.append((px + sgn * sus.arm_length * math.cos(th), pz - sus.arm_length * math.sin(th)))
    sp = spec.sprocket
    half = 0.5 * spec.shoes.pitch

    def pin_circle(r):
        # shoes are flat chords: the middle of each shoe's wheel path touches the wheel when the
        # pins lie on the circle of radius sqrt((r + top)^2 + (pitch/2)^2) (the polygon effect)
        return math.hypot(r + top, half)

    circles = [Circle("sprocket", 0, tuple(sp.location), sp.outer_radius, sp.assembly_radius)]
    circles += [Circle("roadwheel", k, w, sus.wheel_radius, pin_circle(sus.wheel_radius)) for k, w in enumerate(wheels)]
    ro = spec.rollers
    circles += [Circle("roller", k, tuple(c), ro.radius, pin_circle(ro.radius)) for k, c in enumerate(ro.locations)]
    return SideLayout(side, tuple(sp.location), tuple(spec.idler.location), tuple(spec.idler.tensioner.direction),
                      pivots, wheels, [tuple(c) for c in ro.locations], circles, spec.idler.radius,
                      pin_circle(spec.idler.radius))


# ------------------------------------------------------------------ path
@dataclass
class TrackPath:
    """Closed pin-line path: tangent segments and arcs, counter-clockwise."""

    segments: list  # ("line", p0, p1, length) | ("arc", center, r, theta0, dtheta, length)
    circles: list[Circle]
    order: list[int]
    length: float
    cum: np.ndarray

    def point(self, s: float) -> np.ndarray:
        s = s % self.length
        k = int(np.searchsorted(self.cum, s, side="right") - 1)
        k = min(max(k, 0), len(self.segments) - 1)
        seg = self.segments[k]
        u = s - self.cum[k]
        if seg[0] == "line":
            p0, p1, L = seg[1], seg[2], seg[3]
            return p0 + (p1 - p0) * (u / L)
        c, r, th0 = seg[1], seg[2], seg[3]
        th = th0 + u / r
        return c + r * np.array([math.cos(th), math.sin(th)])

    def on_circle(self, s: float):  # noqa: D401
        """The circle under arc length s, or None on a straight segment."""
        s = s % self.length
        k = int(np.searchsorted(self.cum, s, side="right") - 1)
        seg = self.segments[min(max(k, 0), len(self.segments) - 1)]
        return seg[6] if seg[0] == "arc" else None


def track_path(circles: list[Circle]) -> TrackPath:
    """The belt around the convex hull of the path circles (counter-clockwise)."""
    pts, ids = [], []
    th = np.linspace(0, 2 * np.pi, 180, endpoint=False)
    for i, c in enumerate(circles):
        pts.append(np.column_stack([c.center[0] + c.path_radius * np.cos(th),
                                    c.center[1] + c.path_radius * np.sin(th)]))
        ids.append(np.full(len(th), i))
    P = np.concatenate(pts)
    I = np.concatenate(ids)
    hull = ConvexHull(P)
    seq = [int(I[v]) for v in hull.vertices]  # counter-clockwise in 2-D
    # the visits of the path: consecutive hull vertices on the same circle form one arc. A wheel
    # may be visited twice (e.g. a lowered idler: the upper strand passes over the last road wheel)
    order = []
    for i in seq:
        if not order or order[-1] != i:
            order.append(i)
    while len(order) > 1 and order[0] == order[-1]:
        order.pop()
    if len(order) < 2:
        raise GeometryError("the track path needs at least two wheels on its hull")
    # tangent points
    n = len(order)
    tangents = []
    for k in range(n):
        A, B = circles[order[k]], circles[order[(k + 1) % n]]
        ca, cb = np.array(A.center), np.array(B.center)
        L = np.linalg.norm(cb - ca)
        d = (cb - ca) / L
        right = np.array([d[1], -d[0]])
        sphi = (A.path_radius - B.path_radius) / L
        if abs(sphi) >= 1:
            raise GeometryError(f"{A.kind} and {B.kind} circles contain one another")
        cphi = math.sqrt(1 - sphi * sphi)
        nrm = cphi * right + sphi * d
        tangents.append((ca + A.path_radius * nrm, cb + B.path_radius * nrm, nrm))
    segments = []
    for k in range(n):
        p0, p1, nrm = tangents[k]
        segments.append(("line", p0, p1, float(np.linalg.norm(p1 - p0))))
        # arc on the next circle from this tangent's end to the next tangent's start
        C = circles[order[(k + 1) % n]]
        c = np.array(C.center)
        q0 = p1 - c
        q1 = tangents[(k + 1) % n][0] - c
        th0 = math.atan2(q0[1], q0[0])
        dth = (math.atan2(q1[1], q1[0]) - th0) % (2 * np.pi)
        segments.append(("arc", c, C.path_radius, th0, dth, C.path_radius * dth, C))
    lengths = np.array([seg[3] if seg[0] == "line" else seg[5] for seg in segments])
    cum = np.concatenate([[0.0], np.cumsum(lengths)])
    return TrackPath(segments, circles, order, float(cum[-1]), cum[:-1])


def _next_on_path(path: TrackPath, s_from: float, P: np.ndarray, pitch: float) -> float:
    """Smallest arc length s > s_from with |point(s) - P| = pitch (exact line/circle intersections)."""
    L = path.length
    base = math.floor(s_from / L) * L
    u0 = s_from - base
    k0 = int(np.searchsorted(path.cum, u0, side="right") - 1)
    nseg = len(path.segments)
    for step in range(nseg + 1):
        k = (k0 + step) % nseg
        seg = path.segments[k]
        s_seg = path.cum[k] + base + (L if k0 + step >= nseg else 0.0)
        lo = (u0 - path.cum[k]) if step == 0 else 0.0
        best = None
        if seg[0] == "line":
            A, B, Ls = seg[1], seg[2], seg[3]
            d = (B - A) / Ls
            w = A - P
            # |w + t d|² = pitch², t in [lo, Ls]
            bq = w @ d
            cq = w @ w - pitch * pitch
            disc = bq * bq - cq
            if disc >= 0:
                r = math.sqrt(disc)
                for t in sorted((-bq - r, -bq + r)):
                    if lo + 1e-12 < t <= Ls + 1e-12:
                        best = t
                        break
        else:
            C, r, th0, dth = seg[1], seg[2], seg[3], seg[4]
            q = P - C
            dq = math.hypot(q[0], q[1])
            if dq > 1e-15:
                cosv = (r * r + dq * dq - pitch * pitch) / (2 * r * dq)
                if -1.0 <= cosv <= 1.0:
                    phi = math.atan2(q[1], q[0])
                    acv = math.acos(cosv)
                    cands = []
                    for ang in (phi + acv, phi - acv):
                        t = ((ang - th0) % (2 * math.pi)) * r
                        if lo + 1e-12 < t <= r * dth + 1e-12:
                            cands.append(t)
                    if cands:
                        best = min(cands)
        if best is not None:
            return s_seg + best
    raise GeometryError("the shoe pitch is too long for the track path")


def _march(path: TrackPath, s0: float, pitch: float, n: int) -> np.ndarray:
    """Arc-length positions of n+1 pins spaced by chord ``pitch`` from s0."""
    s = np.empty(n + 1)
    s[0] = s0
    P = path.point(s0)
    for k in range(n):
        s[k + 1] = _next_on_path(path, s[k], P, pitch)
        P = path.point(s[k + 1])
    return s


def _gap(layout: SideLayout, shift: float, pitch: float, n: int, s0_frac: float):
    path = track_path(layout.circles(shift))
    s0 = s0_frac * path.length
    s = _march(path, s0, pitch, n)
    return (s[-1] - s0) - path.length, path, s


@dataclass
class ClosedTrack:
    """A closed loop of pins: positions (n, 2), idler shift along the tensioner axis."""

    n_shoes: int
    idler_shift: float
    path: TrackPath
    pins: np.ndarray
    closure_error: float

    @property
    def shoe_centers(self) -> np.ndarray:
        return 0.5 * (self.pins + np.roll(self.pins, -1, axis=0))

    @property
    def shoe_angles(self) -> np.ndarray:
        d = np.roll(self.pins, -1, axis=0) - self.pins
        return np.arctan2(d[:, 1], d[:, 0])


def close_track(layout: SideLayout, pitch: float, travel: float, count: int | None = None,
                s0_frac: float = 0.02, valid=None) -> ClosedTrack:
    """Find the shoe count (unless given) and the idler shift that close the loop exactly.

    ``valid(shift)`` may refuse idler positions (e.g. intersecting a road
    wheel); among the valid closures the smallest shift wins. Raises
    :class:`GeometryError` when no count closes within ``travel``.
    """
    path0 = track_path(layout.circles(0.0))
    est = path0.length / pitch
    if count is None:
        candidates = sorted({int(math.floor(est)) + k for k in range(-2, 4)}, key=lambda n: abs(n - est))
    else:
        candidates = [int(count)]
    best = None
    for n in candidates:
        g_lo = _gap(layout, -travel, pitch, n, s0_frac)[0]
        g_hi = _gap(layout, travel, pitch, n, s0_frac)[0]
        if g_lo * g_hi > 0:
            continue
        shift = brentq(lambda d: _gap(layout, d, pitch, n, s0_frac)[0], -travel, travel, xtol=1e-13)
        if valid is not None and not valid(shift):
            continue
        if best is None or abs(shift) < abs(best[1]):
            best = (n, shift)
    if best is None:
        what = f"{count} shoes" if count is not None else f"any shoe count near {est:.1f}"
        raise GeometryError(
            f"the track cannot close with {what} of pitch {pitch} m within the tensioner travel "
            f"±{travel} m (path length {path0.length:.4f} m at the nominal idler position)"
        )
    n, shift = best
    g, path, s = _gap(layout, shift, pitch, n, s0_frac)
    pins = np.array([path.point(x) for x in s[:-1]])
    err = float(np.linalg.norm(path.point(s[-1]) - pins[0]))
    return ClosedTrack(n, float(shift), path, pins, err)


def sprocket_mesh_angle(spec, layout: SideLayout, track: ClosedTrack, tol: float = 0.01) -> float:
    """Angle (rad, about +y) to turn the sprocket by so that its tooth gaps hold the pins on it.

    The sprocket's first tooth gap lies at angle 0 (from -z towards +x,
    :class:`~trackdyn.contact.shapes.Sprocket`); the closed loop puts its pins
    on the sprocket wherever the marching left them. Turned by the returned
    angle ``θ`` (a body rotation about +y maps a gap at body angle ``φ`` to
    ``φ - θ``) the gaps are centred on the circular mean of the pins' angles
    modulo the tooth pitch; 0 when no pin lies within ``tol`` of the assembly
    radius. Without it a loop of another shoe count can start with the teeth
    through its shoes (the M113's 63-shoe right track: pins 15.6-18.0 deg off
    the gaps, half a pitch is 18 deg, 30.5 mm of overlap and 3.7 MN at t = 0).
    """
    sp = spec.sprocket
    sx, sz = layout.sprocket
    d = track.pins - np.array([sx, sz])
    on = np.abs(np.hypot(d[:, 0], d[:, 1]) - sp.assembly_radius) < tol
    if not on.any():
        return 0.0
    phi = np.arctan2(d[on, 0], -d[on, 1])
    n = sp.n_teeth
    mean = math.atan2(float(np.sin(n * phi).sum()), float(np.cos(n * phi).sum())) / n
    return -mean


def check_layout(spec, layout: SideLayout, shift: float | None = 0.0, margin: float = 0.0) -> None:
    """Refuse intersecting wheels and a pitch the sprocket cannot engage.

    ``shift``: the idler's shift along its tensioner axis; ``None`` checks
    the wheels fixed to the chassis only.
    """
    circ = layout.circles_fixed if shift is None else layout.circles(shift)
    names = {"sprocket": "the sprocket", "idler": "the idler"}
    problems = []
    for a in range(len(circ)):
        for b in range(a + 1, len(circ)):
            A, B = circ[a], circ[b]
            d = math.dist(A.center, B.center)
            if d < A.radius + B.radius + margin:
                na = names.get(A.kind, f"{A.kind} {A.index}")
                nb = names.get(B.kind, f"{B.kind} {B.index}")
                problems.append(f"{na} intersects {nb} on the {layout.side} side: centres {d:.3f} m apart, "
                                f"radii {A.radius:.3f} + {B.radius:.3f} m (+{margin} m clearance)")
    sp = spec.sprocket
    chord = 2 * sp.assembly_radius * math.sin(math.pi / sp.n_teeth)
    if abs(chord - spec.shoes.pitch) > 0.05 * spec.shoes.pitch:
        problems.append(f"shoe pitch {spec.shoes.pitch} m does not fit the sprocket: its pin chord is "
                        f"{chord:.4f} m ({sp.n_teeth} teeth at assembly radius {sp.assembly_radius} m)")
    if problems:
        raise GeometryError("; ".join(problems))
