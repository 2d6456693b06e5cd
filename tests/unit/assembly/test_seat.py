"""The seat (han-sander-mao eq. 36) against the single-degree-of-freedom closed form.

The seat of :func:`trackdyn.assembly.seat.add_seat` on a chassis welded to the ground (or driven up and down by
a linear motor) is a mass on a spring-damper: natural frequency sqrt(k/m)/2 pi, damping ratio c / (2 sqrt(k m)),
static deflection m g / k, base-excitation transmissibility
|X/Y| = sqrt((1 + (2 zeta r)^2) / ((1 - r^2)^2 + (2 zeta r)^2)), r = Omega / omega_n.

Seat values: m = 100 kg (seat and occupant), k = 1e4 N/m (f_n = 1.59 Hz); the damping ratio per test. The
closed forms hold for any values; these put the seat in the 1-2 Hz band of suspension seats (docs/vehicle.md).
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest

import trackdyn as td
from trackdyn.assembly.seat import SEAT_SERIES, SeatOutputs, add_seat
from trackdyn.mbs import Fixed, LinearMotor, Profile
from trackdyn.spec.vehicle import SeatSpec, SpecError

M, K, G = 100.0, 1.0e4, 9.81
WN = math.sqrt(K / M)


def _seat_rig(damping, base=None, step=2e-4, t_end=3.0, output_step=1e-3, gravity=True):
    """Chassis (1 t) held fixed, or driven along z by ``base`` (a Profile), with the seat on it; the run's frame.

    The seat is assembled at rest under gravity (its spring compressed by m g / k); ``gravity=False`` switches
    gravity off after the assembly, so the seat is released m g / k below its unloaded rest position."""
    seat = SeatSpec(mass=M, stiffness=K, damping=damping, position=(0.3, -0.2, 1.2))
    m = td.Model()
    com = np.array([0.0, 0.0, 0.5])
    ch = m.add_body("chassis", mass=1000.0, inertia=[300.0, 500.0, 600.0], pos=com)
    if base is None:
        m.add_joint(Fixed(m.ground, ch, point=com, name="hold"))
    else:
        # the chassis slides along z only, its displacement prescribed (Prismatic + driver row)
        m.add_joint(LinearMotor(m.ground, ch, point=com, axis=[0, 0, 1], position=base, name="shaker"))
    out = add_seat(m, ch, SimpleNamespace(seat=seat), lambda x, y, z: np.array([x, y, z]), com)
    assert isinstance(out, SeatOutputs)
    if not gravity:
        m.gravity = np.zeros(3)
    sim = td.Simulation(m, integrator="euler-implicit-linearized", step=step, output_step=output_step,
                        providers=[out])
    return sim.run(t_end=t_end).frame()


def test_static_deflection_is_m_g_over_k():
    # assembled at rest: under gravity it stays there, the spring carrying the seat's weight in compression
    # (a TSDA's force is positive in tension)
    df = _seat_rig(damping=2.0 * math.sqrt(K * M), t_end=1.0)
    assert np.max(np.abs(df["seat.rel.z"])) < 1e-9
    assert df["seat.spring.force"].iloc[-1] == pytest.approx(-M * G, rel=5e-3)
    assert np.max(np.abs(df["seat.acc.z"])) < 1e-6  # absolute acceleration, gravity excluded: zero at rest
    # without its weight the seat rises by the static deflection m g / k (critically damped, zeta = 1: at rest
    # after 3 s, e^{-omega_n 3} ~ 1e-13)
    df = _seat_rig(damping=2.0 * math.sqrt(K * M), gravity=False)
    rel = df["seat.rel.z"].to_numpy()
    assert rel[-1] == pytest.approx(M * G / K, rel=5e-3)
    assert abs(df["seat.spring.force"].iloc[-1]) < 1e-6 * M * G
    # relative to the cab = absolute here (the cab does not move)
    assert np.allclose(df["seat.pos.z"] - 1.2, rel, atol=1e-9)


def _peaks(t, x):
    """Times and values of the local maxima of x, refined by a parabola through the three samples."""
    k = np.nonzero((x[1:-1] > x[:-2]) & (x[1:-1] >= x[2:]))[0] + 1
    out_t, out_x = [], []
    for i in k:
        y0, y1, y2 = x[i - 1], x[i], x[i + 1]
        den = y0 - 2 * y1 + y2
        d = 0.5 * (y0 - y2) / den if den != 0 else 0.0
        out_t.append(t[i] + d * (t[1] - t[0]))
        out_x.append(y1 - 0.25 * (y0 - y2) * d)
    return np.array(out_t), np.array(out_x)


def test_free_decay_frequency_and_damping_ratio():
    # gravity off: released m g / k below its unloaded rest position, it oscillates about +m g / k
    zeta = 0.1
    c = 2.0 * zeta * math.sqrt(K * M)
    df = _seat_rig(damping=c, t_end=3.0, gravity=False)
    t, rel = df["t"].to_numpy(), df["seat.rel.z"].to_numpy()
    x = rel - M * G / K  # about the equilibrium
    tp, xp = _peaks(t, x)
    tp, xp = tp[xp > 0], xp[xp > 0]
    assert len(xp) >= 4
    delta = np.mean(np.log(xp[:-1] / xp[1:]))  # logarithmic decrement per period
    zeta_m = delta / math.sqrt(4 * math.pi ** 2 + delta ** 2)
    wd = 2 * math.pi / np.mean(np.diff(tp))
    wn_m = wd / math.sqrt(1 - zeta_m ** 2)
    assert wn_m / (2 * math.pi) == pytest.approx(WN / (2 * math.pi), rel=1e-2)
    assert zeta_m == pytest.approx(zeta, rel=2e-2)


@pytest.mark.parametrize("f_exc", [2.0])
def test_base_excitation_transmissibility(f_exc):
    # the chassis shaken sinusoidally (amplitude Y): the seat's absolute steady-state amplitude over Y
    zeta, Y = 0.3, 0.01
    W = 2 * math.pi * f_exc
    # 1 - cos: the chassis starts at rest (a velocity jump at t = 0 would be an energy jump the run refuses)
    base = Profile.function(lambda t: Y * (1.0 - math.cos(W * t)), lambda t: Y * W * math.sin(W * t),
                            lambda t: Y * W * W * math.cos(W * t))
    df = _seat_rig(damping=2.0 * zeta * math.sqrt(K * M), base=base, t_end=5.0)
    t = df["t"].to_numpy()
    keep = t >= 3.0  # transient e^{-zeta omega_n t} < 1e-4 by then; 4 full periods of 2 Hz after
    t = t[keep]

    def amplitude(x):
        A = np.column_stack([np.sin(W * t), np.cos(W * t), np.ones_like(t)])
        (a, b, _), *_ = np.linalg.lstsq(A, x, rcond=None)
        return math.hypot(a, b)

    y = amplitude(df["chassis.pos.z"].to_numpy()[keep])
    x = amplitude(df["seat.pos.z"].to_numpy()[keep])
    r = W / WN
    T = math.sqrt((1 + (2 * zeta * r) ** 2) / ((1 - r * r) ** 2 + (2 * zeta * r) ** 2))
    assert y == pytest.approx(Y, rel=1e-6)
    assert x / y == pytest.approx(T, rel=2e-2)
    # the same through the accelerations (absolute, the recorded seat.acc.z)
    ax = amplitude(df["seat.acc.z"].to_numpy()[keep])
    assert ax / (Y * W * W) == pytest.approx(T, rel=2e-2)
    # relative displacement: |Z/Y| = r^2 / sqrt((1 - r^2)^2 + (2 zeta r)^2)
    z = amplitude(df["seat.rel.z"].to_numpy()[keep])
    assert z / y == pytest.approx(r * r / math.sqrt((1 - r * r) ** 2 + (2 * zeta * r) ** 2), rel=2e-2)


def test_no_seat_adds_nothing():
    m = td.Model()
    ch = m.add_body("chassis", mass=1.0, inertia=[1, 1, 1], pos=[0, 0, 0])
    assert add_seat(m, ch, SimpleNamespace(seat=None), lambda x, y, z: np.array([x, y, z]), (0, 0, 0)) is None
    assert m.body_names == ["chassis"] and not m.joints and not m.forces
    assert SEAT_SERIES == ("seat.rel.z", "seat.acc.z")


@pytest.mark.parametrize("field, value, reason", [
    ("mass", -80.0, "greater than 0"),
    ("mass", 0.0, "greater than 0"),
    ("stiffness", -1e4, "greater than 0"),
    ("damping", -10.0, "greater than or equal to 0"),
    ("mass", float("nan"), "finite"),
    ("position", (0.0, float("inf"), 1.0), "finite"),
])
def test_bad_seat_input_is_refused_naming_field_value_reason(field, value, reason):
    good = {"mass": 100.0, "stiffness": 1e4, "damping": 500.0, "position": (-1.0, 0.5, 1.0)}
    spec = td.vehicles.get("m113")
    with pytest.raises(SpecError) as err:
        spec.replace({"seat": {**good, field: value}})
    msg = str(err.value)
    assert f"seat.{field}" in msg and reason in msg
    assert repr(value) in msg or (isinstance(value, tuple) and "inf" in msg)


def test_a_seat_that_would_sink_is_refused():
    spec = td.vehicles.get("m113")
    with pytest.raises(SpecError, match=r"seat = .*sink mass g / stiffness = 9\.81 m"):
        spec.replace({"seat": {"mass": 100.0, "stiffness": 100.0, "damping": 0.0, "position": (0, 0, 1)}})
    with pytest.raises(SpecError, match=r"seat\.colour.*Extra inputs"):
        spec.replace({"seat": {"mass": 100.0, "stiffness": 1e4, "damping": 0.0, "position": (0, 0, 1),
                               "colour": "red"}})


def test_seat_spec_round_trips_and_defaults_to_none():
    spec = td.vehicles.get("m113")
    assert spec.seat is None
    s2 = spec.replace({"seat": {"mass": 100.0, "stiffness": 1e4, "damping": 500.0, "position": (-1.0, 0.5, 1.0)}})
    from trackdyn.spec.io import dump_toml, loads_spec

    assert loads_spec(dump_toml(s2)) == s2
    assert "seat" not in dump_toml(spec)  # no [seat] table when there is none


def test_rel_z_is_along_the_cab_axis_when_the_cab_pitches():
    # the cab pitches +-0.3 rad at 1 Hz about a pivot 1.5 m from the seat: seat.rel.z (the seat relative to its
    # place in the cab, along the cab's z axis) equals the spring's extension from its length at rest (both ends
    # of the spring lie on the seat's slide axis), while the seat's world z swings by ~0.4 m
    from trackdyn.mbs import RevoluteMotor
    from trackdyn.spec.vehicle import SEAT_SPRING_LENGTH

    W = 2 * math.pi
    seat = SeatSpec(mass=M, stiffness=K, damping=300.0, position=(1.5, 0.0, 1.0))
    m = td.Model()
    com = np.array([0.0, 0.0, 0.5])
    ch = m.add_body("chassis", mass=1000.0, inertia=[300.0, 500.0, 600.0], pos=com)
    m.add_joint(RevoluteMotor(m.ground, ch, point=com, axis=[0, 1, 0], name="pitch",
                              angle=Profile.function(lambda t: 0.3 * (1 - math.cos(W * t)),
                                                     lambda t: 0.3 * W * math.sin(W * t),
                                                     lambda t: 0.3 * W * W * math.cos(W * t))))
    out = add_seat(m, ch, SimpleNamespace(seat=seat), lambda x, y, z: np.array([x, y, z]), com)
    df = td.Simulation(m, step=5e-4, output_step=5e-3, providers=[out]).run(t_end=2.0).frame()
    rel, ext = df["seat.rel.z"].to_numpy(), df["seat.spring.length"].to_numpy() - SEAT_SPRING_LENGTH
    assert np.ptp(df["seat.pos.z"]) > 0.3 and np.ptp(rel) > 1e-3  # the cab's pitching drives the seat
    assert np.max(np.abs(rel - ext)) < 1e-9


def test_amplitude_spectrum_reads_a_sinusoid_amplitude_and_frequency():
    from trackdyn.experiments.events import amplitude_spectrum

    dt, n = 0.01, 800  # 8 s; 1.25 Hz lies on a bin (df = 0.125 Hz)
    t = np.arange(n) * dt
    f, A = amplitude_spectrum(0.3 + 0.02 * np.sin(2 * math.pi * 1.25 * t), dt)
    k = int(np.argmax(A[1:])) + 1
    assert f[k] == pytest.approx(1.25) and A[k] == pytest.approx(0.02, rel=1e-3)
    assert A[0] < 1e-6  # the mean (0.3) is removed


def test_massless_fidelity_refuses_a_seat():
    from trackdyn.assembly.massless import build_massless

    spec = td.vehicles.get("m113").replace(
        {"seat": {"mass": 100.0, "stiffness": 1e4, "damping": 600.0, "position": (-1.73, 0.5, 0.9)}})
    with pytest.raises(ValueError, match=r"seat = .*massless fidelity has no seat"):
        build_massless(spec)
