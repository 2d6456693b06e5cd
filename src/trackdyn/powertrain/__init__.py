"""Powertrain and driveline: sprocket torque from a torque–speed map, skid steering, brakes.

:class:`Drivetrain` is a force provider. Each step it observes the chassis
(forward speed, heading, yaw rate), asks the driver for throttle, steering
and braking (driver memory in ``State.extra["driver"]``), and applies to each
sprocket, about the chassis's y axis (reaction on the chassis),

- drive torque ``throttle_side · T_map(ω_s · s)`` with ``ω_s`` the sprocket's
  speed relative to the chassis (positive driving forward), ``T_map`` the
  full-throttle map (korner-2024 Table 3.10, clamped at its ends) and ``s`` 1
  for a map against sprocket speed or the pin-circle radius for a map against
  track speed (``PowertrainSpec.map_speed``);
- brake torque ``-braking_side · T_brake · tanh(ω_s / 0.05 rad/s)``.

Skid steering (steering s > 0 turns left): the inner track's throttle is
scaled by ``1 - |s|`` and it is braked with ``|s|``. The torque's derivative
with respect to the sprocket and chassis angular velocities enters the
Newton matrix (the map's falling slope acts as a damper).

A kinematic driver (:class:`~trackdyn.driver.SprocketSpeed`) replaces the map
by a stiff speed servo ``T = K (ω_ref(t) - ω_s)`` with ``K = 1e6`` N m s/rad,
implicit through its Jacobian: the sprocket follows the prescribed speed with
an error of the load torque over K (0.01 rad/s at 10 kN m).

:class:`WheelDrivetrain` is the same driveline for a wheeled vehicle: a motor
in each driven wheel's arm (in-arm / in-wheel drive) applies the map's torque
between the arm and the wheel, each side's wheels take that side's throttle
and braking, so skid steering works as for the tracks; a
:class:`~trackdyn.driver.SideSpeed` driver prescribes each side's wheel speed
through the same stiff servo.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .._compiled import bound_call
from ..driver import Observation
from ..driver._compiled import compiled_form, decide
from ..mbs import _force_kernels as FK

__all__ = ["Drivetrain", "WheelDrivetrain", "track_inputs"]

BRAKE_SPEED = 0.05  # rad/s: regularisation of the brake torque's sign


SERVO_GAIN = 1e6  # N m s/rad, prescribed sprocket speed


def track_inputs(th, steer, br, throttle, braking) -> None:
    """Per-track throttle and braking (left = 0, right = 1) from the driver's throttle, steering, braking.

    Skid steering: steering > 0 turns left, so the left track is the inner one; the inner track's throttle
    is cut by ``|steer|`` and its braking raised by it. (The compiled driver of the real-time massless
    loop and of the link-track drivetrain, :func:`trackdyn.driver._compiled.decide`, does the same operations in
    the same order.)
    """
    s = abs(steer)
    inner = 0 if steer > 0 else 1
    throttle[:] = th
    braking[:] = br
    throttle[inner] = th * (1.0 - s)
    braking[inner] = min(1.0, br + s)


@nb.njit(cache=True, _nrt=False)
def sprocket_torque(ws, throttle, braking, brake_torque, map_w, map_t, map_scale):
    """Drive torque T (N m) at sprocket speed ``ws`` (rad/s, relative to the hull) and dT/dws.

    ``throttle`` × the map (clamped, linear between points; its abscissa is
    ``ws · map_scale``: 1, or the pin-circle radius when the map is against
    track speed) minus ``braking`` × ``brake_torque`` × tanh(ws / BRAKE_SPEED).
    """
    n = map_w.shape[0]
    xs = ws * map_scale
    if xs <= map_w[0]:
        tm, dtm = map_t[0], 0.0
    elif xs >= map_w[n - 1]:
        tm, dtm = map_t[n - 1], 0.0
    else:
        k = 0
        while map_w[k + 1] < xs:
            k += 1
        dtm = (map_t[k + 1] - map_t[k]) / (map_w[k + 1] - map_w[k]) * map_scale
        tm = map_t[k] + dtm / map_scale * (xs - map_w[k])
    th = math.tanh(ws / BRAKE_SPEED)
    T = throttle * tm - braking * brake_torque * th
    dT = throttle * dtm - braking * brake_torque * (1.0 - th * th) / BRAKE_SPEED
    return T, dT


@nb.njit(cache=True, _nrt=False, inline="always")
def _motor_element(e, stator, b, R, omega_w, throttle, braking, map_w, map_t, map_scale, brake_torque, servo_ref,
                   servo_gain, Q, Kx, Kv, out, dX, dV):
    """One motor e: the torque on body b about its stator's y axis, reacting on the stator, into row e of Q, Kx, Kv
    and (torque, speed relative to the stator) into out[e]; dX (zero) and dV (3, 12) scratch."""
    for a in range(12):
        Q[e, a] = 0.0
        for c in range(12):
            Kx[e, a, c] = 0.0
            Kv[e, a, c] = 0.0
    ay = (R[stator, 0, 1], R[stator, 1, 1], R[stator, 2, 1])
    ws = ay[0] * (omega_w[b, 0] - omega_w[stator, 0]) + ay[1] * (omega_w[b, 1] - omega_w[stator, 1]) \
        + ay[2] * (omega_w[b, 2] - omega_w[stator, 2])
    T, dT = sprocket_torque(ws, throttle, braking, brake_torque, map_w, map_t, map_scale)
    if servo_gain > 0.0:
        T = servo_gain * (servo_ref - ws)
        dT = -servo_gain
    out[e, 0] = T
    out[e, 1] = ws
    # ∂ω_s/∂ω̄_b = A_bᵀ a ; ∂ω_s/∂ω̄_stator = -ȳ
    as_ = (R[b, 0, 0] * ay[0] + R[b, 1, 0] * ay[1] + R[b, 2, 0] * ay[2],
           R[b, 0, 1] * ay[0] + R[b, 1, 1] * ay[1] + R[b, 2, 1] * ay[2],
           R[b, 0, 2] * ay[0] + R[b, 1, 2] * ay[1] + R[b, 2, 2] * ay[2])
    for a in range(3):
        for c in range(12):
            dV[a, c] = 0.0
        for c in range(3):
            dV[a, 9 + c] = ay[a] * dT * as_[c]
        dV[a, 3 + 1] = -ay[a] * dT
    FK.apply_torque(e, (T * ay[0], T * ay[1], T * ay[2]), dX, dV, R, stator, b, Q, Kx, Kv)


@nb.njit(cache=True, _nrt=False)
def _drive_kernel(chassis, sprockets, R, omega_w, throttle, braking, map_w, map_t, map_scale, brake_torque,
                  servo_ref, servo_gain, Q, Kx, Kv, out, dX, dV):
    """Sprocket torques into Q, Kx, Kv (2, 12[, 12]) and (torque, speed) into out; dX, dV (3, 12) scratch."""
    for a in range(3):
        for c in range(12):
            dX[a, c] = 0.0
    for e in range(sprockets.shape[0]):
        _motor_element(e, chassis, sprockets[e], R, omega_w, throttle[e], braking[e], map_w, map_t, map_scale,
                       brake_torque, servo_ref, servo_gain, Q, Kx, Kv, out, dX, dV)


class Drivetrain:
    """Force provider driving the sprockets of a built vehicle with a driver.

    Recorded: ``driver.throttle``, ``driver.steering``, ``driver.braking``,
    ``left.sprocket.torque``, ``left.sprocket.speed`` (and right).
    """

    name = "drivetrain"

    def __init__(self, chassis: int, sprockets: tuple[int, int], torque_map, brake_torque: float, driver,
                 map_scale: float = 1.0):
        self.chassis = int(chassis)
        self.sprockets = np.array(sprockets, dtype=np.int64)
        tm = np.asarray(torque_map, dtype=float)
        self.map_w = tm[:, 0].copy()
        self.map_t = tm[:, 1].copy()
        self.brake_torque = float(brake_torque)
        self.map_scale = float(map_scale)  # m of track per rad of sprocket when the map is against track speed
        self.driver = driver
        self._servo_profile = driver.speed_profile() if getattr(driver, "kinematic", False) else None
        # built-in drivers decide in one compiled call (the Python driver cost ~50 µs per step in a running loop)
        self._compiled = None if getattr(driver, "kinematic", False) else compiled_form(driver)
        self.inputs = np.zeros(3)
        self.out = np.zeros((2, 2))
        self.throttle = np.zeros(2)
        self.braking = np.zeros(2)
        self.Q = np.zeros((2, 12))
        self.Kx = np.zeros((2, 12, 12))
        self.Kv = np.zeros((2, 12, 12))
        self._dX = np.zeros((3, 12))
        self._dV = np.zeros((3, 12))
        self.body = np.array([[self.chassis, s] for s in self.sprockets], dtype=np.int64)
        self._staged = None
        self._step_key = None
        self._h_step = 0.0  # the step size of the last step (a sample's decision uses it)
        self._kin = self._drive_call = None  # bind

    # -- provider protocol
    def coupling_pairs(self):
        return [tuple(b) for b in self.body]

    def bind(self, system):
        self.slot = np.array([system.pattern.element_slots(b) for b in self.body])
        # the map's torques, bound once to the system's kinematics (a kinematic driver's servo reference changes
        # with time: it takes the general call)
        self._kin = system.kin
        self._drive_call = None if getattr(self.driver, "kinematic", False) else bound_call(
            _drive_kernel, self.chassis, self.sprockets, system.kin.R, system.kin.omega_w, self.throttle,
            self.braking, self.map_w, self.map_t, self.map_scale, self.brake_torque, 0.0, 0.0, self.Q, self.Kx,
            self.Kv, self.out, self._dX, self._dV)

    def initial_extra(self):
        return {"driver": np.zeros(max(self.driver.memory_size(), 1))}

    def observe(self, t, kin) -> Observation:
        c = self.chassis
        # plain floats: this runs every step, and NumPy scalars cost more than the arithmetic (3x in situ)
        f0, f1, f2 = kin.R[c, :, 0].tolist()
        vx, vy, vz = kin.vel[c].tolist()
        x, y = kin.pos[c, :2].tolist()
        return Observation(t=t, speed=vx * f0 + vy * f1 + vz * f2, heading=math.atan2(f1, f0),
                           yaw_rate=float(kin.omega_w[c, 2]), y=y, x=x)

    def _decide(self, st, kin, h):
        """The driver's inputs from state ``st`` for a step of ``h`` (into the throttle/braking arrays and
        ``inputs``); returns the driver's new memory."""
        mem = st.extra.get("driver")
        if mem is None:
            mem = np.zeros(1)
        inputs = self.inputs
        if self._compiled is not None:
            kind, par = self._compiled
            # the kernel reads 3 entries (a PID's; other drivers keep a placeholder of 1): pad, return as given
            m = mem.shape[0]
            if m >= 3:
                new_mem = mem.copy()
            else:
                new_mem = np.zeros(3)
                new_mem[:m] = mem
            th, steer, br = decide(kind, par, st.t, h, st.q, st.v, self.chassis, new_mem, self.throttle, self.braking)
            # three scalar stores: a tuple assigned to the slice is converted to an array first (1 us a step)
            inputs[0], inputs[1], inputs[2] = th, steer, br
            return new_mem[:m]
        obs = self.observe(st.t, kin)
        th, steer, br, new_mem = self.driver.inputs(obs, h, mem.copy())
        inputs[0], inputs[1], inputs[2] = th, steer, br
        track_inputs(th, steer, br, self.throttle, self.braking)
        return new_mem

    def accumulate(self, ctx):
        st = ctx.state
        key = (st.t, id(st))
        if ctx.data is None:
            # a recorded sample: show the decision the step from this state will take, but leave it to that
            # step (an output evaluation has h = 0: caching its decision skipped the PID's integral update
            # at every sample, i.e. changed the dynamics with the output rate)
            self._decide(st, ctx.kin, self._h_step)
            self._step_key = None
        elif key != self._step_key:  # driver decides once per step, from the step's initial state
            self._staged = np.asarray(self._decide(st, ctx.kin, ctx.h), dtype=float)
            self._step_key = key
            self._h_step = ctx.h
        if ctx.kin is self._kin and self._drive_call is not None and not self.driver.kinematic:
            self._drive_call()  # the driver may be replaced after bind: a kinematic one takes the general call
        else:
            if self.driver.kinematic:
                ref, gain = float(self._servo_profile.value(st.t + ctx.h)), SERVO_GAIN
            else:
                ref, gain = 0.0, 0.0
            _drive_kernel(self.chassis, self.sprockets, ctx.kin.R, ctx.kin.omega_w, self.throttle, self.braking,
                          self.map_w, self.map_t, self.map_scale, self.brake_torque, ref, gain, self.Q, self.Kx,
                          self.Kv, self.out, self._dX, self._dV)
        if ctx.data is not None:
            FK.scatter_elements(self.body, self.Q, self.Kx, self.Kv, self.slot, ctx.cK, ctx.cD, st.v, ctx.f,
                                ctx.data, ctx.Dv, ctx.Kxv if ctx.Kxv is not None else np.zeros_like(ctx.Dv))

    def commit(self, state):
        if self._staged is not None:
            state.extra["driver"] = self._staged.copy()

    def series(self):
        return {
            "driver.throttle": (self.inputs, 0), "driver.steering": (self.inputs, 1),
            "driver.braking": (self.inputs, 2),
            "left.sprocket.torque": (self.out[:, 0], 0), "right.sprocket.torque": (self.out[:, 0], 1),
            "left.sprocket.speed": (self.out[:, 1], 0), "right.sprocket.speed": (self.out[:, 1], 1),
        }


