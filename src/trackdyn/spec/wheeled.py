"""WheeledVehicleSpec: a vehicle on wheels with tyres instead of tracks (issue #32, kim-2012's 6x6 robot).

A spec file describes a wheeled vehicle by a ``[wheels]`` table (the stations of trailing arms, each carrying
one wheel, and the arms' rotational spring-dampers), a ``[tyre]`` table (the point tyre's vertical law and
slip law, :mod:`trackdyn.contact.tyre`) and a ``[powertrain]`` of wheel motors, and has no ``[sprocket]``,
``[idler]``, ``[suspension]``, ``[shoes]``, ``[tracks]`` or ``[rollers]``:
:func:`~trackdyn.spec.vehicle.validate_spec` picks this class when it finds ``[wheels]`` and refuses a file that
has both.

Geometry is given for the **left** side in the vehicle frame (x forward, y left, z up; the origin is the spec's
choice, stated in its file); the right side mirrors it in y. All values SI (m, kg, s, N, rad).

Example
-------
>>> import trackdyn as td
>>> spec = td.vehicles.get("robot-6x6")
>>> spec.running_gear, len(spec.wheels.stations)
('wheels', 3)
"""

from __future__ import annotations

import math

from pydantic import Field, field_validator, model_validator

from .vehicle import (ChassisSpec, Finite, Inertia, NonNeg, Positive, SeatSpec, SpecModel, XZ, _check_inertia,
                      _increasing_table)

__all__ = ["WheelStationSpec", "WheelsSpec", "TyreSpec", "WheelPowertrainSpec", "WheeledVehicleSpec",
           "TRACK_SECTIONS"]

#: The tables of a tracked vehicle's running gear: a wheeled spec has none of them.
TRACK_SECTIONS = ("sprocket", "idler", "suspension", "rollers", "shoes", "tracks")


class WheelStationSpec(SpecModel):
    """One wheel station of the left side: a trailing (or leading) arm on a pivot, carrying one wheel."""

    pivot: XZ = Field(description="arm pivot (x, z) on the chassis, m (vehicle frame)")
    driven: bool = Field(True, description="the wheel has a motor (in-wheel / in-arm drive) between arm and wheel")


class WheelsSpec(SpecModel):
    """Arm suspension and wheels, the same at every station (kim-2012 Fig. 6: an in-arm suspension unit).

    Each arm turns about the lateral axis through its pivot; a linear rotational spring-damper (RSDA) between
    the chassis and the arm resists ``θ - free_angle`` with ``spring_stiffness`` and the arm's rate with
    ``spring_damping``, where θ is the arm angle below the horizontal (positive: wheel below the pivot). The
    wheel turns on a revolute at the arm's end, ``arm_length`` from the pivot. ``free_angle`` absent: derived
    at assembly so that the vehicle stands on level ground with every arm at ``design_angle``
    (:func:`trackdyn.assembly.wheeled.static_loads`).
    """

    stations: tuple[WheelStationSpec, ...] = Field(min_length=1, description="front to rear")
    lateral_offset: Positive = Field(description="y of the left wheels' mid-plane, m (right: -y)")
    arm_length: Positive = Field(description="pivot to wheel centre, m")
    design_angle: Finite = Field(description="arm angle below horizontal at the design pose, rad")
    trailing: bool = Field(True, description="the wheel is behind its pivot")
    arm_mass: Positive = Field(description="arm (suspension housing), kg")
    arm_inertia: Inertia = Field(description="arm principal moments (x, y, z), kg m^2")
    radius: Positive = Field(description="unloaded tyre radius, m")
    width: Positive = Field(description="tyre width, m")
    mass: Positive = Field(description="wheel (tyre and rim), kg")
    inertia: Inertia = Field(description="wheel principal moments (x, y, z), kg m^2; y is the axle")
    spring_stiffness: Positive = Field(description="arm's rotational spring, N m/rad")
    spring_damping: NonNeg = Field(description="arm's rotational damper, N m s/rad")
    free_angle: Finite | None = Field(None, description="arm angle below horizontal at zero spring torque, rad; "
                                                        "absent: derived (the vehicle stands at design_angle)")

    _i1 = field_validator("arm_inertia")(classmethod(lambda cls, v: _check_inertia(v)))
    _i2 = field_validator("inertia")(classmethod(lambda cls, v: _check_inertia(v)))

    def wheel_centres(self) -> list[tuple[float, float]]:
        """Wheel centres (x, z) of the left side at the design pose, m (vehicle frame), front to rear."""
        sgn = -1.0 if self.trailing else 1.0
        c, s = math.cos(self.design_angle), math.sin(self.design_angle)
        return [(st.pivot[0] + sgn * self.arm_length * c, st.pivot[1] - self.arm_length * s)
                for st in self.stations]

    @model_validator(mode="after")
    def _layout(self):
        xs = [st.pivot[0] for st in self.stations]
        if any(b >= a for a, b in zip(xs, xs[1:])):
            raise ValueError(f"stations must be ordered front to rear (pivot x decreasing), got x = {xs}")
        if not -0.5 * math.pi < self.design_angle < 0.5 * math.pi:
            raise ValueError(f"design_angle = {self.design_angle!r}: an arm angle below the horizontal between "
                             "-pi/2 and pi/2 rad is expected (radians, not degrees?)")
        if self.width > 2.0 * self.lateral_offset:
            raise ValueError(f"width = {self.width}: the left and right wheels (mid-planes at y = "
                             f"±{self.lateral_offset}) would overlap")
        wc = self.wheel_centres()
        for k, (a, b) in enumerate(zip(wc, wc[1:])):
            d = math.hypot(a[0] - b[0], a[1] - b[1])
            if d <= 2.0 * self.radius:
                raise ValueError(f"stations[{k}] and stations[{k + 1}]: their wheels' centres are {d:.4g} m apart "
                                 f"at the design pose, not more than two radii ({2 * self.radius:.4g} m): the tyres "
                                 "overlap")
        return self


