"""The ``massless`` model of a :class:`VehicleSpec`: the links model's bodies without shoes, plus the track layout.

Bodies and names as in :mod:`trackdyn.assembly.builder` (``chassis``,
``left.sprocket``, ``left.idler``, ``left.arm[k]``, ``left.roadwheel[k]``,
``left.roller[k]``), joints and force elements too (torsion bars with their
stops, dampers), except:

- no shoe bodies: the track is the force model of :mod:`trackdyn.contact.massless.track`;
- the idler turns on an axle fixed to the hull at its assembled position
  (the closed-track idler shift of the links model); there is no carrier and
  no tensioner — a massless track carries no tension (``left.carrier`` is
  absent);
- with ``track_mass`` (default) the mass of each track loop (its shoes at
  their assembled places) is lumped into the hull — the chassis body's mass,
  centre of mass and inertia are those of hull plus tracks — and its
  circulation energy ``m_track V_t^2 / 2`` into the sprocket's axial inertia
  (``+ m_track r_s^2``, a thin ring).

:class:`TrackLayout` holds what the track force model needs: the contact
wheels of each side (sprocket, idler, road wheels) with their radii to the
track's outer face, the adjacent pairs along the ground-facing runs (where
factitious irregularities may form), the track planes (Gauss points across
the track width, §3.5 Fig. 11) and the hull's convex parts (a box as its 8
corners, a polyhedron as its vertices).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .builder import SIDES, SideInfo, VehicleGeometry, add_running_gear, add_sprocket, vehicle_geometry
from .geometry import Circle, track_path
from ..mbs import Model, Revolute
from ..spec.vehicle import ConvexSpec

__all__ = ["MasslessVehicle", "TrackLayout", "build_massless", "gauss_offsets"]


def gauss_offsets(n: int, width: float):
    """Lateral offsets (m) and weights of ``n`` track planes across a track of ``width`` (Gauss-Legendre)."""
    if n == 1:
        return np.array([0.0]), np.array([1.0])
    if n == 2:
        return np.array([-1.0, 1.0]) * width / (2.0 * math.sqrt(3.0)), np.array([0.5, 0.5])
    if n == 3:
        return np.array([-1.0, 0.0, 1.0]) * width / 2.0 * math.sqrt(0.6), np.array([5.0, 8.0, 5.0]) / 18.0
    raise ValueError(f"massless track: planes must be 1, 2 or 3 per track, got {n!r}")


@dataclass
class TrackLayout:
    """Contact wheels, pairs, planes and hull parts (vehicle frame, design pose)."""

    wheel_body: list = field(default_factory=list)      # body names
    wheel_side: list = field(default_factory=list)      # 0 left, 1 right
    wheel_radius: list = field(default_factory=list)    # to the track's outer face, m
    wheel_kind: list = field(default_factory=list)      # "sprocket", "idler", "roadwheel"
    wheel_y: list = field(default_factory=list)         # lateral position of the wheel's track centre plane, m
    pairs: list = field(default_factory=list)           # (wheel index A, wheel index B), track path order
    plane_side: list = field(default_factory=list)
    plane_y: list = field(default_factory=list)         # lateral position, vehicle frame, m
    plane_weight: list = field(default_factory=list)
    sprocket_radius: float = 0.0                        # pitch radius: track speed = r_s (ω_s - ω_hull)
    hull_parts: list = field(default_factory=list)      # convex hull parts: vertices (n, 3), vehicle frame


@dataclass
class MasslessVehicle:
    """A built massless vehicle: the model, its geometry and the track layout (a ``VehicleModel`` look-alike)."""

    spec: object
    model: Model
    geometry: VehicleGeometry
    sides: dict
    origin: np.ndarray
    driver_point: np.ndarray
    layout: TrackLayout
    com: np.ndarray                     # chassis body centre of mass, vehicle frame (with the tracks' mass)
    track_mass: dict                    # side -> kg lumped into the hull
    tree: dict = field(default_factory=dict)  # body -> (parent, pivot (3,), axis (3,), "dof" | "spin"), world
    providers: list = field(default_factory=list)

    @property
    def chassis(self) -> str:
        return "chassis"


def _ring_inertia(m: float, r: float):
    return np.array([0.5 * m * r * r, m * r * r, 0.5 * m * r * r])


def build_massless(spec, origin=(0.0, 0.0, 0.0), geometry: VehicleGeometry | None = None, speed: float = 0.0,
                   planes: int = 2, track_mass: bool = True) -> MasslessVehicle:
    """Assemble the massless model of ``spec`` with the vehicle frame origin at ``origin`` (world, m).

    ``speed`` (m/s): rolling start — every body moves forward, wheels spin
    at ``speed / r``, the sprocket at ``speed / r_s``.
    """
    if getattr(spec, "seat", None) is not None:
        # its real-time stepper's depth-1 tree has revolute joints only (no prismatic seat): refused, not dropped
        raise ValueError(f"vehicle {spec.name!r}: seat = {spec.seat.model_dump()}: the massless fidelity has no "
                         "seat yet (its real-time tree stepper turns revolute joints only); run the links, "
                         "penalty or bushing fidelity, or remove [seat]")
    if getattr(spec, "frame", None) is not None:
        raise ValueError(f"vehicle {spec.name!r}: [frame] (an undercarriage frame on a pivot and a spring): the "
                         "massless fidelity's tree has no frame body yet; run the links fidelity")
    geo = geometry or vehicle_geometry(spec)
    O = np.asarray(origin, dtype=float)
    sus, sh = spec.suspension, spec.shoes
    ch = spec.chassis
    offsets, weights = gauss_offsets(int(planes), sh.width)

    def W(x, y, z):
        return O + np.array([x, y, z])

    # hull + lumped track loops
    mass = ch.mass
    com = np.asarray(ch.com, float)
    J = np.diag(ch.inertia).astype(float)
    tmass = {}
    if track_mass:
        pts, ms = [com], [mass]
        Js = [J]
        for side in SIDES:
            y = spec.tracks.lateral_offset * (1 if side == "left" else -1)
            trk = geo.tracks[side]
            c = trk.shoe_centers
            tmass[side] = sh.mass * len(c)
            for x, z in c:
                pts.append(np.array([x, y, z]))
                ms.append(sh.mass)
                Js.append(np.diag(sh.inertia))
        pts = np.array(pts)
        ms = np.array(ms)
        mass = float(ms.sum())
        com = (ms[:, None] * pts).sum(axis=0) / mass
        Jt = np.zeros((3, 3))
        for p, mk, Jk in zip(pts, ms, Js):
            d = p - com
            Jt += Jk + mk * (d @ d * np.eye(3) - np.outer(d, d))
        J = Jt
    m = Model()
    chassis = m.add_body("chassis", mass=mass, inertia=J, pos=W(*com))
    Y = np.array([0.0, 1.0, 0.0])
    sides, tree = {}, {}
    lay = TrackLayout(sprocket_radius=float(spec.sprocket.assembly_radius))
    for part in ch.hull:
        if isinstance(part, ConvexSpec):
            lay.hull_parts.append(np.asarray(part.vertices, float))
        else:
            c, h = np.asarray(part.center, float), 0.5 * np.asarray(part.size, float)
            lay.hull_parts.append(np.array([c + h * (sx, sy, sz) for sx in (-1, 1) for sy in (-1, 1)
                                            for sz in (-1, 1)]))
    R_out = sh.top + sh.bottom
    for si, side in enumerate(SIDES):
        y = spec.tracks.lateral_offset * (1 if side == "left" else -1)
        lyt = geo.layouts[side]
        trk = geo.tracks[side]
        p = f"{side}."
        sx, sz = lyt.sprocket
        Isp = np.array(spec.sprocket.inertia, float)
        if track_mass:
            Isp = Isp + _ring_inertia(tmass[side], spec.sprocket.assembly_radius)
        sprocket = add_sprocket(m, chassis, spec, lyt, p, y, W, inertia=Isp, tree=tree)
        ix, iz = lyt.idler_center(trk.idler_shift)
        idler = m.add_body(p + "idler", mass=spec.idler.mass, inertia=list(spec.idler.inertia), pos=W(ix, y, iz))
        m.add_joint(Revolute(chassis, idler, point=W(ix, y, iz), axis=Y, name=p + "idler.axle"))
        tree[idler.name] = ("chassis", W(ix, y, iz), Y, "spin")
        arms, wheels, rollers = add_running_gear(m, chassis, spec, lyt, p, y, W, tree)
        sides[side] = SideInfo(side, y, sprocket.name, idler.name, None, arms, wheels, rollers, [], [], None,
                               trk.idler_shift, np.full(3, np.nan))
        # contact wheels: radius to the track's outer (ground) face
        circles = [Circle("sprocket", 0, (sx, sz), spec.sprocket.outer_radius,
                          spec.sprocket.assembly_radius + sh.bottom),
                   Circle("idler", 0, (ix, iz), spec.idler.radius, spec.idler.radius + R_out)]
        circles += [Circle("roadwheel", k, tuple(w), sus.wheel_radius, sus.wheel_radius + R_out)
                    for k, w in enumerate(lyt.wheels)]
        names = [sprocket.name, idler.name] + wheels
        base = len(lay.wheel_body)
        for c, nm in zip(circles, names):
            lay.wheel_body.append(nm)
            lay.wheel_side.append(si)
            lay.wheel_radius.append(c.path_radius)
            lay.wheel_kind.append(c.kind)
            lay.wheel_y.append(y)
        for a, b in _ground_pairs(circles):
            lay.pairs.append((base + a, base + b))
        for off, wt in zip(offsets, weights):
            lay.plane_side.append(si)
            lay.plane_y.append(y + off)
            lay.plane_weight.append(wt)
    m.add_marker("driver", chassis, W(*ch.driver_position))
    drv = np.asarray(ch.driver_position) - com
    vm = MasslessVehicle(spec, m, geo, sides, O, drv, lay, com, tmass, tree)
    if speed:
        _set_speed(m, spec, vm, float(speed))
    return vm


def _ground_pairs(circles):
    """Adjacent circles (indices, in track path order) along the runs of the track that face the ground.

    The track wraps the convex hull of the circles (:func:`trackdyn.assembly.geometry.track_path`);
    on each straight run whose outward normal does not point up, every circle
    touching the run's line belongs to it, in order along the run.
    """
    path = track_path(circles)
    pairs = []
    for seg in path.segments:
        if seg[0] != "line":
            continue
        p0, p1, L = seg[1], seg[2], seg[3]
        if L <= 0:
            continue
        d = (p1 - p0) / L
        nrm = np.array([d[1], -d[0]])  # outward (the path is counter-clockwise)
        if nrm[1] > 0.3:
            continue  # the upper run
        on = []
        for k, c in enumerate(circles):
            cc = np.asarray(c.center, float)
            dist = float((cc - p0) @ nrm)  # signed distance of the centre below the run line (negative inside)
            if abs(-dist - c.path_radius) < 1e-6 * max(1.0, c.path_radius):
                s = float((cc - p0) @ d)
                if -c.path_radius - 1e-9 <= s <= L + c.path_radius + 1e-9:
                    on.append((s, k))
        on.sort()
        for (_, a), (_, b) in zip(on, on[1:]):
            if (a, b) not in pairs:
                pairs.append((a, b))
    return pairs


def _set_speed(m: Model, spec, vm: MasslessVehicle, V: float):
    Vx = np.array([V, 0.0, 0.0])
    for name in m.body_names:
        m.set_initial_pose(name, vel=Vx)
    sus, sh = spec.suspension, spec.shoes
    for info in vm.sides.values():
        m.set_initial_pose(info.sprocket, omega=[0.0, V / spec.sprocket.assembly_radius, 0.0])
        m.set_initial_pose(info.idler, omega=[0.0, V / (spec.idler.radius + sh.top), 0.0])
        for w in info.wheels:
            m.set_initial_pose(w, omega=[0.0, V / (sus.wheel_radius + sh.top), 0.0])
        for r in info.rollers:
            m.set_initial_pose(r, omega=[0.0, -V / (spec.rollers.radius + sh.top), 0.0])
