"""Vehicle model builder: a :class:`VehicleSpec` becomes a multibody :class:`Model` (``links`` fidelity).

Topology per side (Chrono::Vehicle vocabulary): sprocket on a revolute to the
chassis; idler on a revolute to a carrier that slides on a prismatic joint
(tensioner spring-damper with preload) or is welded (``locked``); trailing
arms on revolutes with a torsion bar (RSDA with jounce/rebound stops from a
table) and optional vertical dampers (TSDA with the force-velocity table);
road wheels on revolutes to the arms (a ``rigid`` suspension: on revolutes to
the chassis, no arms); support rollers on revolutes; single-pin shoes joined
by revolutes about y with a bending RSDA between neighbours; with a
``[seat]``, the seat on a prismatic joint and a spring-damper
(:mod:`trackdyn.assembly.seat`; its ``seat.rel.z`` provider in
``VehicleModel.providers``); with a ``[frame]`` (han-sander-mao Fig. 11), an
undercarriage frame per side (``left.frame``) on a revolute
(``left.frame.pivot``) and a spring-damper (``left.frame.spring``, eq. 35)
to the chassis, carrying the idler carrier and the road wheels (the lower
rollers) while the sprocket and the support (carrier) rollers stay on the
chassis.

Names follow DESIGN.md: ``chassis``, ``left.sprocket``, ``left.idler``,
``left.carrier``, ``left.arm[k]``, ``left.roadwheel[k]``, ``left.roller[k]``,
``left.shoe[k]``; joints ``left.shoe[k].pin`` (front pin of shoe k, joining
shoe k+1), ``left.arm[k].pivot``...; force elements ``left.arm[k].torsion``,
``left.damper[k]``, ``left.tensioner``, ``left.shoe[k].bending``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..math.quaternion import quat_from_axis_angle
from ..mbs import RSDA, TSDA, Fixed, Model, Prismatic, Revolute
from .geometry import ClosedTrack, GeometryError, check_layout, close_track, side_layout, sprocket_mesh_angle
from .seat import add_seat

__all__ = ["VehicleModel", "SideInfo", "build_vehicle", "vehicle_geometry", "VehicleGeometry", "add_sprocket",
           "add_running_gear", "add_frame", "frame_spring_force", "track_pins"]

SIDES = ("left", "right")


@dataclass
class VehicleGeometry:
    """Derived geometry of both sides: layouts, closed tracks, idler positions."""

    spec: object
    layouts: dict
    tracks: dict  # side -> ClosedTrack

    def n_shoes(self, side="left") -> int:
        return self.tracks[side].n_shoes

    def ground_z(self) -> float:
        """z of the lowest pad face at the design pose (vehicle frame)."""
        return min(float(t.pins[:, 1].min()) for t in self.tracks.values()) - self.spec.shoes.bottom


def vehicle_geometry(spec) -> VehicleGeometry:
    """Close both tracks and check the layout; :class:`GeometryError` names what is wrong."""
    layouts, tracks = {}, {}
    for side in SIDES:
        lay = side_layout(spec, side)
        check_layout(spec, lay, shift=None)  # wheels fixed to the chassis

        def clear(shift, lay=lay):
            try:
                check_layout(spec, lay, shift)
                return True
            except GeometryError:
                return False

        try:
            tracks[side] = close_track(lay, spec.shoes.pitch, spec.idler.tensioner.travel, spec.shoes.count,
                                       valid=clear)
        except GeometryError as err:
            if not clear(0.0):  # say what collides rather than that the loop does not close
                try:
                    check_layout(spec, lay, 0.0)
                except GeometryError as err2:
                    raise GeometryError(f"{err2}; no closing idler position within the tensioner travel "
                                        "avoids it") from None
            raise err
        layouts[side] = lay
    return VehicleGeometry(spec, layouts, tracks)


@dataclass
class SideInfo:
    """Body names and derived values of one side."""

    name: str
    y: float
    sprocket: str
    idler: str
    carrier: str
    arms: list[str]
    wheels: list[str]
    rollers: list[str]
    shoes: list[str]
    pins: list[str]
    tensioner: str | None
    idler_shift: float
    anchor: np.ndarray  # tensioner anchor, vehicle frame (x, y, z)
    frame: str | None = None  # the undercarriage frame ([frame]): idler carrier and road wheels ride on it


@dataclass
class VehicleModel:
    """A built vehicle: the multibody model plus everything needed to drive and record it."""

    spec: object
    model: Model
    geometry: VehicleGeometry
    sides: dict[str, SideInfo]
    origin: np.ndarray           # world position of the vehicle frame origin
    driver_point: np.ndarray     # driver position in the chassis body frame
    providers: list = field(default_factory=list)

    @property
    def chassis(self) -> str:
        return "chassis"


def _rot_y(alpha: float) -> np.ndarray:
    """Quaternion turning body x to the in-plane direction at angle alpha (from +x towards +z)."""
    return quat_from_axis_angle([0.0, 1.0, 0.0], -alpha)


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


def build_vehicle(spec, origin=(0.0, 0.0, 0.0), geometry: VehicleGeometry | None = None,
                  target_tension: float | None = None, speed: float = 0.0, pin_joints: bool = True) -> VehicleModel:
    """Assemble the ``links`` model of ``spec``.

    Parameters
    ----------
    origin : (x, y, z)
        World position of the vehicle frame origin (sprocket axis, centreline).
        Use :func:`place_on_ground` to put the tracks on a terrain.
    target_tension : float, optional
        Initial track tension, N, that the tensioner springs hold at the
        assembled idler position (default: the spec's tensioner target); the
        spring anchor is placed so that its force balances both strands.
    speed : float
        Initial forward speed, m/s: the chassis and every body move with it,
        wheels and sprockets spin, and the track circulates around its loop
        with the bottom strand at rest on the ground.
    pin_joints : bool
        Join the shoes by ideal revolutes (default). False leaves the pins
        out (their names stay in ``SideInfo.pins``) for a fidelity that joins
        the shoes by forces instead (``penalty``, ``bushing``): see
        :func:`track_pins` for each pin's bodies, point and axis.
    """
    geo = geometry or vehicle_geometry(spec)
    O = np.asarray(origin, dtype=float)
    m = Model()

    def W(x, y, z):  # vehicle frame -> world (no heading yet)
        return O + np.array([x, y, z])

    ch = spec.chassis
    chassis = m.add_body("chassis", mass=ch.mass, inertia=list(ch.inertia), pos=W(*ch.com))
    sides = {}
    shoes = spec.shoes
    T_target = spec.idler.tensioner.target_tension if target_tension is None else float(target_tension)
    for side in SIDES:
        y = spec.tracks.lateral_offset * (1 if side == "left" else -1)
        lay = geo.layouts[side]
        trk: ClosedTrack = geo.tracks[side]
        p = f"{side}."
        Y = np.array([0.0, 1.0, 0.0])
        sprocket = add_sprocket(m, chassis, spec, lay, p, y, W, angle=sprocket_mesh_angle(spec, lay, trk))
        mount = chassis if spec.frame is None else add_frame(m, chassis, spec, p, y, W)
        # idler on its carrier
        ix, iz = lay.idler_center(trk.idler_shift)
        ten = spec.idler.tensioner
        carrier = m.add_body(p + "carrier", mass=ten.carrier_mass,
                             inertia=[0.01 * ten.carrier_mass] * 3, pos=W(ix, y, iz))
        idler = m.add_body(p + "idler", mass=spec.idler.mass, inertia=list(spec.idler.inertia), pos=W(ix, y, iz))
        m.add_joint(Revolute(carrier, idler, point=W(ix, y, iz), axis=Y, name=p + "idler.axle"))
        direction = np.array([ten.direction[0], 0.0, ten.direction[1]])
        anchor = None
        tname = None
        if ten.mode == "locked":
            m.add_joint(Fixed(mount, carrier, point=W(ix, y, iz), name=p + "carrier.lock"))
        else:
            m.add_joint(Prismatic(mount, carrier, point=W(ix, y, iz), axis=direction, name=p + "carrier.slide"))
            # spring anchor so that the spring force balances the strands at the target tension
            push = _strand_push(trk, (ix, iz), ten.direction) * T_target
            length = ten.free_length + (ten.preload - push) / ten.stiffness if ten.stiffness > 0 else ten.free_length
            if not length > 0.05:
                raise GeometryError(f"tensioner: the spring would need length {length:.3f} m to hold "
                                    f"{T_target:.0f} N of track tension")
            anchor = np.array([ix, y, iz]) - length * direction
            tname = p + "tensioner"
            m.add_force(TSDA(mount, carrier, point_a=W(*anchor), point_b=W(ix, y, iz), stiffness=ten.stiffness,
                             damping=ten.damping, free_length=ten.free_length, actuation=ten.preload, name=tname))
        # suspension and support rollers
        arms, wheels, rollers = add_running_gear(m, chassis, spec, lay, p, y, W,
                                                 wheel_mount=None if mount is chassis else mount)
        # shoes
        n = trk.n_shoes
        centers = trk.shoe_centers
        angles = trk.shoe_angles
        shoe_bodies = []
        for k in range(n):
            b = m.add_body(f"{p}shoe[{k}]", mass=shoes.mass, inertia=list(shoes.inertia),
                           pos=W(centers[k, 0], y, centers[k, 1]), quat=_rot_y(angles[k]))
            shoe_bodies.append(b)
        pins = []
        for k in range(n):
            a, b = shoe_bodies[k], shoe_bodies[(k + 1) % n]
            px_, pz_ = trk.pins[(k + 1) % n]
            if pin_joints:
                m.add_joint(Revolute(a, b, point=W(px_, y, pz_), axis=Y, name=f"{p}shoe[{k}].pin"))
            pins.append(f"{p}shoe[{k}].pin")
            if shoes.bending_stiffness > 0 or shoes.bending_damping > 0:
                m.add_force(RSDA(a, b, axis=Y, stiffness=shoes.bending_stiffness, damping=shoes.bending_damping,
                                 free_angle=_wrap(angles[(k + 1) % n] - angles[k]), name=f"{p}shoe[{k}].bending"))
        sides[side] = SideInfo(side, y, sprocket.name, idler.name, carrier.name, arms, wheels, rollers,
                               [s.name for s in shoe_bodies], pins, tname, trk.idler_shift,
                               anchor if anchor is not None else np.full(3, np.nan),
                               frame=None if mount is chassis else mount.name)
    m.add_marker("driver", chassis, W(*ch.driver_position))
    drv = np.asarray(ch.driver_position) - np.asarray(ch.com)
    seat = add_seat(m, chassis, spec, W, ch.com)  # spec.seat: body "seat" on a prismatic + TSDA (assembly/seat.py)
    if speed:
        _set_speed(m, spec, geo, sides, float(speed))
    return VehicleModel(spec, m, geo, sides, O, drv, providers=[seat] if seat is not None else [])


def track_pins(vm: VehicleModel) -> list:
    """``(name, shoe_a, shoe_b, point, axis)`` of every track pin of a built vehicle, world frame at the
    assembled pose: the pin ``left.shoe[k].pin`` joins shoe k to shoe k+1 at their shared pin point about
    the lateral axis (the revolute :func:`build_vehicle` adds unless ``pin_joints`` is false)."""
    out = []
    m = vm.model
    for side, info in vm.sides.items():
        trk = vm.geometry.tracks[side]
        n = len(info.shoes)
        for k in range(n):
            px_, pz_ = trk.pins[(k + 1) % n]
            point = vm.origin + np.array([px_, info.y, pz_])
            out.append((info.pins[k], m.body(info.shoes[k]), m.body(info.shoes[(k + 1) % n]), point,
                        np.array([0.0, 1.0, 0.0])))
    return out


def add_sprocket(m: Model, chassis, spec, lay, p: str, y: float, W, inertia=None, tree: dict | None = None,
                 angle: float = 0.0):
    """The side's sprocket on a revolute (its axle) to the chassis at ``lay.sprocket``; returns the body.

    ``inertia`` (3,) replaces the spec's (the massless model adds its track
    loop's circulation); ``tree`` as in :func:`add_running_gear`; ``angle``
    (rad, about +y) turns the sprocket so that its teeth mesh with the
    track's pins (:func:`~trackdyn.assembly.geometry.sprocket_mesh_angle`).
    Shared by both builders, like the running gear.
    """
    Y = np.array([0.0, 1.0, 0.0])
    sx, sz = lay.sprocket
    J = list(spec.sprocket.inertia) if inertia is None else list(inertia)
    sprocket = m.add_body(p + "sprocket", mass=spec.sprocket.mass, inertia=J, pos=W(sx, y, sz),
                          quat=quat_from_axis_angle(Y, angle))
    m.add_joint(Revolute(chassis, sprocket, point=W(sx, y, sz), axis=Y, name=p + "sprocket.axle"))
    if tree is not None:
        tree[sprocket.name] = ("chassis", W(sx, y, sz), Y, "dof")
    return sprocket


def add_running_gear(m: Model, chassis, spec, lay, p: str, y: float, W, tree: dict | None = None,
                     wheel_mount=None):
    """Road-wheel stations and support rollers of one side; returns (arms, wheels, rollers) names.

    Trailing arms on revolutes to the chassis with the torsion bar (RSDA,
    jounce/rebound table) and optional vertical dampers (TSDA, force-velocity
    table); road wheels on revolutes to the arms — or, for a ``rigid``
    suspension (agapov-kovalev-pogorelov Fig. 10a), on revolutes to the
    chassis; rollers on revolutes to the chassis. ``lay`` is the side's
    layout (pivots, wheels, rollers in the vehicle frame), ``W`` maps vehicle
    to world coordinates. With ``tree`` (the massless model's relative
    coordinates) each new body's parent, joint point, axis and role is added.
    Shared by the link-track and the massless builders so that both levels of
    fidelity have the same running gear. ``wheel_mount`` (a body): the road
    wheels of a rigid suspension turn on it instead of the chassis (the
    undercarriage frame of a ``[frame]``); the rollers stay on the chassis.
    """
    Y = np.array([0.0, 1.0, 0.0])
    sus = spec.suspension
    if wheel_mount is not None and (tree is not None or sus.type != "rigid"):
        raise ValueError("add_running_gear: wheel_mount takes the road wheels of a rigid suspension, outside a tree")
    rail = chassis if wheel_mount is None else wheel_mount
    arms, wheels = [], []
    sgn = -1.0 if sus.trailing else 1.0
    for k, ((px, pz), (wx, wz), st) in enumerate(zip(lay.pivots, lay.wheels, sus.stations)):
        if sus.type == "rigid":
            # rigid rail: the wheel's axle is fixed to the hull
            wheel = m.add_body(f"{p}roadwheel[{k}]", mass=sus.wheel_mass, inertia=list(sus.wheel_inertia),
                               pos=W(wx, y, wz))
            m.add_joint(Revolute(rail, wheel, point=W(wx, y, wz), axis=Y, name=f"{p}roadwheel[{k}].axle"))
            if tree is not None:
                tree[wheel.name] = ("chassis", W(wx, y, wz), Y, "spin")
            wheels.append(wheel.name)
            continue
        ang = math.atan2(wz - pz, wx - px)
        arm = m.add_body(f"{p}arm[{k}]", mass=sus.arm_mass, inertia=list(sus.arm_inertia),
                         pos=W(0.5 * (px + wx), y, 0.5 * (pz + wz)), quat=_rot_y(ang))
        wheel = m.add_body(f"{p}roadwheel[{k}]", mass=sus.wheel_mass, inertia=list(sus.wheel_inertia),
                           pos=W(wx, y, wz))
        if sus.locked:
            if tree is not None:
                raise ValueError("suspension.locked = true: the massless fidelity's tree has no welded arms; "
                                 "use suspension.type = 'rigid' there")
            # no suspension (wallin-shabana-2013 Fig. 8): the arm welded at its design angle, no bar, no damper
            m.add_joint(Fixed(chassis, arm, point=W(px, y, pz), name=f"{p}arm[{k}].pivot"))
            m.add_joint(Revolute(arm, wheel, point=W(wx, y, wz), axis=Y, name=f"{p}roadwheel[{k}].axle"))
            arms.append(arm.name)
            wheels.append(wheel.name)
            continue
        m.add_joint(Revolute(chassis, arm, point=W(px, y, pz), axis=Y, name=f"{p}arm[{k}].pivot"))
        m.add_joint(Revolute(arm, wheel, point=W(wx, y, wz), axis=Y, name=f"{p}roadwheel[{k}].axle"))
        if tree is not None:
            tree[arm.name] = ("chassis", W(px, y, pz), Y, "dof")
            tree[wheel.name] = (arm.name, W(wx, y, wz), Y, "spin")
        m.add_force(RSDA(chassis, arm, axis=Y, spring_table=_torsion_table(sus, sgn), name=f"{p}arm[{k}].torsion"))
        if st.damper:
            d = sus.damper
            m.add_force(TSDA(chassis, arm, point_a=W(wx, y, wz + d.length), point_b=W(wx, y, wz),
                             damper_table=_damper_table(d), free_length=d.length, name=f"{p}damper[{k}]"))
        arms.append(arm.name)
        wheels.append(wheel.name)
    rollers = []
    ro = spec.rollers
    for k, (rx, rz) in enumerate(lay.rollers):
        r = m.add_body(f"{p}roller[{k}]", mass=ro.mass, inertia=list(ro.inertia), pos=W(rx, y, rz))
        m.add_joint(Revolute(chassis, r, point=W(rx, y, rz), axis=Y, name=f"{p}roller[{k}].axle"))
        if tree is not None:
            tree[r.name] = ("chassis", W(rx, y, rz), Y, "spin")
        rollers.append(r.name)
    return arms, wheels, rollers

def add_frame(m: Model, chassis, spec, p: str, y: float, W):
    """The side's undercarriage frame (``[frame]``, han-sander-mao Fig. 11) on a revolute about the lateral
    axis through ``frame.pivot`` and a spring-damper (eq. 35) from ``frame.spring_chassis`` to
    ``frame.spring_frame``; returns the body.

    The spring's free length is its assembled length plus the compression at which, on level ground, the
    two springs hold the moment about the pivot of the weight on the chassis side (the paper's S2: chassis,
    both sprockets and carrier rollers, the seat); the track's pull on the sprockets is not in that balance,
    so the settled frame turns a little from its assembled angle (:func:`frame_spring_force`). With
    ``frame.locked`` the frame is welded to the chassis at the pivot instead (no spring).
    """
    fr = spec.frame
    Y = np.array([0.0, 1.0, 0.0])
    frame = m.add_body(p + "frame", mass=fr.mass, inertia=list(fr.inertia), pos=W(fr.com[0], y, fr.com[1]))
    if fr.locked:  # one rigid undercarriage (the track subsystem alone): welded at the pivot, no spring
        m.add_joint(Fixed(chassis, frame, point=W(fr.pivot[0], y, fr.pivot[1]), name=p + "frame.pivot"))
        return frame
    m.add_joint(Revolute(chassis, frame, point=W(fr.pivot[0], y, fr.pivot[1]), axis=Y, name=p + "frame.pivot"))
    a2 = np.asarray(fr.spring_chassis, float)
    a1 = np.asarray(fr.spring_frame, float)
    force = frame_spring_force(spec)
    free = float(np.linalg.norm(a2 - a1)) + force / fr.stiffness
    m.add_force(TSDA(chassis, frame, point_a=W(a2[0], y, a2[1]), point_b=W(a1[0], y, a1[1]), stiffness=fr.stiffness,
                     damping=fr.damping, free_length=free, name=p + "frame.spring"))
    return frame


def frame_spring_force(spec) -> float:
    """Compression (N) of each side's frame spring that holds the chassis side's weight moment about the pivot
    on level ground (see :func:`add_frame`); :class:`GeometryError` if the spring would have to pull."""
    fr = spec.frame
    g = 9.81
    masses = [(spec.chassis.mass, spec.chassis.com[0], spec.chassis.com[2])]
    masses += [(2 * spec.sprocket.mass, *spec.sprocket.location)]
    masses += [(2 * spec.rollers.mass, x, z) for x, z in spec.rollers.locations]
    if spec.seat is not None:
        masses.append((spec.seat.mass, spec.seat.position[0], spec.seat.position[2]))
    px, pz = fr.pivot
    m_grav = sum(-mass * g * (x - px) for mass, x, z in masses)  # moment about +y... as the 2D cross (x, z)
    a2 = np.asarray(fr.spring_chassis, float)
    u = a2 - np.asarray(fr.spring_frame, float)
    u /= np.linalg.norm(u)
    arm = (a2[0] - px) * u[1] - (a2[1] - pz) * u[0]  # cross(A2 - P, u) in the (x, z) plane
    if abs(arm) < 1e-9:
        raise GeometryError("frame: the spring-damper's line passes through the pivot: it holds no moment")
    force = -m_grav / (2.0 * arm)
    if not force > 0:
        raise GeometryError(f"frame: the spring would have to pull ({force:.4g} N) to hold the chassis side's weight "
                            f"about the pivot {fr.pivot}: move the spring to the other side of the pivot")
    return float(force)


def _set_speed(m: Model, spec, geo: VehicleGeometry, sides, V: float):
    """Rolling initial velocities: forward V, wheels spinning, track circulating (bottom strand at rest)."""
    Vx = np.array([V, 0.0, 0.0])
    for name in m.body_names:
        m.set_initial_pose(name, vel=Vx)
    sus = spec.suspension
    for side, info in sides.items():
        trk = geo.tracks[side]
        m.set_initial_pose(info.sprocket, omega=[0.0, V / spec.sprocket.assembly_radius, 0.0])
        m.set_initial_pose(info.idler, omega=[0.0, V / spec.idler.radius, 0.0])
        for w in info.wheels:
            m.set_initial_pose(w, omega=[0.0, V / sus.wheel_radius, 0.0])
        for r in info.rollers:
            m.set_initial_pose(r, omega=[0.0, -V / spec.rollers.radius, 0.0])
        if not trk.n_shoes:  # no shoe bodies (the ancf chain sets its own: ancf_track.chain_velocities)
            continue
        # pins move backwards along the loop at speed V relative to the chassis (clockwise seen from +y)
        dt = 1e-6
        path = trk.path
        s_now = _pin_arclengths(trk)
        ahead = np.array([path.point(x - V * dt) for x in s_now])
        n = trk.n_shoes
        c0, c1 = trk.shoe_centers, 0.5 * (ahead + np.roll(ahead, -1, axis=0))
        d1 = np.roll(ahead, -1, axis=0) - ahead
        a1 = np.arctan2(d1[:, 1], d1[:, 0])
        for k in range(n):
            vrel = (c1[k] - c0[k]) / dt
            wy = -_wrap(a1[k] - trk.shoe_angles[k]) / dt
            m.set_initial_pose(info.shoes[k], vel=[V + vrel[0], 0.0, vrel[1]], omega=[0.0, wy, 0.0])


def _pin_arclengths(trk: ClosedTrack) -> np.ndarray:
    """Arc length of every pin on the closed path (pins lie on the path)."""
    from scipy.optimize import minimize_scalar

    path = trk.path
    out = np.empty(trk.n_shoes)
    grid = np.linspace(0.0, path.length, 4000, endpoint=False)
    pts = np.array([path.point(x) for x in grid])
    for k, p in enumerate(trk.pins):
        j = int(np.argmin(np.sum((pts - p) ** 2, axis=1)))
        h = path.length / 4000
        res = minimize_scalar(lambda x: float(np.sum((path.point(x) - p) ** 2)), bounds=(grid[j] - h, grid[j] + h),
                              method="bounded", options={"xatol": 1e-12})
        out[k] = res.x
    return out


def _strand_push(trk: ClosedTrack, center, direction) -> float:
    """Force along ``direction`` on the idler per unit track tension (two strands leaving it)."""
    pins = trk.pins
    c = np.asarray(center)
    dist = np.linalg.norm(pins - c, axis=1)
    # the pins wrapped on the idler are the ones at the idler path radius; strands leave at the ends
    on = np.nonzero(np.abs(dist - dist.min()) < 1e-6 + 0.02 * dist.min())[0]
    n = len(pins)
    idx = set(on.tolist())
    ends = [k for k in idx if (k - 1) % n not in idx] + [k for k in idx if (k + 1) % n not in idx]
    if len(ends) < 2:
        return 2.0
    k_in = [k for k in idx if (k - 1) % n not in idx][0]
    k_out = [k for k in idx if (k + 1) % n not in idx][0]
    u_in = pins[(k_in - 1) % n] - pins[k_in]
    u_out = pins[(k_out + 1) % n] - pins[k_out]
    u_in /= np.linalg.norm(u_in)
    u_out /= np.linalg.norm(u_out)
    d = np.asarray(direction)
    # strands pull the idler towards where they go; the tensioner pushes along d against them
    return float(-(u_in + u_out) @ d)


def _torsion_table(sus, sgn: float):
    """RSDA spring table T_s(φ) of a torsion bar; φ is the arm's rotation about +y from the design pose.

    The arm angle below horizontal is θ = θ_d + sgn φ... with sgn = -1 for a
    trailing arm (rotating about +y lifts its wheel). The bar resists
    θ - θ_free with the stiffness between the stops and the stop stiffness
    beyond; as an RSDA the torque on the arm about +y is -T_s(φ).
    """
    t = sus.torsion
    th_d = sus.design_angle

    def torque_theta(th):  # restoring torque pushing θ back to θ_free, positive when θ < θ_free
        T = t.stiffness * (t.free_angle - th)
        if th < t.jounce_limit:
            T += (t.jounce_stiffness - t.stiffness) * (t.jounce_limit - th)
        if th > t.rebound_limit:
            T -= (t.rebound_stiffness - t.stiffness) * (th - t.rebound_limit)
        return T

    # the bar's torque on the arm, about +y: increasing θ is rotation -sgn... : dθ = sgn·dφ with sgn = -1 trailing
    # restoring torque along +θ means a torque about +y of sgn * T; the RSDA applies -T_s → T_s = -sgn * T(θ)
    phis = []
    for th in (t.jounce_limit, t.rebound_limit):
        phis.append((th - th_d) / sgn)
    lo, hi = min(phis), max(phis)
    pts = [lo - 1.0, lo, hi, hi + 1.0]
    return [[ph, -sgn * torque_theta(th_d + sgn * ph)] for ph in pts]


def _damper_table(d):
    tab = [list(p) for p in d.table]
    if d.high_speed_damping:
        (v0, f0), (v1, f1) = tab[0], tab[-1]
        tab = [[v0 - 10.0, f0 - 10.0 * d.high_speed_damping]] + tab + [[v1 + 10.0, f1 + 10.0 * d.high_speed_damping]]
    return tab
