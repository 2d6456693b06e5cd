"""The prescribed sprocket speed on the spatial recursive formulation: the drivetrain's speed servo taken
backward-Euler on the sprocket's joint coordinate (``RecursiveSpatialSystem(implicit_damping=...)`` with the
recursive fidelity's ``_ServoLaw``), against the closed form.

A disc of the M113 sprocket's inertia about its axle (J = 1.52 kg m²) on a revolute joint to a fixed hull, driven
by the drivetrain's servo ``J ω̇ = K (r(t) − ω)`` (K = 1e6 N m s/rad, trackdyn.powertrain; time constant
τ = J / K = 1.52e-6 s) with the reference r the crawler study's ramp (:class:`~trackdyn.driver.SprocketSpeed`:
0 until t0, rising at α to ω1 at t1, then held). Closed form from rest: on the ramp ``ω = r − α τ (1 − e^(−(t −
t0)/τ))``, after it ``ω = ω1 − α τ (1 − e^(−(t1 − t0)/τ)) e^(−(t − t1)/τ)``: the servo lags the ramp by α τ (6.4e-6
rad/s here) and catches the held speed within microseconds.
"""

from __future__ import annotations

import numpy as np
import pytest

import trackdyn as td
from trackdyn.assembly.recursive_fidelity import _BrakeLaw, _ServoLaw
from trackdyn.driver import SprocketSpeed
from trackdyn.formulations.contract import get_formulation
from trackdyn.formulations.recursive_spatial import RecursiveSpatialSystem
from trackdyn.integrators.base import StepFailed
from _recursive_helpers import joint_rate_trace  # (same folder)
from trackdyn.mbs.joints import Fixed, Revolute
from trackdyn.mbs.model import Model
from trackdyn.powertrain import SERVO_GAIN, Drivetrain
from trackdyn.sim.run import prepare

J = 1.52  # kg m², the M113 sprocket about its axle
T0, T1, OMEGA1 = 0.02, 0.77, 3.14  # s, s, rad/s: han-sander-mao's ramp (3.14 rad/s in 0.75 s)
ALPHA = OMEGA1 / (T1 - T0)
TAU = J / SERVO_GAIN


def _driven_discs(implicit: bool = True):
    """Two discs (the drivetrain's two sprockets) on a hull fixed to the ground, at rest, speed prescribed."""
    m = Model(gravity=(0.0, 0.0, -9.81))
    hull = m.add_body("hull", mass=100.0, inertia=[10.0, 10.0, 10.0])
    m.add_joint(Fixed(m.ground, hull, point=[0.0, 0.0, 0.0], name="mount"))
    for k, y in enumerate((1.0, -1.0)):
        d = m.add_body(f"disc{k}", mass=20.0, inertia=[1.0, J, 1.0], pos=[0.0, y, 0.0])
        m.add_joint(Revolute(hull, d, point=[0.0, y, 0.0], axis=[0.0, 1.0, 0.0], name=f"axle{k}"))
    idx = {n: i for i, n in enumerate(m.body_names)}
    drive = Drivetrain(idx["hull"], (idx["disc0"], idx["disc1"]), [[0.0, 0.0], [100.0, 0.0]], 1e4,
                       SprocketSpeed.ramp(T0, T1, OMEGA1))
    laws = [_BrakeLaw(drive), _ServoLaw(drive)] if implicit else []
    system = RecursiveSpatialSystem(m, providers=[drive], implicit_damping=laws)
    return system, int(system.node_q[system.node_of_body[idx["disc0"]]])


def _exact(t):
    t = np.asarray(t, dtype=float)
    on = np.clip(t - T0, 0.0, T1 - T0)
    lag = ALPHA * TAU * (1.0 - np.exp(-on / TAU))
    after = np.exp(-np.clip(t - T1, 0.0, None) / TAU)
    return ALPHA * on - lag * after


def _run(h, t_end, implicit=True):
    """(t, ω) of the first disc over ``t_end`` at step h."""
    system, k = _driven_discs(implicit)
    return joint_rate_trace(system, k, h, t_end)


_RUNS: dict = {}


def _cached(h):
    if h not in _RUNS:
        _RUNS[h] = _run(h, 1.0)
    return _RUNS[h]


