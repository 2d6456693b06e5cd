"""Wheeled vehicle builder: a :class:`~trackdyn.spec.wheeled.WheeledVehicleSpec` becomes a multibody model.

Topology (kim-2012 Fig. 5-6, one corner per wheel, both sides): the chassis; per station and side a trailing
(or leading) arm on a revolute to the chassis (``left.arm[k].pivot``) with a linear rotational spring-damper
(``left.arm[k].spring``, RSDA) about the same axis; a wheel on a revolute at the arm's end
(``left.wheel[k].axle``). The tyres are a force provider on the scenario's terrain
(:class:`~trackdyn.contact.tyre.TerrainTyres`, with its Newton-matrix Jacobian); the driven wheels' motors act
between arm and wheel (:class:`~trackdyn.powertrain.WheelDrivetrain`, skid steering). Optionally the seat of
``[seat]`` (:mod:`trackdyn.assembly.seat`). The model is the absolute formulation's
(:class:`~trackdyn.formulations.absolute.AbsoluteSystem`), stepped by the generic integrators.

Names follow DESIGN.md: bodies ``chassis``, ``left.arm[k]``, ``left.wheel[k]`` (k from the front); the
marker ``driver``; the tyre's series ``left.wheel[k].tyre.force.z``..., the motors' ``left.wheel[k].torque``
and ``.speed``. A wheeled vehicle has no sprocket, idler, road wheel or shoe, so none of their series exist.

:func:`static_loads` gives the wheel loads of the design pose and :func:`spring_free_angles` the springs' free
angles that hold it; :func:`place_wheeled` puts the vehicle on a terrain in that pose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..math.quaternion import quat_from_axis_angle
from ..mbs import RSDA, Model, Revolute
from .seat import add_seat

__all__ = ["WheelSide", "WheeledVehicle", "build_wheeled", "static_loads", "spring_free_angles", "place_wheeled",
           "add_wheeled_visuals",
           "wheeled_extent", "check_wheeled_scenario", "build_wheeled_scenario", "G"]

SIDES = ("left", "right")
#: Gravity (m/s²) of the assembled models (trackdyn.Model's default)
G = 9.81


@dataclass
class WheelSide:
    """Body names and lateral position of one side. ``sprocket`` and ``idler`` are None and ``rollers``,
    ``shoes`` empty: what the event monitors look for on a tracked side is absent here."""

    name: str
    y: float
    arms: list
    wheels: list
    sprocket: str | None = None
    idler: str | None = None
    rollers: list = field(default_factory=list)
    shoes: list = field(default_factory=list)


@dataclass
class WheeledVehicle:
    """A built wheeled vehicle: the model, its sides and what the runner and the events read."""

    spec: object
    model: Model
    sides: dict
    origin: np.ndarray          # world position of the vehicle frame origin
    driver_point: np.ndarray    # driver position in the chassis body frame
    loads: np.ndarray           # static wheel loads of the design pose, N, (2, n): left, right
    free_angles: np.ndarray     # the springs' RSDA free angles, rad, (2, n)
    providers: list = field(default_factory=list)
    geometry: object = None     # no track geometry

    @property
    def chassis(self) -> str:
        return "chassis"

    @property
    def wheel_names(self) -> list:
        return [w for s in SIDES for w in self.sides[s].wheels]


def _sgn(wheels) -> float:
    """+1 leading, -1 trailing: the arm angle below horizontal is θ = design_angle + sgn φ for a rotation φ
    of the arm about +y (a trailing arm's wheel rises when the arm turns about +y)."""
    return -1.0 if wheels.trailing else 1.0


def _parts(spec):
    """Masses (kg) and positions (vehicle frame, m) of every body at the design pose, and the wheel centres."""
    w = spec.wheels
    centres = w.wheel_centres()
    masses, points = [spec.chassis.mass], [np.asarray(spec.chassis.com, float)]
    for side, y in (("left", w.lateral_offset), ("right", -w.lateral_offset)):
        for st, (wx, wz) in zip(w.stations, centres):
            px, pz = st.pivot
            masses += [w.arm_mass, w.mass]
            points += [np.array([0.5 * (px + wx), y, 0.5 * (pz + wz)]), np.array([wx, y, wz])]
    if spec.seat is not None:
        masses.append(spec.seat.mass)
        points.append(np.asarray(spec.seat.position, float))
    return np.array(masses), np.array(points), centres


def static_loads(spec, g: float = G) -> np.ndarray:
    """Vertical tyre loads (N) of the design pose on level ground, (2, n) for the left and right wheels.

    The vehicle's weight and its moments about x and y fix three combinations of the 2n loads; of the loads
    that satisfy them, these are the nearest to an equal share (least squares): with the centre of mass over
    the wheels' centroid, every wheel carries the weight over the wheel count. Raises ValueError when a load
    would not be positive (the centre of mass outside the wheelbase).
    """
    masses, points, centres = _parts(spec)
    W = float(masses.sum()) * g
    com = (masses[:, None] * points).sum(axis=0) / masses.sum()
    w = spec.wheels
    xs = np.array([c[0] for c in centres] * 2)
    ys = np.array([w.lateral_offset] * len(centres) + [-w.lateral_offset] * len(centres))
    n = len(xs)
    A = np.vstack([np.ones(n), xs, ys])
    b = np.array([W, W * com[0], W * com[1]])
    f0 = np.full(n, W / n)
    # min |f - f0| subject to A f = b (A has full rank with two stations or more)
    f = f0 + A.T @ np.linalg.lstsq(A @ A.T, b - A @ f0, rcond=None)[0]
    if len(centres) < 2:
        raise ValueError("wheels.stations: a vehicle on one wheel station per side cannot stand in pitch")
    if np.any(f <= 0.0):
        raise ValueError(f"wheels: the centre of mass (x = {com[0]:.4g}, y = {com[1]:.4g} m) lies outside the "
                         f"wheels' support (static loads {np.round(f, 1).tolist()} N)")
    return f.reshape(2, -1)


def spring_free_angles(spec, g: float = G) -> np.ndarray:
    """RSDA free angles (rad, the arm's rotation about +y from the design pose at zero spring torque), (2, n).

    ``wheels.free_angle`` given: ``(free_angle - design_angle) / sgn``. Absent: each arm in moment balance
    about its pivot at the design pose, under its tyre's static load (:func:`static_loads`) and the weights of
    arm and wheel: the spring's torque on the arm about +y, ``-k φ_free``... equals minus their moment.
    """
    w = spec.wheels
    sgn = _sgn(w)
    n = len(w.stations)
    if w.free_angle is not None:
        return np.full((2, n), (w.free_angle - w.design_angle) / sgn)
    F = static_loads(spec, g)
    out = np.zeros((2, n))
    for k, (st, (wx, wz)) in enumerate(zip(w.stations, w.wheel_centres())):
        px, pz = st.pivot
        ax = 0.5 * (px + wx)
        for s in range(2):
            # y-moment about the pivot of vertical forces F_z at x: -(x - px) F_z
            m_y = -(wx - px) * F[s, k] + (ax - px) * w.arm_mass * g + (wx - px) * w.mass * g
            # RSDA torque on the arm about +y at φ = 0: -k (0 - φ_free) = k φ_free = -m_y
            out[s, k] = -m_y / w.spring_stiffness
    return out


def _rot_y(alpha: float) -> np.ndarray:
    return quat_from_axis_angle([0.0, 1.0, 0.0], -alpha)


def build_wheeled(spec, origin=(0.0, 0.0, 0.0), speed: float = 0.0) -> WheeledVehicle:
    """Assemble ``spec`` at the design pose with the vehicle frame origin at ``origin`` (world, m).

    ``speed`` (m/s): every body moves forward at it and the wheels roll (ω = speed / radius).
    """
    w = spec.wheels
    O = np.asarray(origin, dtype=float)

    def W(x, y, z):
        return O + np.array([x, y, z])

    m = Model()
    ch = spec.chassis
    chassis = m.add_body("chassis", mass=ch.mass, inertia=list(ch.inertia), pos=W(*ch.com))
    Y = np.array([0.0, 1.0, 0.0])
    free = spring_free_angles(spec, -float(np.asarray(m.gravity, float)[2]))
    loads = static_loads(spec, -float(np.asarray(m.gravity, float)[2]))
    sides = {}
    for s, side in enumerate(SIDES):
        y = w.lateral_offset * (1.0 if side == "left" else -1.0)
        arms, wheels = [], []
        for k, (st, (wx, wz)) in enumerate(zip(w.stations, w.wheel_centres())):
            px, pz = st.pivot
            ang = math.atan2(wz - pz, wx - px)
            arm = m.add_body(f"{side}.arm[{k}]", mass=w.arm_mass, inertia=list(w.arm_inertia),
                             pos=W(0.5 * (px + wx), y, 0.5 * (pz + wz)), quat=_rot_y(ang))
            wheel = m.add_body(f"{side}.wheel[{k}]", mass=w.mass, inertia=list(w.inertia), pos=W(wx, y, wz))
            m.add_joint(Revolute(chassis, arm, point=W(px, y, pz), axis=Y, name=f"{side}.arm[{k}].pivot"))
            m.add_joint(Revolute(arm, wheel, point=W(wx, y, wz), axis=Y, name=f"{side}.wheel[{k}].axle"))
            m.add_force(RSDA(chassis, arm, axis=Y, stiffness=w.spring_stiffness, damping=w.spring_damping,
                             free_angle=float(free[s, k]), name=f"{side}.arm[{k}].spring"))
            arms.append(arm.name)
            wheels.append(wheel.name)
        sides[side] = WheelSide(side, y, arms, wheels)
    m.add_marker("driver", chassis, W(*ch.driver_position))
    seat = add_seat(m, chassis, spec, W, ch.com)
    if speed:
        V = float(speed)
        for name in m.body_names:
            m.set_initial_pose(name, vel=[V, 0.0, 0.0])
        for side in sides.values():
            for wn in side.wheels:
                m.set_initial_pose(wn, omega=[0.0, V / w.radius, 0.0])
    drv = np.asarray(ch.driver_position, float) - np.asarray(ch.com, float)
    return WheeledVehicle(spec, m, sides, O, drv, loads, free, providers=[seat] if seat is not None else [])


def add_wheeled_visuals(vm) -> None:
    """Drawing shapes (animation, 3-D viewer; no effect on dynamics): the wheels as cylinders of the tyre's
    radius and width, the arms as bars, the chassis as a box between the wheels from the tyres' fore to aft
    ends and from below the pivots to above its centre of mass (the spec has no hull)."""
    from ..mbs import visuals as V
    from .visuals import HUB, HULL, WHEEL

    spec, m, w = vm.spec, vm.model, vm.spec.wheels
    wc = w.wheel_centres()
    x0, x1 = min(c[0] for c in wc) - w.radius, max(c[0] for c in wc) + w.radius
    z0 = min(st.pivot[1] for st in w.stations) - 0.1
    z1 = spec.chassis.com[2] + 0.25
    width = max(0.1, 2.0 * (w.lateral_offset - 0.5 * w.width) - 0.05)
    centre = np.array([0.5 * (x0 + x1), 0.0, 0.5 * (z0 + z1)]) - np.asarray(spec.chassis.com, float)
    m.add_visual("chassis", V.Box(size=(x1 - x0, width, z1 - z0), center=tuple(centre), color=HULL))
    for side in vm.sides.values():
        for name in side.wheels:
            m.add_visual(name, V.Cylinder(radius=w.radius, length=w.width, axis=(0, 1, 0), color=WHEEL))
        for name in side.arms:
            m.add_visual(name, V.Box(size=(w.arm_length, 0.08, 0.08), color=HUB))


def place_wheeled(spec, terrain, start_x: float = 0.0, drop: float = 0.0) -> float:
    """World z of the vehicle frame origin that puts the vehicle, level, on ``terrain`` at its static pose.

    Each tyre's bottom is placed its static deflection (load / stiffness, :func:`static_loads`) below the
    ground under its wheel centre, the vehicle then lifted by ``drop`` (m); where the ground is uneven or the
    loads differ, the wheel that needs the highest origin sets it (the others start less deflected).
    """
    w = spec.wheels
    defl = static_loads(spec) / spec.tyre.stiffness
    z0 = -math.inf
    for s, y in enumerate((w.lateral_offset, -w.lateral_offset)):
        for k, (wx, wz) in enumerate(w.wheel_centres()):
            h = float(np.asarray(terrain.height(np.array([start_x + wx]), np.array([y])), float).ravel()[0])
            z0 = max(z0, h + w.radius - defl[s, k] - wz)
    return z0 + float(drop)


def wheeled_extent(spec):
    """The :class:`~trackdyn.assembly.extent.VehicleExtent` of a wheeled spec: the tyres' fore and aft ends,
    the ground line under the unloaded tyres; no track, sprocket or idler (NaN), no hull parts."""
    from .extent import VehicleExtent

    w = spec.wheels
    wc = w.wheel_centres()
    xs = [c[0] for c in wc]
    gz = min(c[1] for c in wc) - w.radius
    front, rear = max(xs) + w.radius, min(xs) - w.radius
    return VehicleExtent(front_x=float(front), rear_x=float(rear), ground_z=float(gz),
                         com=tuple(float(c) for c in spec.chassis.com), hull_front_x=float(front),
                         hull_rear_x=float(rear), hull_boxes=(), sprocket_height=float("nan"),
                         idler_x=float("nan"), idler_z=float("nan"), wheel_x=tuple(float(x) for x in xs), n_shoes=0)


# ------------------------------------------------------------------------------------ the links fidelity's part
def check_wheeled_scenario(sc, fidelity: str, integrators: tuple) -> None:
    """Refuse what the wheeled build cannot do, before building: an integrator the fidelity does not accept,
    ``scenario.options`` of the track's contact (there is none), a kinematic driver without per-side speeds,
    a terrain the point tyre cannot run on."""
    from ..contact.tyre import terrain_table
    from .placement import default_terrain

    if isinstance(sc.integrator, str) and sc.integrator not in integrators:
        raise ValueError(f"scenario.integrator = {sc.integrator!r}: the {fidelity!r} fidelity accepts {list(integrators)}")
    spec = sc.vehicle_spec()
    bad = sorted(k for k in sc.options if isinstance(k, str) and "." in k)
    if bad:
        raise ValueError(f"scenario.options {bad}: {spec.name!r} runs on wheels and point tyres; the track and "
                         "contact options do not apply to it (integrator options only)")
    drv = sc.driver
    if getattr(drv, "kinematic", False) and not hasattr(drv, "side_profiles"):
        raise ValueError(f"scenario.driver = {drv!r}: a kinematic driver of a wheeled vehicle must give each "
                         "side's wheel speed (SprocketSpeed, SideSpeed)")
    try:
        terrain_table(sc.terrain if sc.terrain is not None else default_terrain())
    except ValueError as err:
        raise ValueError(f"scenario.{err} ({spec.name!r} runs on point tyres)") from None


def build_wheeled_scenario(sc, integrator_options: dict, system_cls=None):
    """The :class:`~trackdyn.formulations.contract.Build` of a wheeled vehicle's scenario (absolute
    coordinates, tyres with their Jacobian, wheel motors), for the ``links`` fidelity; ``system_cls`` another
    :class:`~trackdyn.formulations.absolute.AbsoluteSystem` class on the same model and providers (the
    ``synthesis`` fidelity's, which steps it in joint coordinates)."""
    from ..contact.tyre import TerrainTyres
    from ..formulations.absolute import AbsoluteSystem
    from ..formulations.contract import Build
    from ..powertrain import WheelDrivetrain
    from .placement import default_terrain

    spec = sc.vehicle_spec()
    terrain = sc.terrain if sc.terrain is not None else default_terrain()
    z0 = place_wheeled(spec, terrain, sc.start_x, sc.drop)
    vm = build_wheeled(spec, origin=(sc.start_x, 0.0, z0), speed=sc.speed)
    add_wheeled_visuals(vm)
    m = vm.model
    idx = {n: k for k, n in enumerate(m.body_names)}
    t = spec.tyre
    tyres = TerrainTyres([idx[n] for n in vm.wheel_names], vm.wheel_names, terrain, spec.wheels.radius,
                         t.stiffness, t.damping, t.friction, t.slip_ref, t.v_min)
    driven = [(s, k) for s, side in enumerate(SIDES) for k, st in enumerate(spec.wheels.stations) if st.driven]
    names = [vm.sides[SIDES[s]].wheels[k] for s, k in driven]
    drivetrain = WheelDrivetrain(idx["chassis"], [idx[vm.sides[SIDES[s]].arms[k]] for s, k in driven],
                                 [idx[n] for n in names], [s for s, _ in driven], names,
                                 spec.powertrain.torque_map, spec.powertrain.brake_torque, sc.driver)
    system = (system_cls or AbsoluteSystem)(m, providers=[tyres, drivetrain, *vm.providers], coupling="full")
    return Build(spec, vm, system, tyres, drivetrain, sc.integrator, integrator_options)
