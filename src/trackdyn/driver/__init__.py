"""Drivers: what the operator does — throttle, steering and braking as functions of time and state.

A driver maps an observation of the vehicle (forward speed, heading, yaw
rate, lateral position, time) and its own memory (plain arrays kept in
``State.extra``, so runs can be checkpointed) to inputs in
``throttle ∈ [0, 1]``, ``steering ∈ [-1, 1]`` (positive: turn left) and
``braking ∈ [0, 1]``. :class:`SprocketSpeed` is different: it prescribes the
sprocket speed kinematically (a motor replaces the axle), as in
wallin-shabana-2013 Fig. 7 and han-sander-mao §4.

Examples
--------
>>> import trackdyn as td
>>> td.drivers.FullThrottle()
FullThrottle(delay=0.0)
>>> td.drivers.PID(speed=4.2)  # doctest: +ELLIPSIS
PID(speed=4.2, ...)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from ..mbs.profiles import Profile, as_profile

__all__ = ["Driver", "Observation", "FullThrottle", "Idle", "Brake", "PID", "Scripted", "SprocketSpeed", "SideSpeed"]


@dataclass(frozen=True)
class Observation:
    t: float
    speed: float       # forward speed of the chassis, m/s
    heading: float     # yaw angle, rad
    yaw_rate: float    # rad/s
    y: float           # lateral world position of the chassis centre of mass, m
    x: float


class Driver:
    """Base class. Subclasses implement :meth:`inputs`.

    Numeric parameters are checked on construction: a ``ValueError`` names the
    driver, the parameter, the value and the reason.
    """

    kinematic = False

    def __post_init__(self):
        for f in dataclasses.fields(self):
            if f.name.startswith("_") or f.type not in ("float", "float | None"):
                continue
            val = getattr(self, f.name)
            if val is None and f.type == "float | None":
                continue
            if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val):
                raise ValueError(f"{type(self).__name__}.{f.name} = {val!r}: expected a finite number")

    def memory_size(self) -> int:
        return 0

    def inputs(self, obs: Observation, h: float, memory: np.ndarray) -> tuple[float, float, float, np.ndarray]:
        raise NotImplementedError

    def to_dict(self) -> dict:
        return {"type": type(self).__name__, **{k: v for k, v in self.__dict__.items() if not k.startswith("_")}}


@dataclass
class FullThrottle(Driver):
    """Full throttle after ``delay`` seconds (brakes on before), straight steering."""

    delay: float = 0.0

    def inputs(self, obs, h, memory):
        on = obs.t >= self.delay
        return (1.0 if on else 0.0), 0.0, (0.0 if on else 1.0), memory


@dataclass
class Idle(Driver):
    """No throttle, no brake (the vehicle rolls freely)."""

    def inputs(self, obs, h, memory):
        return 0.0, 0.0, 0.0, memory


@dataclass
class Brake(Driver):
    """Brakes fully on (settling with the sprockets held)."""

    def inputs(self, obs, h, memory):
        return 0.0, 0.0, 1.0, memory


@dataclass
class PID(Driver):
    """Hold a forward ``speed`` (m/s) and drive straight along ``heading`` (rad) and lane ``y`` (m).

    Speed loop: ``u = kp e + ki ∫e + kd ė`` with ``e = speed - v``; ``u > 0``
    is throttle, ``u < -brake_deadband`` brakes; the integral starts at
    ``initial_throttle / ki`` (feed-forward of a rolling start). Heading loop:
    ``steering = kh (ψ_ref - ψ) - kr ψ̇ + ky (y_ref - y)`` (thesis §4.1: a PID
    driver that keeps the vehicle straight at the target speed). ``delay``:
    brakes held until then (settling).
    """

    speed: float = 4.2
    heading: float = 0.0
    y: float | None = None
    kp: float = 2.0
    ki: float = 1.0
    kd: float = 0.0
    initial_throttle: float = 0.3
    kh: float = 2.0
    kr: float = 0.5
    ky: float = 0.3
    brake_deadband: float = 0.2
    delay: float = 0.0

    def memory_size(self):
        return 3  # ∫e, previous e, started flag

    def inputs(self, obs, h, memory):
        if obs.t < self.delay:
            return 0.0, 0.0, 1.0, memory
        e = self.speed - obs.speed
        if memory[2] == 0.0 and self.ki > 0:  # feed-forward start: the integral holds the initial throttle
            memory = np.array([self.initial_throttle / self.ki, e, 1.0])
        integ = memory[0] + e * h
        de = (e - memory[1]) / h if h > 0 and obs.t > self.delay + h else 0.0
        u = self.kp * e + self.ki * integ + self.kd * de
        # anti-windup: freeze the integral when saturated in its direction
        if (u > 1.0 and e > 0) or (u < -1.0 and e < 0):
            integ = memory[0]
            u = self.kp * e + self.ki * integ + self.kd * de
        throttle = min(max(u, 0.0), 1.0)
        braking = min(max(-u - self.brake_deadband, 0.0), 1.0)
        dpsi = math.atan2(math.sin(self.heading - obs.heading), math.cos(self.heading - obs.heading))
        steer = self.kh * dpsi - self.kr * obs.yaw_rate
        if self.y is not None:
            steer += self.ky * (self.y - obs.y)
        steer = min(max(steer, -1.0), 1.0)
        return throttle, steer, braking, np.array([integ, e, 1.0])


@dataclass
class Scripted(Driver):
    """Open-loop schedules of throttle, steering and braking (floats, callables or Profiles)."""

    throttle: object = 0.0
    steering: object = 0.0
    braking: object = 0.0
    _p: tuple = field(default=(), repr=False)

    def __post_init__(self):
        super().__post_init__()
        self._p = tuple(as_profile(v, f"Scripted.{k}") for k, v in
                        (("throttle", self.throttle), ("steering", self.steering), ("braking", self.braking)))

    def inputs(self, obs, h, memory):
        th, st, br = (p.value(obs.t) for p in self._p)
        return min(max(th, 0.0), 1.0), min(max(st, -1.0), 1.0), min(max(br, 0.0), 1.0), memory

    def to_dict(self):
        return {"type": "Scripted", "throttle": repr(self.throttle), "steering": repr(self.steering),
                "braking": repr(self.braking)}


@dataclass
class SprocketSpeed(Driver):
    """Prescribed sprocket speed (rad/s, positive forward) on both sides — a kinematic drive.

    ``SprocketSpeed.ramp(t0, t1, omega)``: 0 before t0, linear to ``omega`` at t1
    (wallin-shabana-2013 Fig. 7: 0 → 25 rad/s between 1 s and 8 s;
    han-sander-mao: 0 → 3.14 rad/s in 0.75 s).
    """

    profile: object = 0.0
    kinematic = True

    @classmethod
    def ramp(cls, t0: float, t1: float, omega: float) -> "SprocketSpeed":
        return cls(Profile.table([t0, t1], [0.0, omega]))

    def speed_profile(self) -> Profile:
        return as_profile(self.profile, "SprocketSpeed.profile")

    def side_profiles(self) -> tuple:
        """The speed of each side's drive (left, right): the same profile (a wheeled vehicle's wheels)."""
        p = self.speed_profile()
        return p, p

    def inputs(self, obs, h, memory):
        return 0.0, 0.0, 0.0, memory

    def to_dict(self):
        return {"type": "SprocketSpeed", "profile": repr(self.profile)}


@dataclass
class SideSpeed(Driver):
    """Prescribed drive speed of each side (rad/s, positive forward): skid steering by speed, kinematically.

    The driven wheels of a wheeled vehicle's left side turn at ``left`` and those of its right side at
    ``right`` (floats, callables or Profiles of time), each through the drivetrain's stiff speed servo; a
    pivot turn is ``left = -right``. The tracked drivetrain holds one servo speed for both sprockets
    (:class:`SprocketSpeed`) and refuses this driver.
    """

    left: object = 0.0
    right: object = 0.0
    kinematic = True

    def side_profiles(self) -> tuple:
        return as_profile(self.left, "SideSpeed.left"), as_profile(self.right, "SideSpeed.right")

    def speed_profile(self) -> Profile:
        raise ValueError("SideSpeed: the tracked drivetrain's servo holds one speed for both sprockets; use "
                         "SprocketSpeed (SideSpeed drives the wheels of a wheeled vehicle)")

    def inputs(self, obs, h, memory):
        return 0.0, 0.0, 0.0, memory

    def to_dict(self):
        return {"type": "SideSpeed", "left": repr(self.left), "right": repr(self.right)}
