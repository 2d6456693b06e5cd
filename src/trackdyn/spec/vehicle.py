"""VehicleSpec: the validated, immutable description of a tracked vehicle.

A spec is data (DESIGN.md): frozen pydantic models, validated on construction,
serialisable to TOML/JSON and comparable. Derived quantities (shoe count,
track length, wheel positions) are computed from it by
:mod:`trackdyn.assembly`, never stored, so a changed parameter always gives a
consistent vehicle. Geometry is given for the **left** track in the vehicle
frame (origin at the left sprocket centre, x forward, y left, z up); the right
track mirrors it in y, with the longitudinal offsets of :class:`TracksSpec`.
All values SI (m, kg, s, N, rad); each field's description states its unit.

Example
-------
>>> import trackdyn as td
>>> spec = td.vehicles.get("m113")
>>> spec2 = spec.with_sprocket_offset(dx=0.05, dz=0.10)
>>> spec2.sprocket.location[0] - spec.sprocket.location[0]
0.05
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

__all__ = [
    "SpecError",
    "MaterialSpec",
    "BoxSpec",
    "ConvexSpec",
    "ChassisSpec",
    "ToothSpec",
    "SprocketSpec",
    "TensionerSpec",
    "FrameSpec",
    "IdlerSpec",
    "TorsionSpringSpec",
    "DamperSpec",
    "StationSpec",
    "SuspensionSpec",
    "RollersSpec",
    "ShoeSpec",
    "TracksSpec",
    "PowertrainSpec",
    "SeatSpec",
    "VehicleSpec",
]

Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNeg = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
XZ = tuple[Finite, Finite]
Vec3 = tuple[Finite, Finite, Finite]
Inertia = tuple[Positive, Positive, Positive]


def _increasing_table(v, what: str, axis: str):
    """A (x, y) table of at least 2 points whose x increases strictly; ValueError naming ``what`` and ``axis``."""
    if len(v) < 2:
        raise ValueError(f"{what} needs at least 2 points")
    if any(b[0] <= a[0] for a, b in zip(v, v[1:])):
        raise ValueError(f"{axis} must increase strictly")
    return v


class SpecError(ValueError):
    """An invalid spec: every problem with its field path, value and reason."""

    def __init__(self, problems: list[tuple[str, object, str]], source: str | None = None):
        self.problems = problems
        self.source = source
        head = f"invalid vehicle spec{f' {source}' if source else ''}:"
        lines = [f"  {path}: {reason}" if value is _WHOLE else
                 f"  {path} = {value if value == '(missing)' else repr(value)}: {reason}"
                 for path, value, reason in problems]
        super().__init__("\n".join([head, *lines]))

    @classmethod
    def from_validation(cls, err: ValidationError, source: str | None = None) -> "SpecError":
        probs = []
        for e in err.errors():
            path = _path(e.get("loc", ()))
            msg = e.get("msg", "invalid")
            if msg.startswith("Value error, "):
                msg = msg[len("Value error, "):]
            value = "(missing)" if e.get("type") == "missing" else e.get("input")
            if isinstance(value, dict) and (not path or (e.get("type") == "value_error"
                                                         and path in _WHOLE_TABLE_CHECKS)):
                value = _WHOLE  # a check of a whole table: its reason names the fields, the value would be all of it
            probs.append((path or "(spec)", value, msg))
        return cls(probs, source)


_WHOLE = object()
#: tables whose checks of several fields name them in their reasons (a wheeled spec's ``[wheels]`` and ``[tyre]``)
_WHOLE_TABLE_CHECKS = ("wheels", "tyre")


def _path(loc) -> str:
    out = ""
    prev = None
    for p in loc:
        if p in ("box", "convex") and isinstance(prev, int):
            prev = p
            continue  # the tag of a hull part's kind
        prev = p
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


class SpecModel(BaseModel):
    """Base of every spec part: frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)


def _check_inertia(v, what="inertia"):
    a, b, c = sorted(v)
    if a + b < c * (1 - 1e-9):
        raise ValueError(f"principal moments {tuple(v)} violate the triangle inequality (no rigid body has them)")
    return v


class MaterialSpec(SpecModel):
    """Contact material (korner-2024 §2.4.3, §3.2.4).

    Either derive the contact coefficients from ``youngs_modulus``,
    ``poisson_ratio`` and ``restitution`` (Hertz, eq. 2.16-2.19) or give them
    (``kn``, ``kt``, ``gn``, ``gt``); ``law`` selects the contact law.
    """

    law: Literal["hertz", "hooke", "kelvin-voigt"] = Field("hertz", description="normal force law")
    youngs_modulus: Positive = Field(2e7, description="Young's modulus, Pa")
    poisson_ratio: Annotated[float, Field(ge=0, lt=0.5)] = Field(0.3, description="Poisson's ratio, -")
    friction: NonNeg = Field(0.8, description="Coulomb friction coefficient, -")
    restitution: Annotated[float, Field(ge=0, le=1)] = Field(0.1, description="coefficient of restitution, -")
    kn: Positive | None = Field(None, description="normal stiffness, N/m (or N/m^1.5 for Hertz); derived if absent")
    kt: Positive | None = Field(None, description="tangential stiffness, N/m; derived if absent")
    gn: NonNeg | None = Field(None, description="normal damping, N s/m; derived if absent")
    gt: NonNeg | None = Field(None, description="tangential damping, N s/m; derived if absent")


