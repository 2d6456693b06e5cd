"""The braked sprocket on the spatial recursive formulation: the drivetrain's brake taken backward-Euler on the
sprocket's joint coordinate (``RecursiveSpatialSystem(implicit_damping=...)``), against the closed form.

A disc of the M113 sprocket's inertia about its axle (1.52 kg m²) on a revolute joint to a fixed hull, braked
by the drivetrain's law ``J ω̇ = −T_b tanh(ω / ω_b)`` (T_b = 1e4 N m, ω_b = 0.05 rad/s; trackdyn.powertrain) from
ω0: ``ω(t) = ω_b asinh(sinh(ω0 / ω_b) exp(−T_b t / (J ω_b)))``, sliding at the constant deceleration T_b / J
until near rest, then decaying with the time constant J ω_b / T_b = 7.6 µs. The brake law is the one the recursive
fidelity hands the system (``assembly.recursive_fidelity._BrakeLaw``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from trackdyn.assembly.recursive_fidelity import _BrakeLaw
from trackdyn.driver import Brake
from trackdyn.formulations.recursive_spatial import RecursiveSpatialSystem
from _recursive_helpers import joint_rate_trace  # (same folder)
from trackdyn.mbs.joints import Fixed, Revolute
from trackdyn.mbs.model import Model
from trackdyn.powertrain import BRAKE_SPEED, Drivetrain

J = 1.52  # kg m², the M113 sprocket about its axle
T_B = 1.0e4  # N m, the M113 brake


def _braked_discs(omega0: float, implicit: bool = True):
    """Two discs (the drivetrain's two sprockets) on a hull fixed to the ground, both at ω0 about y, brakes on."""
    m = Model(gravity=(0.0, 0.0, -9.81))
    hull = m.add_body("hull", mass=100.0, inertia=[10.0, 10.0, 10.0])
    m.add_joint(Fixed(m.ground, hull, point=[0.0, 0.0, 0.0], name="mount"))
    for k, y in enumerate((1.0, -1.0)):
        d = m.add_body(f"disc{k}", mass=20.0, inertia=[1.0, J, 1.0], pos=[0.0, y, 0.0], omega=[0.0, omega0, 0.0])
        m.add_joint(Revolute(hull, d, point=[0.0, y, 0.0], axis=[0.0, 1.0, 0.0], name=f"axle{k}"))
    idx = {n: i for i, n in enumerate(m.body_names)}
    drive = Drivetrain(idx["hull"], (idx["disc0"], idx["disc1"]), [[0.0, 0.0], [100.0, 0.0]], T_B, Brake())
    system = RecursiveSpatialSystem(m, providers=[drive], implicit_damping=[_BrakeLaw(drive)] if implicit else [])
    return system, int(system.node_q[system.node_of_body[idx["disc0"]]])


def _exact(t, omega0):
    return BRAKE_SPEED * np.arcsinh(np.sinh(omega0 / BRAKE_SPEED) * np.exp(-T_B * t / (J * BRAKE_SPEED)))


def _run(h, t_end, omega0=2.0, implicit=True):
    """(t, ω) of the first disc over ``t_end`` at step h."""
    system, k = _braked_discs(omega0, implicit)
    return joint_rate_trace(system, k, h, t_end)


def test_the_law_is_the_drivetrains():
    """The brake law's torque and slope are the drivetrain kernel's (the same formula, not a copy that drifts)."""
    from trackdyn.powertrain import sprocket_torque

    system, _ = _braked_discs(0.0)
    law = system._implicit[0][0]
    law.drivetrain.braking[:] = 1.0
    zero = np.zeros(2)
    for ws in (-3.0, -0.04, 0.0, 0.013, 0.2, 5.0):
        T, dT = law.implicit_torque(0, ws)
        Tk, dTk = sprocket_torque(ws, 0.0, 1.0, T_B, zero, zero, 1.0)
        assert T == pytest.approx(Tk, rel=1e-14, abs=1e-12) and dT == pytest.approx(dTk, rel=1e-14, abs=1e-12)


def test_sliding_brake_is_integrated_exactly():
    """While the disc slides (|ω| ≫ ω_b) the brake's slope is ~0 (below 1e-17 N m s/rad here), the implicit term
    vanishes and RK4 integrates the constant deceleration to rounding: |ω − exact| ≤ 1e-12 rad/s up to 1e-4 s
    (ω from 2 down to 1.34 rad/s; measured 0 to 4e-16)."""
    t, w = _run(2.5e-5, 1e-4)
    assert np.max(np.abs(w - _exact(t, 2.0))) <= 1e-12


def test_braked_disc_at_the_fidelity_step_stops_without_chatter():
    """At the fidelity's 5e-4 s (66 brake time constants), from 2 rad/s (the exact stop takes 3.0e-4 s): the speed
    falls monotonically, never changes sign, and is below 1e-6 rad/s after 0.01 s (measured 7.9e-9: 2, 0.76, 0.29,
    0.11 rad/s..., RK4 on the backward-Euler stage rates, 0.375 a step in the stiff limit hλ → −∞). Without the
    implicit brake the same run chatters (the speed changes sign and keeps |ω| ≥ 0.1 rad/s at the end, measured
    −0.20)."""
    t, w = _run(5e-4, 0.01)
    assert np.all(w >= 0.0)
    assert np.all(np.diff(w) <= 0.0)
    assert abs(w[-1]) <= 1e-6
    _, w_explicit = _run(5e-4, 0.01, implicit=False)
    assert np.any(w_explicit < 0.0) and abs(w_explicit[-1]) >= 0.1


def test_braked_disc_converges_to_the_closed_form():
    """The largest |ω − exact| over the first 3 ms (through the stop) falls at least first order with h (the
    brake is backward-Euler over h near rest): measured 0.243, 0.057, 0.0060 rad/s at 1e-4, 2.5e-5, 2.5e-6 s
    (ratios 4.3 and 9.5 for h / 4 and h / 10); asserted: each ratio at least 0.8 of the step ratio and the error at
    2.5e-6 s below 0.01 rad/s (0.3 % of ω0)."""
    errs = []
    for h in (1e-4, 2.5e-5, 2.5e-6):
        t, w = _run(h, 3e-3)
        errs.append(float(np.max(np.abs(w - _exact(t, 2.0)))))
    assert errs[0] / errs[1] >= 0.8 * 4.0
    assert errs[1] / errs[2] >= 0.8 * 10.0
    assert errs[2] <= 0.01


def test_implicit_damping_is_the_joint_pivot_term():
    """With the brake implicit the evaluation solves ``(M + h C) q̈ = Q``: at rest (ω = 0.01 rad/s, inside the
    brake's stiff band) the disc's q̈ equals the scalar backward-Euler root of ``J x = T(ω + h x)`` to 1e-9."""
    h = 5e-4
    omega0 = 0.01
    system, k = _braked_discs(omega0)
    st = system.initial_state()
    system.begin_step(st, h)
    ex = st.extra
    qdd, _ = system.accelerations(0.0, ex["recursive.q"], ex["recursive.qd"])
    x = qdd[k]
    # the scalar root by bisection (J x + T_b tanh((ω0 + h x) / ω_b) rises in x)
    lo, hi = -omega0 / h, 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if J * mid + T_B * math.tanh((omega0 + h * mid) / BRAKE_SPEED) < 0.0:
            lo = mid
        else:
            hi = mid
    assert x == pytest.approx(0.5 * (lo + hi), rel=1e-9)
    assert system.joint_damping[k] > 0.0
