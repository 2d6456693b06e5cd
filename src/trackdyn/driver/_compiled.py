"""Compiled form of the built-in drivers: one kernel call decides a step's throttle, steering and braking.

The time loops (the link-track :class:`~trackdyn.powertrain.Drivetrain`, the
massless stepper's chunks of steps) decide the driver's inputs every step;
for :class:`~trackdyn.driver.PID`, :class:`~trackdyn.driver.FullThrottle`,
:class:`~trackdyn.driver.Idle` and :class:`~trackdyn.driver.Brake` they call
:func:`decide` instead of the Python ``inputs`` (which costs 10-50 µs of
interpreter per step inside a running loop). :func:`decide` observes the hull
from its state row and does the operations of the Python drivers in the same
order; other drivers (user subclasses, :class:`~trackdyn.driver.Scripted`)
keep the Python path.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["DRV_NONE", "DRV_PID", "DRV_IDLE", "DRV_BRAKE", "DRV_FULL", "N_PAR", "compiled_form", "decide"]

DRV_NONE = 0     # no drivetrain: nothing to decide
DRV_PID = 1      # trackdyn.driver.PID
DRV_IDLE = 2     # trackdyn.driver.Idle
DRV_BRAKE = 3    # trackdyn.driver.Brake
DRV_FULL = 4     # trackdyn.driver.FullThrottle (its delay in pid[11])

# pid (N_PAR,): speed, heading, y, kp, ki, kd, initial_throttle, kh, kr, ky, brake_deadband, delay, has_y
N_PAR = 13


def compiled_form(driver):
    """``(kind, parameters)`` of a built-in driver for :func:`decide`, or None (the driver stays in Python).

    Only the exact built-in classes qualify: a subclass may override ``inputs``.
    """
    from . import PID, Brake, FullThrottle, Idle

    if driver is None:
        return DRV_NONE, np.zeros(N_PAR)
    d = driver
    if type(d) is PID:
        p = np.array([d.speed, d.heading, 0.0 if d.y is None else d.y, d.kp, d.ki, d.kd, d.initial_throttle,
                      d.kh, d.kr, d.ky, d.brake_deadband, d.delay, 0.0 if d.y is None else 1.0], float)
        return DRV_PID, p
    if type(d) is FullThrottle:
        p = np.zeros(N_PAR)
        p[11] = d.delay
        return DRV_FULL, p
    if type(d) is Idle:
        return DRV_IDLE, np.zeros(N_PAR)
    if type(d) is Brake:
        return DRV_BRAKE, np.zeros(N_PAR)
    return None


@nb.njit(cache=True, _nrt=False)
def decide(drv, pid, t, h, q, v, C, mem, throttle, braking):
    """The driver's inputs from the hull's state (row ``C`` of q (nb, 7), v (nb, 6)); returns (th, steer, br).

    Also splits them per track into ``throttle``, ``braking`` (2,) as
    :func:`trackdyn.powertrain.track_inputs` does. Same operations in the same
    order as the Python drivers (so the same round-off as an observation built
    from the same state row); ``mem`` (3,) is updated in place (∫e, previous
    e, started).
    """
    if drv == DRV_NONE:
        return 0.0, 0.0, 0.0
    th, steer, br = 0.0, 0.0, 0.0
    if drv == DRV_BRAKE:
        br = 1.0
    elif drv == DRV_FULL:
        if t >= pid[11]:
            th = 1.0
        else:
            br = 1.0
    elif drv == DRV_PID:
        e0, e1, e2, e3 = q[C, 3], q[C, 4], q[C, 5], q[C, 6]
        vx, vy, vz, wx, wy, wz = v[C, 0], v[C, 1], v[C, 2], v[C, 3], v[C, 4], v[C, 5]
        f0, f1, f2 = 1 - 2 * (e2 * e2 + e3 * e3), 2 * (e1 * e2 + e0 * e3), 2 * (e1 * e3 - e0 * e2)
        s2 = 2 * (e2 * e3 + e0 * e1)
        u2 = 1 - 2 * (e1 * e1 + e2 * e2)
        yaw_rate = f2 * wx + s2 * wy + u2 * wz
        speed = vx * f0 + vy * f1 + vz * f2
        heading = math.atan2(f1, f0)
        y = q[C, 1]
        delay = pid[11]
        if t < delay:
            th, steer, br = 0.0, 0.0, 1.0
        else:
            kp, ki, kd = pid[3], pid[4], pid[5]
            e = pid[0] - speed
            m0, m1, m2 = mem[0], mem[1], mem[2]
            if m2 == 0.0 and ki > 0:
                m0, m1, m2 = pid[6] / ki, e, 1.0
            integ = m0 + e * h
            de = (e - m1) / h if h > 0 and t > delay + h else 0.0
            u = kp * e + ki * integ + kd * de
            if (u > 1.0 and e > 0) or (u < -1.0 and e < 0):
                integ = m0
                u = kp * e + ki * integ + kd * de
            th = min(max(u, 0.0), 1.0)
            br = min(max(-u - pid[10], 0.0), 1.0)
            d = pid[1] - heading
            dpsi = math.atan2(math.sin(d), math.cos(d))
            steer = pid[7] * dpsi - pid[8] * yaw_rate
            if pid[12] != 0.0:
                steer += pid[9] * (pid[2] - y)
            steer = min(max(steer, -1.0), 1.0)
            mem[0] = integ
            mem[1] = e
            mem[2] = 1.0
    s = abs(steer)
    inner = 0 if steer > 0 else 1
    for i in range(throttle.shape[0]):
        throttle[i] = th
        braking[i] = br
    throttle[inner] = th * (1.0 - s)
    braking[inner] = min(1.0, br + s)
    return th, steer, br