class BoxSpec(SpecModel):
    """A box in the vehicle frame: centre (m) and full size (m)."""

    center: Vec3 = Field(description="centre, m (vehicle frame)")
    size: tuple[Positive, Positive, Positive] = Field(description="full lengths along x, y, z, m")


class ConvexSpec(SpecModel):
    """A convex polyhedron in the vehicle frame: its vertices (m); its faces are their convex hull.

    Validated on construction: at least 4 finite, distinct vertices enclosing a volume, each on the hull
    (a vertex inside the others' hull means the shape is not convex: split it into convex parts).
    """

    vertices: tuple[Vec3, ...] = Field(min_length=4, description="vertices (x, y, z), m (vehicle frame)")
    label: str = Field("", description="what part of the vehicle it is (messages, drawings)")

    @field_validator("vertices")
    @classmethod
    def _convex(cls, v):
        from ..contact.shapes import convex_faces

        convex_faces(v, what="the vertices")
        return v

    def extent(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """Lowest and highest x, y, z of the vertices, m (vehicle frame)."""
        import numpy as np

        V = np.asarray(self.vertices, float)
        return tuple(V.min(axis=0).tolist()), tuple(V.max(axis=0).tolist())


def _hull_kind(v) -> str:
    if isinstance(v, dict):
        return "convex" if "vertices" in v else "box"
    return "convex" if isinstance(v, ConvexSpec) else "box"


HullPart = Annotated[Annotated[BoxSpec, Tag("box")] | Annotated[ConvexSpec, Tag("convex")],
                     Discriminator(_hull_kind)]


def _box_extent(b: BoxSpec):
    lo = tuple(c - 0.5 * d for c, d in zip(b.center, b.size))
    hi = tuple(c + 0.5 * d for c, d in zip(b.center, b.size))
    return lo, hi


def hull_part_extent(part) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """Lowest and highest x, y, z of a hull part (box or convex polyhedron), m (vehicle frame)."""
    return part.extent() if isinstance(part, ConvexSpec) else _box_extent(part)


class ChassisSpec(SpecModel):
    mass: Positive = Field(description="chassis mass, kg")
    inertia: Inertia = Field(description="principal moments about the centre of mass (x, y, z), kg m^2")
    com: Vec3 = Field(description="centre of mass, m (vehicle frame)")
    driver_position: Vec3 = Field(description="driver's seat reference point, m (vehicle frame)")
    hull: tuple[HullPart, ...] = Field(
        (), description="collision shapes of the hull, vehicle frame: boxes (center, size) and convex polyhedra "
                        "(vertices); they touch the terrain only. In a file, also a hull file reference (a file "
                        "name or {file, scale, offset, tolerance}; a list entry may be one too): a TOML list of "
                        "parts or an OBJ/STL triangle mesh whose closed convex components become convex "
                        "polyhedra (trackdyn.spec.io.read_hull_file); relative names resolve against the spec "
                        "file's folder")
    material: str = Field("hull", description="material name")

    _inertia = field_validator("inertia")(classmethod(lambda cls, v: _check_inertia(v)))

    @field_validator("hull", mode="before")
    @classmethod
    def _hull_files(cls, v, info):
        """Replace hull file references by the parts they hold (validated there, errors name the file)."""
        import os

        def is_ref(p):
            return isinstance(p, (str, os.PathLike)) or (isinstance(p, dict) and "file" in p)

        if not (is_ref(v) or (isinstance(v, (list, tuple)) and any(is_ref(p) for p in v))):
            return v
        from .io import read_hull_file

        base = (info.context or {}).get("base")
        if is_ref(v):
            return tuple(read_hull_file(v, base))
        out = []
        for k, p in enumerate(v):
            if not is_ref(p):
                out.append(p)
                continue
            try:
                out.extend(read_hull_file(p, base))
            except ValueError as err:
                raise ValueError(f"[{k}]: {err}") from None
        return tuple(out)


class ToothSpec(SpecModel):
    """han-sander-mao's seven-parameter sprocket tooth (§3.5, Fig. 7); n_t is the sprocket's ``n_teeth``.

    One valley, from the bottom up (``trackdyn.contact.shapes.tooth_points`` draws it): a flat of
    ``flat_width`` at ``root_radius``, a concave seating curve of ``seating_radius`` tangent to it, a straight
    tooth face at ``face_angle`` from the valley's centre line, a convex round of ``tip_round_radius`` tangent
    to the face and to the tip circle of ``tip_radius``. Every join is tangent.
    """

    face_angle: Annotated[float, Field(ge=0, lt=math.pi / 2, allow_inf_nan=False)] = Field(
        description="tooth face angle θ from the valley's centre line, rad (the face opens outwards)")
    root_radius: Positive = Field(description="radius to the bottom of the tooth r1 (the flat), m")
    tip_radius: Positive = Field(description="radius to the top of the tooth r2, m")
    tip_round_radius: Positive = Field(description="radius of the round at the top of the tooth r3, m")
    seating_radius: Positive = Field(description="radius of the seating curve r4, m")
    flat_width: NonNeg = Field(0.0, description="width of the flat between the teeth w, m")


class SprocketSpec(SpecModel):
    """Drive sprocket: two toothed gears on one axle.

    The tooth profile is Chrono's single-pin profile (``addendum_radius``, ``arc_centre_radius``,
    ``arc_radius``: circular gaps) or, with ``[sprocket.tooth]``, han-sander-mao's seven-parameter tooth
    (Fig. 7; then the three arc fields are absent).
    """

    location: XZ = Field((0.0, 0.0), description="centre (x, z) of the left sprocket, m")
    mass: Positive = Field(description="kg")
    inertia: Inertia = Field(description="principal moments (x, y, z), kg m^2; y is the axle")
    n_teeth: Annotated[int, Field(ge=3, le=60)] = Field(10, description="teeth per gear")
    addendum_radius: Positive | None = Field(None, description="tooth tip radius RT, m (arc profile)")
    arc_centre_radius: Positive | None = Field(None, description="radius RC of the centres of the gap arcs, m "
                                                                 "(arc profile)")
    arc_radius: Positive | None = Field(None, description="radius R of the gap arcs, m (arc profile)")
    tooth: ToothSpec | None = Field(None, description="han-sander-mao's seven-parameter tooth (Fig. 7) instead of "
                                                      "the arc profile")
    assembly_radius: Positive = Field(description="radius of the pin centres when seated, m")
    gear_separation: Positive = Field(description="distance between the two gears along the axle, m")
    lateral_backlash: NonNeg | None = Field(
        None, description="lateral guide: play of the shoes' guide (the sphere of radius guide_width/2 on top of "
                          "the guide horn) either side of the sprocket's mid-plane before the sprocket pushes it "
                          "back, m; the guide face lies lateral_backlash + guide_width/2 from the mid-plane "
                          "(Chrono's single-pin sprocket lateral backlash, M113: 0.02, shared/reference/m113.md). "
                          "Absent: no lateral guide at the sprocket (the road wheels and idler still guide)")
    material: str = Field("sprocket", description="material name")

    _inertia = field_validator("inertia")(classmethod(lambda cls, v: _check_inertia(v)))

    @property
    def outer_radius(self) -> float:
        """Radius of the tooth tips, m (either profile)."""
        return self.tooth.tip_radius if self.tooth is not None else self.addendum_radius

    @model_validator(mode="after")
    def _profile(self):
        arc = {"addendum_radius": self.addendum_radius, "arc_centre_radius": self.arc_centre_radius,
               "arc_radius": self.arc_radius}
        if self.tooth is not None:
            given = [k for k, v in arc.items() if v is not None]
            if given:
                raise ValueError(f"{', '.join(given)} describe the arc profile; a sprocket with [sprocket.tooth] "
                                 "has none (remove them)")
            from ..contact.shapes import tooth_points

            t = self.tooth
            try:
                tooth_points(self.n_teeth, t.face_angle, t.root_radius, t.tip_radius, t.tip_round_radius,
                             t.seating_radius, t.flat_width)
            except ValueError as err:
                raise ValueError(f"tooth (n_teeth = {self.n_teeth}): {err}") from None
            if not t.root_radius < self.assembly_radius < t.tip_radius:
                raise ValueError(f"assembly_radius {self.assembly_radius} must lie between the tooth bottom "
                                 f"(tooth.root_radius = {t.root_radius}) and its top (tooth.tip_radius = "
                                 f"{t.tip_radius})")
            return self
        missing = [k for k, v in arc.items() if v is None]
        if missing:
            raise ValueError(f"the arc profile needs {', '.join(missing)} (or give [sprocket.tooth])")
        if not self.arc_centre_radius - self.arc_radius < self.assembly_radius < self.addendum_radius + 1e-12:
            raise ValueError(
                f"assembly_radius {self.assembly_radius} must lie between the gap bottom "
                f"(arc_centre_radius - arc_radius = {self.arc_centre_radius - self.arc_radius:.4g}) "
                f"and the tooth tip (addendum_radius = {self.addendum_radius})"
            )
        gap_half = math.asin(min(1.0, self.arc_radius / self.arc_centre_radius))
        if 2 * gap_half >= 2 * math.pi / self.n_teeth:
            raise ValueError("the tooth gaps overlap: arc_radius too large for n_teeth and arc_centre_radius")
        return self


class TensionerSpec(SpecModel):
    """Idler carrier on a prismatic joint with a spring-damper and a preload (thesis Table 3.11).

    ``mode = "spring"``: force ``preload + stiffness (free_length - l) - damping l̇``
    pushes the idler away from the anchor along ``direction``; the anchor is
    placed at assembly so that this force balances both strands at
    ``target_tension`` (a track adjuster set to the initial track tension).
    ``"locked"``: the carrier is welded at its assembled position.
    """

    mode: Literal["spring", "locked"] = "spring"
    carrier_mass: Positive = Field(10.0, description="kg")
    stiffness: NonNeg = Field(1e6, description="N/m")
    damping: NonNeg = Field(1.4e4, description="N s/m")
    free_length: Positive = Field(0.725, description="spring free length, m")
    preload: Finite = Field(1e4, description="actuation force at the free length, N")
    direction: XZ = Field((-1.0, 0.0), description="unit direction (x, z) in which the idler is pushed")
    travel: NonNeg = Field(0.25, description="allowed carrier travel either side of the nominal location, m")
    target_tension: Positive = Field(1e4, description="initial track tension held at the assembled idler "
                                                      "position, N (NG-NRMM: 10 kN)")

    @field_validator("direction")
    @classmethod
    def _unit(cls, v):
        n = math.hypot(*v)
        if n < 1e-9:
            raise ValueError("direction has zero length")
        return (v[0] / n, v[1] / n)


class IdlerSpec(SpecModel):
    location: XZ = Field(description="nominal centre (x, z) of the left idler, m")
    radius: Positive = Field(description="m")
    width: Positive = Field(0.35, description="total width of the wheel, m")
    mass: Positive = Field(description="kg")
    inertia: Inertia = Field(description="principal moments (x, y, z), kg m^2")
    material: str = Field("wheel", description="material name")
    tensioner: TensionerSpec = TensionerSpec()

    _inertia = field_validator("inertia")(classmethod(lambda cls, v: _check_inertia(v)))


class TorsionSpringSpec(SpecModel):
    """Torsion bar of a road arm (thesis Table 3.8).

    Arm angle θ is measured below the horizontal (positive: wheel below the
    pivot). The bar's torque opposes ``θ - free_angle`` with ``stiffness``
    between ``jounce_limit`` and ``rebound_limit``; beyond them the slope is
    ``jounce_stiffness`` / ``rebound_stiffness``.
    """

    stiffness: Positive = Field(description="N m/rad")
    free_angle: Finite = Field(description="arm angle at zero torque, rad")
    rebound_limit: Finite = Field(description="largest arm angle before the rebound stop, rad")
    jounce_limit: Finite = Field(description="smallest arm angle before the jounce stop, rad")
    rebound_stiffness: Positive = Field(description="N m/rad")
    jounce_stiffness: Positive = Field(description="N m/rad")

    @model_validator(mode="after")
    def _limits(self):
        if not self.jounce_limit < self.rebound_limit:
            raise ValueError(f"jounce_limit {self.jounce_limit} must be below rebound_limit {self.rebound_limit}")
        return self


class DamperSpec(SpecModel):
    """Vertical translational damper at a wheel centre (thesis Table 3.9, §5.1).

    ``table`` gives force (N, positive in extension) against velocity (m/s,
    positive in extension); beyond its ends the force grows with
    ``high_speed_damping`` (N s/m) if given, else stays at the end values.
    """

    table: tuple[tuple[Finite, Finite], ...] = Field(description="(velocity m/s, force N) pairs, velocity increasing")
    high_speed_damping: NonNeg | None = Field(None, description="slope beyond the table, N s/m (§5.1: 1e5)")
    length: Positive = Field(0.5, description="length of the damper (chassis point above the wheel centre), m")

    @field_validator("table")
    @classmethod
    def _table(cls, v):
        return _increasing_table(v, "a damper table", "velocities")


class StationSpec(SpecModel):
    """One road-wheel station of the left track."""

    pivot: XZ = Field(description="arm pivot (x, z) on the chassis, m")
    damper: bool = Field(False, description="a vertical damper acts at this wheel's centre")


class SuspensionSpec(SpecModel):
    """Road-wheel suspension, the same at every station.

    ``type = "torsion-arm"`` (default): trailing (or leading) arms on pivots
    with torsion bars. ``type = "rigid"``: the road wheels turn on axles fixed
    to the hull — a rigid rail with small road wheels (agapov-kovalev-pogorelov
    Fig. 10a). The wheel centre is placed exactly as for an arm (station
    ``pivot`` plus ``arm_length`` at ``design_angle``: the axle bracket), but
    there is no arm body and no spring; ``arm_mass``, ``arm_inertia``,
    ``torsion`` and ``damper`` are then not used (and dampers are refused).

    ``locked = True`` (torsion-arm only): every arm is welded to the chassis at
    its design angle (a ``Fixed`` joint instead of the pivot's revolute; the
    torsion bars and dampers are left out). The arms and wheels keep their mass
    and the wheels still turn: the vehicle "without the suspension system" of
    wallin-shabana-2013 Fig. 8.
    """

    type: Literal["torsion-arm", "rigid"] = Field("torsion-arm", description="suspension template")
    stations: tuple[StationSpec, ...] = Field(min_length=1, description="front to rear")
    arm_length: Positive = Field(description="pivot to wheel centre, m")
    design_angle: Finite = Field(description="arm angle below horizontal at assembly, rad")
    trailing: bool = Field(True, description="the wheel is behind its pivot")
    locked: bool = Field(False, description="arms welded to the chassis at the design angle (no suspension)")
    arm_mass: Positive | None = Field(None, description="kg (torsion-arm only)")
    arm_inertia: Inertia | None = Field(None, description="kg m^2 (torsion-arm only)")
    wheel_radius: Positive = Field(description="m")
    wheel_width: Positive = Field(description="total width of the wheel pair (both halves and the gap), m")
    wheel_gap: NonNeg = Field(0.0, description="gap between the two halves (guide horns run in it), m")
    wheel_mass: Positive = Field(description="kg (both halves)")
    wheel_inertia: Inertia = Field(description="kg m^2")
    wheel_material: str = "wheel"
    torsion: TorsionSpringSpec | None = Field(None, description="torsion bar (torsion-arm only)")
    damper: DamperSpec | None = None

    _i1 = field_validator("arm_inertia")(classmethod(lambda cls, v: v if v is None else _check_inertia(v)))
    _i2 = field_validator("wheel_inertia")(classmethod(lambda cls, v: _check_inertia(v)))

    @model_validator(mode="after")
    def _template(self):
        if self.type == "torsion-arm":
            missing = [f for f in ("arm_mass", "arm_inertia", "torsion") if getattr(self, f) is None]
            if missing:
                raise ValueError(f"a torsion-arm suspension needs {', '.join(missing)}")
        else:
            if any(s.damper for s in self.stations):
                raise ValueError("a rigid suspension has no dampers (stations ask for one)")
            if self.locked:
                raise ValueError("locked = true welds a torsion-arm suspension's arms; a rigid suspension has none")
        return self

    @model_validator(mode="after")
    def _damper(self):
        if any(s.damper for s in self.stations) and self.damper is None:
            raise ValueError("stations ask for a damper but 'damper' is not given")
        xs = [s.pivot[0] for s in self.stations]
        if any(b >= a for a, b in zip(xs, xs[1:])):
            raise ValueError(f"stations must be ordered front to rear (x decreasing), got x = {xs}")
        return self


class FrameSpec(SpecModel):
    """Undercarriage frame of each side on a revolute joint and a spring-damper to the chassis
    (han-sander-mao §4, Fig. 11, eq. 35).

    The frame carries the idler (with its tensioner) and the road wheels (the lower rollers: ``suspension.type
    = "rigid"``, their axles fixed to the frame); the chassis (cab and chassis rigidly joined) carries the
    sprocket and the carrier rollers (``[rollers]``): the paper's S1 and S2. The frame turns about the lateral
    axis through ``pivot``; a linear spring-damper (eq. 35, ``f = k_R (r - r0) + c_R ṙ``) joins
    ``spring_chassis`` on the chassis to ``spring_frame`` on the frame. Its free length is set at assembly so
    that, on level ground, the spring holds the moment of the chassis side's weight (chassis, sprockets,
    carrier rollers, seat) about the pivot. Points are (x, z) of the left side in the vehicle frame; the right
    side mirrors them.
    """

    mass: Positive = Field(description="mass of one side's frame, kg")
    inertia: Inertia = Field(description="principal moments about its centre of mass (x, y, z), kg m^2")
    com: XZ = Field(description="centre of mass (x, z), m")
    pivot: XZ = Field(description="revolute joint (lateral axis) between chassis and frame, m")
    spring_chassis: XZ = Field(description="spring-damper end on the chassis (A2), m")
    spring_frame: XZ = Field(description="spring-damper end on the frame (A1), m")
    stiffness: Positive = Field(description="k_R of eq. 35, N/m")
    damping: NonNeg = Field(description="c_R of eq. 35, N s/m")
    locked: bool = Field(False, description="the frame welded to the chassis at the pivot (no revolute, no "
                                            "spring): one rigid undercarriage, the track subsystem alone")

    _inertia = field_validator("inertia")(classmethod(lambda cls, v: _check_inertia(v)))

    @model_validator(mode="after")
    def _spring(self):
        if math.dist(self.spring_chassis, self.spring_frame) < 1e-3:
            raise ValueError(f"spring_chassis {self.spring_chassis} and spring_frame {self.spring_frame} coincide: "
                             "the spring-damper has no length")
        return self


class RollersSpec(SpecModel):
    """Support (carrier) rollers under the upper strand, fixed axes on the chassis."""

    locations: tuple[XZ, ...] = Field((), description="centres (x, z), m")
    radius: Positive = 0.1
    width: Positive = 0.2
    mass: Positive = 10.0
    inertia: Inertia = (0.05, 0.08, 0.05)
    material: str = "wheel"


class ShoeSpec(SpecModel):
    """Single-pin track shoe (thesis Table 3.6, §3.2.5).

    Shoe frame: origin midway between its two pins, x from the rear pin to the
    front pin, y lateral, z towards the wheels. The pins lie on the x axis at
    ``±pitch/2``; the wheel path is at ``z = +top`` and the ground pad at
    ``z = -bottom``.
    """

    mass: Positive = Field(description="kg")
    inertia: Inertia = Field(description="kg m^2")
    pitch: Positive = Field(description="pin to pin, m")
    top: Positive = Field(0.03, description="pin axis to the wheel path, m")
    bottom: Positive = Field(0.03, description="pin axis to the ground face of the pad, m")
    pad_length: Positive = Field(description="pad length along the track, m")
    width: Positive = Field(description="total width of the shoe, m")
    pin_radius: Positive = Field(description="radius of the pin engaged by the sprocket, m")
    guide_length: Positive = Field(0.05, description="centre guide horn length, m")
    guide_width: Positive = Field(0.04, description="centre guide horn width, m")
    guide_height: Positive = Field(0.06, description="guide horn height above the wheel path, m")
    bending_stiffness: NonNeg = Field(1000.0, description="RSDA between shoes, N m/rad")
    bending_damping: NonNeg = Field(10.0, description="RSDA between shoes, N m s/rad")
    material: str = Field("pad", description="material of the ground pad")
    body_material: str = Field("steel", description="material of the wheel path, guide horn and pin")
    count: Annotated[int, Field(ge=8)] | None = Field(None, description="shoes per track; derived from the geometry if absent")
    section_area: Positive | None = Field(
        None, description="the ancf fidelity's link section, m^2; default the shoe's mass over steel's density "
                          "times the pitch (the loop weighs what the shoes weigh)")
    section_inertia: Positive | None = Field(
        None, description="the ancf fidelity's link section's second moment for bending in the track plane, m^4; "
                          "default a solid rectangle of the shoe's width holding section_area")

    _inertia = field_validator("inertia")(classmethod(lambda cls, v: _check_inertia(v)))

    @model_validator(mode="after")
    def _geom(self):
        if self.pad_length > self.pitch:
            raise ValueError(f"pad_length {self.pad_length} exceeds the pitch {self.pitch}")
        if self.pin_radius >= self.top + self.bottom:
            raise ValueError(f"pin_radius {self.pin_radius} is larger than the shoe (top {self.top} + "
                             f"bottom {self.bottom})")
        return self


class TracksSpec(SpecModel):
    """Lateral placement and left/right differences of the two track assemblies."""

    lateral_offset: Positive = Field(description="y of the left track centre plane, m (right: -y)")
    right_suspension_offset: Finite = Field(0.0, description="x shift of the right road-wheel stations, m")


class PowertrainSpec(SpecModel):
    """Sprocket torque against sprocket speed at full throttle (thesis Table 3.10), per sprocket.

    Skid steering: the steering input s in [-1, 1] scales the torque of the
    inner track by (1 - |s|) and brakes it with ``|s| brake_torque``.
    """

    torque_map: tuple[tuple[NonNeg, Finite], ...] = Field(description="(speed, torque N m) pairs")
    map_speed: Literal["sprocket", "track"] = Field(
        "sprocket", description="abscissa of torque_map: sprocket speed in rad/s, or track speed in m/s "
                                "(sprocket speed times the pin-circle radius)")
    brake_torque: NonNeg = Field(10000.0, description="per sprocket, N m")

    @field_validator("torque_map")
    @classmethod
    def _map(cls, v):
        return _increasing_table(v, "a torque map", "sprocket speeds")


class SeatSpec(SpecModel):
    """A seat mass on a vertical spring-damper relative to the cab (han-sander-mao eq. 36).

    The seat (with its occupant: the mass that moves on the seat suspension) slides along the chassis's z axis
    on a prismatic joint; a linear spring-damper of ``stiffness`` and ``damping`` acts between the chassis and
    the seat along that axis. ``position`` is the seat's centre of mass at rest on level ground: the spring is
    then compressed by the static deflection ``mass g / stiffness`` (the vehicle is assembled with it so), and
    the recorded ``seat.rel.z``, the displacement relative to the cab, is zero there (the paper's ``u_S2``). The seat's mass adds to the vehicle's (take
    it out of ``chassis.mass`` if the hull's mass already counts it). The paper gives no values; docs/vehicle.md
    says where the examples' values come from.
    """

    mass: Positive = Field(description="seat and occupant mass on the seat suspension, kg")
    stiffness: Positive = Field(description="vertical stiffness of the seat suspension, N/m")
    damping: NonNeg = Field(description="vertical damping of the seat suspension, N s/m")
    position: Vec3 = Field(description="seat centre of mass at rest on level ground, m (vehicle frame)")

    @model_validator(mode="after")
    def _sag(self):
        sag = self.mass * 9.81 / self.stiffness
        if sag >= SEAT_MAX_SAG:
            raise ValueError(f"the seat would sink mass g / stiffness = {sag:.3g} m under its own weight (mass "
                             f"{self.mass} kg, stiffness {self.stiffness} N/m); a seat suspension travels less than "
                             f"{SEAT_MAX_SAG} m: stiffness too low or mass too high (units?)")
        return self


#: Largest static deflection of a seat (m) the spec accepts: the seat's spring anchor sits
#: :data:`SEAT_SPRING_LENGTH` below it on the chassis, and suspension seats travel about 0.1 m.
SEAT_MAX_SAG = 0.5
#: Distance (m) from the seat's spring anchor on the chassis, below the seat, to the seat at rest; the spring's
#: free length is this plus the static deflection.
SEAT_SPRING_LENGTH = 1.0


class VehicleSpec(SpecModel):
    """A tracked vehicle: chassis, two track assemblies, powertrain, materials."""

    name: str = Field(min_length=1)
    description: str = ""
    chassis: ChassisSpec
    sprocket: SprocketSpec
    idler: IdlerSpec
    suspension: SuspensionSpec
    rollers: RollersSpec = RollersSpec()
    shoes: ShoeSpec
    tracks: TracksSpec
    powertrain: PowertrainSpec
    materials: dict[str, MaterialSpec]
    seat: SeatSpec | None = Field(None, description="optional seat on a spring-damper relative to the cab "
                                                    "(han-sander-mao eq. 36); absent: no seat body")
    frame: FrameSpec | None = Field(None, description="optional undercarriage frame per side on a revolute and a "
                                                      "spring-damper to the chassis (han-sander-mao Fig. 11, "
                                                      "eq. 35); absent: the running gear is on the chassis")

    @model_validator(mode="after")
    def _materials(self):
        used = {
            "chassis.material": self.chassis.material,
            "sprocket.material": self.sprocket.material,
            "idler.material": self.idler.material,
            "suspension.wheel_material": self.suspension.wheel_material,
            "rollers.material": self.rollers.material,
            "shoes.material": self.shoes.material,
            "shoes.body_material": self.shoes.body_material,
        }
        missing = [f"{k} = {v!r}" for k, v in used.items() if v not in self.materials]
        if missing:
            raise ValueError(f"unknown material(s): {', '.join(missing)}; defined: {sorted(self.materials)}")
        return self

    @model_validator(mode="after")
    def _tooth_seat(self):
        t = self.sprocket.tooth
        if t is None:
            return self
        rp = self.shoes.pin_radius
        if not t.seating_radius > rp:
            raise ValueError(f"sprocket.tooth.seating_radius {t.seating_radius} must exceed shoes.pin_radius {rp}: "
                             "a pin larger than the seating curve cannot seat in it")
        seated = t.root_radius + rp
        if abs(self.sprocket.assembly_radius - seated) > 1e-6:
            raise ValueError(f"sprocket.assembly_radius {self.sprocket.assembly_radius} must be where a pin rests "
                             f"in the valley: tooth.root_radius + shoes.pin_radius = {seated:.6g} m")
        return self

    @model_validator(mode="after")
    def _frame(self):
        if self.frame is not None and self.suspension.type != "rigid":
            raise ValueError(f"frame: the undercarriage frame carries rigid lower rollers; suspension.type is "
                             f"{self.suspension.type!r} (use 'rigid')")
        return self

    @model_validator(mode="after")
    def _sprocket_guide(self):
        b = self.sprocket.lateral_backlash
        if b is not None and b + 0.5 * self.shoes.guide_width > 0.5 * self.sprocket.gear_separation:
            raise ValueError(
                f"sprocket.lateral_backlash {b} puts the sprocket's guide face (backlash + shoes.guide_width/2 = "
                f"{b + 0.5 * self.shoes.guide_width:.4g} m from the mid-plane) outside its gears (gear_separation/2 "
                f"= {0.5 * self.sprocket.gear_separation:.4g} m)")
        return self

    @model_validator(mode="after")
    def _hull_placement(self):
        """The hull sits above the ground line of the design pose and over the running gear."""
        if not self.chassis.hull:
            return self
        sus = self.suspension
        track = self.shoes.top + self.shoes.bottom
        wheel_z = [st.pivot[1] - sus.arm_length * math.sin(sus.design_angle) for st in sus.stations]
        ground = min(min(wheel_z) - sus.wheel_radius, self.idler.location[1] - self.idler.radius) - track
        problems = []
        lo_x, hi_x = math.inf, -math.inf
        for k, part in enumerate(self.chassis.hull):
            lo, hi = hull_part_extent(part)
            lo_x, hi_x = min(lo_x, lo[0]), max(hi_x, hi[0])
            if lo[2] <= ground:
                problems.append(
                    f"chassis.hull[{k}] reaches down to z = {lo[2]:.4g} m, at or below the ground line z = "
                    f"{ground:.4g} m of the design pose (the lowest road-wheel or idler bottom minus the track's "
                    f"{track:.4g} m): the hull would carry the vehicle instead of its tracks")
        cx = self.chassis.com[0]
        if not lo_x <= cx <= hi_x:
            problems.append(f"chassis.hull spans x = {lo_x:.4g} .. {hi_x:.4g} m but the chassis centre of mass is at "
                            f"x = {cx:.4g} m: the hull is not over the running gear (a sign or frame error?)")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def running_gear(self) -> str:
        """``"tracks"`` (a :class:`~trackdyn.spec.wheeled.WheeledVehicleSpec` says ``"wheels"``)."""
        return "tracks"

    # ---------------------------------------------------------------- editing
    def replace(self, changes: dict | None = None, **kw) -> "VehicleSpec":
        """A new, validated spec with ``changes`` applied; keys are dotted paths.

        >>> spec.replace({"idler.radius": 0.25, "shoes.count": 64})  # doctest: +SKIP
        """
        data = self.model_dump(mode="json")
        for path, value in {**(changes or {}), **kw}.items():
            _set_path(data, path, value)
        return validate_spec(data)

    def with_sprocket_offset(self, dx: float = 0.0, dz: float = 0.0) -> "VehicleSpec":
        """Move both sprockets by (dx, dz) m; the shoe count is re-derived (thesis §5.1)."""
        x, z = self.sprocket.location
        return self.replace({"sprocket.location": (x + dx, z + dz), "shoes.count": None})

    def with_idler_offset(self, dx: float = 0.0, dz: float = 0.0) -> "VehicleSpec":
        """Move both idlers by (dx, dz) m; the shoe count is re-derived (thesis §5.1)."""
        x, z = self.idler.location
        return self.replace({"idler.location": (x + dx, z + dz), "shoes.count": None})


def _set_path(data, path: str, value):
    import re

    parts = [p for p in re.split(r"\.|\[(\d+)\]", path) if p]
    cur = data
    for i, p in enumerate(parts):
        key = int(p) if p.isdigit() else p
        if isinstance(cur, list):
            if not isinstance(key, int) or not -len(cur) <= key < len(cur):
                raise SpecError([(path, value, f"no element {p!r} here")])
        elif not isinstance(cur, dict) or key not in cur:
            raise SpecError([(path, value, f"unknown field {p!r}")])
        if i == len(parts) - 1:
            cur[key] = value
        else:
            cur = cur[key]


def validate_spec(data, source: str | None = None, base=None):
    """Validate a mapping as a VehicleSpec; raise :class:`SpecError` listing every problem.

    A mapping with a ``wheels`` table is a wheeled vehicle
    (:class:`~trackdyn.spec.wheeled.WheeledVehicleSpec`); one that has both ``wheels`` and a table of a
    track's running gear is refused, naming them.

    ``base``: the folder against which relative file references (``chassis.hull = "hull.obj"``) resolve (a path
    or an ``importlib.resources`` traversable); default the working directory.
    """
    cls = VehicleSpec
    if isinstance(data, dict) and "wheels" in data:
        from .wheeled import TRACK_SECTIONS, WheeledVehicleSpec

        both = [k for k in TRACK_SECTIONS if k in data]
        if both:
            raise SpecError([("wheels", _WHOLE, f"a vehicle runs on wheels or on tracks, not both: remove "
                                                f"[wheels] or the track's {', '.join(f'[{k}]' for k in both)}")],
                            source)
        cls = WheeledVehicleSpec
    try:
        return cls.model_validate(data, context={"base": base})
    except ValidationError as err:
        raise SpecError.from_validation(err, source) from None