def test_ramp_is_followed_with_the_servos_own_lag():
    """On the ramp, away from its corners (from 0.1 s after its start to 0.1 s before its end), the disc at the fidelity's 5e-4 s
    follows the closed form to 1e-9 rad/s, 1/6000 of the servo's lag α τ = 6.4e-6 rad/s (measured 4.4e-16 at 5e-4
    s and at 2.5e-4 s: rounding). The scheme is exact there: at every RK4 stage the stage rate solves
    (J + h K) ω̇ = K (r(t + h) − ω), whose particular solution ω = r − α τ is the closed form's and linear in t,
    which RK4 reproduces exactly. The same run with the reference frozen at the step's end for all four stages
    (the drivetrain's t_n + h, no ``torque_offset``) lags by 0.6 α h: measured 1.26e-3 and 6.3e-4 rad/s at 5e-4 and
    2.5e-4 s, so this bound tells the two apart."""
    for h in (5e-4, 2.5e-4):
        t, w = _cached(h)
        mid = (t >= T0 + 0.1) & (t <= T1 - 0.1)
        err = float(np.max(np.abs(w[mid] - _exact(t[mid]))))
        print(f"h = {h:g}: mid-ramp error {err:.2e} rad/s (lag {ALPHA * TAU:.2e})")
        assert err <= 1e-9


def test_corner_error_is_first_order():
    """The largest |ω − exact| over the run sits at the ramp's corners, where the servo sees its reference one
    step ahead (r(t + h)) and settles at RK4's 0.375 per step (the stiff limit of the stage rates, h K ≫ J): at
    5e-4 and 2.5e-4 s measured 7.83e-4 and 3.91e-4 rad/s, 0.374 α h, observed order 1.003. Asserted: below
    0.5 α h at each step (the corner's own scale: the reference moves α h in a step) and an observed order within
    0.1 of 1."""
    errs = []
    for h in (5e-4, 2.5e-4):
        t, w = _cached(h)
        e = float(np.max(np.abs(w - _exact(t))))
        errs.append(e)
        print(f"h = {h:g}: largest error {e:.3e} rad/s = {e / (ALPHA * h):.3f} alpha h")
        assert e <= 0.5 * ALPHA * h
    order = np.log(errs[0] / errs[1]) / np.log(2.0)
    print(f"observed order {order:.3f}")
    assert abs(order - 1.0) <= 0.1


def test_held_speed_is_the_reference():
    """After the ramp the disc holds 3.14 rad/s: within 1e-9 rad/s of it from 0.1 s after the ramp's end (the
    closed form is there to 1e-300), no drift of the angle's rate."""
    t, w = _cached(5e-4)
    late = t >= T1 + 0.1
    assert late.any()
    assert float(np.max(np.abs(w[late] - OMEGA1))) <= 1e-9


def test_explicit_servo_diverges_at_the_fidelity_step():
    """Without the implicit servo the same disc at 5e-4 s (h K / J = 329, far outside RK4's stability interval of
    2.8) does not follow the ramp: its speed grows without bound within a few dozen steps of the ramp's start
    (the stepper fails, or the speed is off the reference by more than 1e3 rad/s)."""
    try:
        t, w = _run(5e-4, T0 + 0.02, implicit=False)
    except (StepFailed, FloatingPointError, ValueError, OverflowError):
        return
    assert not np.all(np.isfinite(w)) or np.nanmax(np.abs(w - _exact(t))) > 1e3


def test_servo_law_is_implicit_with_the_drivetrains_gain():
    """One evaluation in the middle of the ramp at rest on the reference: (J + h K) q̈ = K (r(t + h) − ω), the
    pivot carries h K (the gain of trackdyn.powertrain), and q̈ equals the scalar root to 1e-9."""
    h = 5e-4
    system, k = _driven_discs()
    st = system.initial_state()
    t = 0.4
    st.t = t
    system.begin_step(st, h)
    ex = st.extra
    qd = ex["recursive.qd"].copy()
    qd[k] = float(_exact(t))
    qdd, _ = system.accelerations(t, ex["recursive.q"], qd)
    r_end = ALPHA * (t + h - T0)
    assert qdd[k] == pytest.approx(SERVO_GAIN * (r_end - qd[k]) / (J + h * SERVO_GAIN), rel=1e-9)
    assert system.joint_damping[k] == pytest.approx(h * SERVO_GAIN, rel=1e-12)


def test_fidelity_takes_prescribed_speeds_with_rk4_only():
    """The vehicle fidelity no longer refuses a prescribed speed under recursive-rk4; under recursive-abm (the
    servo explicit, a time constant of 1.5e-6 s) it refuses naming the field, the integrator and the reason."""
    drv = SprocketSpeed.ramp(0.1, 0.5, 2.0)
    fid = get_formulation("recursive")
    fid.check(td.Scenario(vehicle="crawler", fidelity="recursive", driver=drv, t_end=0.1))
    with pytest.raises(ValueError, match=r"scenario\.driver.*recursive-abm.*recursive-rk4"):
        prepare(td.Scenario(vehicle="crawler", fidelity="recursive", driver=drv, integrator="recursive-abm",
                            t_end=0.1))