class TyreSpec(SpecModel):
    """Point-contact tyre (:mod:`trackdyn.contact.tyre`): a vertical spring-damper and a saturating slip law.

    Vertical: ``F_z = max(0, k δ + c δ̇)`` while the deflection δ > 0. Horizontal: the slip vector
    ``σ = -v_c / max(|v_x|, |ω R|, v_min)`` of the contact point's velocity ``v_c`` in the ground plane gives
    ``F = μ F_z tanh(|σ| / slip_ref) σ / |σ|``; for pure longitudinal slip this is the documented
    ``F_x = μ F_z tanh(κ / κ_ref)``.
    """

    stiffness: Positive = Field(description="vertical stiffness k, N/m (kim-2012 Table 1: 200 kN/m)")
    damping: NonNeg = Field(description="vertical damping c, N s/m")
    friction: Positive = Field(description="friction coefficient μ of the slip law's limit, -")
    slip_ref: Positive = Field(description="slip at which tanh reaches 0.76 of μ F_z (κ_ref), -")
    v_min: Positive = Field(0.1, description="speed floor of the slip's denominator, m/s")

    @model_validator(mode="after")
    def _ranges(self):
        if self.friction > 3.0:
            raise ValueError(f"friction = {self.friction}: a tyre-ground friction coefficient above 3 is not physical")
        if self.slip_ref > 1.0:
            raise ValueError(f"slip_ref = {self.slip_ref}: the slip law's reference slip should be a fraction "
                             "(tyres reach their peak force at 0.05-0.3)")
        return self


class WheelPowertrainSpec(SpecModel):
    """Motor torque against wheel speed at full throttle, per driven wheel, and its brake.

    Skid steering as the tracked powertrain's (:class:`~trackdyn.spec.vehicle.PowertrainSpec`): steering s > 0
    turns left; the inner side's throttle is scaled by ``1 - |s|`` and it is braked with ``|s|``.
    """

    torque_map: tuple[tuple[NonNeg, Finite], ...] = Field(description="(wheel speed rad/s, torque N m) pairs, "
                                                                      "per driven wheel")
    brake_torque: NonNeg = Field(description="per wheel, N m")

    @field_validator("torque_map")
    @classmethod
    def _map(cls, v):
        return _increasing_table(v, "a torque map", "wheel speeds")


class WheeledVehicleSpec(SpecModel):
    """A vehicle on wheels: chassis, arm-suspended wheels on point tyres, wheel motors (module docstring)."""

    name: str = Field(min_length=1)
    description: str = ""
    chassis: ChassisSpec
    wheels: WheelsSpec
    tyre: TyreSpec
    powertrain: WheelPowertrainSpec
    seat: SeatSpec | None = Field(None, description="optional seat on a spring-damper relative to the cab")

    @property
    def running_gear(self) -> str:
        """``"wheels"`` (a :class:`~trackdyn.spec.vehicle.VehicleSpec` says ``"tracks"``)."""
        return "wheels"

    @model_validator(mode="after")
    def _no_hull(self):
        if self.chassis.hull:
            raise ValueError("chassis.hull: a wheeled vehicle's hull has no contact with the terrain yet (its tyres "
                             "are point contacts on the ground under the wheels); leave it out")
        return self

    @model_validator(mode="after")
    def _above_ground(self):
        wc = self.wheels.wheel_centres()
        ground = min(z for _, z in wc) - self.wheels.radius
        cz = self.chassis.com[2]
        if cz <= ground:
            raise ValueError(f"chassis.com z = {cz} is at or below the ground line z = {ground:.4g} m of the design "
                             "pose (lowest wheel centre minus the tyre radius): a sign or frame error?")
        return self

    def replace(self, changes: dict | None = None, **kw) -> "WheeledVehicleSpec":
        """A new, validated spec with ``changes`` applied; keys are dotted paths (``"tyre.stiffness"``)."""
        from .vehicle import _set_path, validate_spec

        data = self.model_dump(mode="json")
        for path, value in {**(changes or {}), **kw}.items():
            _set_path(data, path, value)
        return validate_spec(data)