@nb.njit(cache=True, _nrt=False)
def _wheel_drive_kernel(arms, wheels, side, R, omega_w, throttle, braking, map_w, map_t, brake_torque, servo_ref,
                        servo_gain, Q, Kx, Kv, out, dX, dV):
    """Motor torques of the driven wheels (about the arm's y axis, reaction on the arm) into Q, Kx, Kv (n, 12[, 12])
    and (torque, speed relative to the arm) into out; dX, dV (3, 12) scratch. As :func:`_drive_kernel` with the
    arm in the chassis's place and the throttle, braking and servo reference of the wheel's ``side``."""
    for a in range(3):
        for c in range(12):
            dX[a, c] = 0.0
    for e in range(wheels.shape[0]):
        sd = side[e]
        _motor_element(e, arms[e], wheels[e], R, omega_w, throttle[sd], braking[sd], map_w, map_t, 1.0,
                       brake_torque, servo_ref[sd], servo_gain, Q, Kx, Kv, out, dX, dV)


class WheelDrivetrain(Drivetrain):
    """Force provider driving the wheels of a wheeled vehicle with a driver (module docstring).

    Parameters
    ----------
    chassis : int
        Body index of the chassis (the driver observes it).
    arms, wheels : sequence of int
        Body indices of each driven wheel and of the arm carrying it (the motor's stator).
    sides : sequence of int
        0 (left) or 1 (right) per driven wheel: the side whose throttle and braking it takes.
    names : sequence of str
        The driven wheels' names: series ``NAME.torque`` (N m) and ``NAME.speed`` (rad/s, relative to the arm).
    torque_map, brake_torque :
        Full-throttle torque against wheel speed (rad/s) and the brake's torque, per wheel.

    Recorded also: ``driver.throttle``, ``driver.steering``, ``driver.braking``.
    """

    name = "drivetrain"

    def __init__(self, chassis: int, arms, wheels, sides, names, torque_map, brake_torque: float, driver):
        self.chassis = int(chassis)
        self.arms = np.ascontiguousarray(arms, dtype=np.int64)
        self.wheels = np.ascontiguousarray(wheels, dtype=np.int64)
        self.side = np.ascontiguousarray(sides, dtype=np.int64)
        self.names = list(names)
        n = len(self.wheels)
        if not (len(self.arms) == n == len(self.side) == len(self.names)) or not np.all((self.side == 0) |
                                                                                          (self.side == 1)):
            raise ValueError("WheelDrivetrain: one arm, one side (0 left, 1 right) and one name per driven wheel")
        self.sprockets = np.zeros(0, dtype=np.int64)  # no sprockets: the monitors' per-track drive figures are absent
        tm = np.asarray(torque_map, dtype=float)
        self.map_w = tm[:, 0].copy()
        self.map_t = tm[:, 1].copy()
        self.brake_torque = float(brake_torque)
        self.map_scale = 1.0
        self.driver = driver
        self._side_profiles = driver.side_profiles() if getattr(driver, "kinematic", False) else None
        self._compiled = None if getattr(driver, "kinematic", False) else compiled_form(driver)
        self.inputs = np.zeros(3)
        self.out = np.zeros((n, 2))
        self.throttle = np.zeros(2)
        self.braking = np.zeros(2)
        self.servo_ref = np.zeros(2)
        self.Q = np.zeros((n, 12))
        self.Kx = np.zeros((n, 12, 12))
        self.Kv = np.zeros((n, 12, 12))
        self._dX = np.zeros((3, 12))
        self._dV = np.zeros((3, 12))
        self.body = np.column_stack([self.arms, self.wheels]).astype(np.int64).reshape(-1, 2)
        self._staged = None
        self._step_key = None
        self._h_step = 0.0
        self._kin = self._drive_call = None

    def bind(self, system):
        self.slot = np.array([system.pattern.element_slots(b) for b in self.body]).reshape(-1, 12, 12)

    def accumulate(self, ctx):
        st = ctx.state
        key = (st.t, id(st))
        if ctx.data is None:
            self._decide(st, ctx.kin, self._h_step)
            self._step_key = None
        elif key != self._step_key:
            self._staged = np.asarray(self._decide(st, ctx.kin, ctx.h), dtype=float)
            self._step_key = key
            self._h_step = ctx.h
        gain = 0.0
        if self._side_profiles is not None:
            gain = SERVO_GAIN
            for k, p in enumerate(self._side_profiles):
                self.servo_ref[k] = float(p.value(st.t + ctx.h))
        _wheel_drive_kernel(self.arms, self.wheels, self.side, ctx.kin.R, ctx.kin.omega_w, self.throttle,
                            self.braking, self.map_w, self.map_t, self.brake_torque, self.servo_ref, gain, self.Q,
                            self.Kx, self.Kv, self.out, self._dX, self._dV)
        if ctx.data is not None:
            FK.scatter_elements(self.body, self.Q, self.Kx, self.Kv, self.slot, ctx.cK, ctx.cD, st.v, ctx.f,
                                ctx.data, ctx.Dv, ctx.Kxv if ctx.Kxv is not None else np.zeros_like(ctx.Dv))

    def series(self):
        out = {"driver.throttle": (self.inputs, 0), "driver.steering": (self.inputs, 1),
               "driver.braking": (self.inputs, 2)}
        for e, nm in enumerate(self.names):
            out[f"{nm}.torque"] = (self.out[:, 0], e)
            out[f"{nm}.speed"] = (self.out[:, 1], e)
        return out
