"""Compliant track pins on a small closed chain (issue #30's acceptance): 8 links whose pins lie on a
circle, spinning about its fixed centre as a chain wrapped on a sprocket turning steadily, without contact
or gravity.

Closed form: by symmetry the pin force between neighbours is tangent to the circle, of magnitude
``T = m ω² R cos(π/N) / (2 sin(π/N))`` (each link's centripetal force ``m ω² R cos(π/N)`` from two such
forces at its ends), so a pin of translational stiffness k opens by ``T / k``. The penalty and bushing pins
approach the ideal model as k grows: the largest pin separation of the steady spin (the run's second half,
after the pins took up the load) scales like 1/k (the slope on log-log is checked) and stands within 1.5 %
of ``T / k``; the pin force matches the ideal model's joint reaction.

The runs use HHT (second order): with backward Euler the discrete velocities of a spinning body lag its
rotation by O(h), which the pins' damping c turns into a spurious force ``c h ω² L`` (10 % of T at k = 1e9,
h = 1e-4 with the Newton-iterated Euler; the one-iteration linearised Euler adds an O(k h² ω² L) position
bias as well, +32 %), a property of the integrator on stiff compliant pins worth knowing, not of the pins.
"""

import math
import warnings

import numpy as np
import pytest

import trackdyn as td
from trackdyn.formulations.penalty import PAPER_C, PenaltyPin, PenaltyPins
from trackdyn.math.quaternion import quat_from_axis_angle, quat_to_matrix

N_LINKS = 8
RADIUS = 0.3         # m, pin circle
OMEGA = 10.0         # rad/s
MASS = 18.024        # kg, wallin-shabana-2013 Table 1's track link
INERTIA = [0.04113, 0.22463, 0.25256]
T_END = 0.1
STEP = 1e-4
INTEGRATOR = "hht"
KS = (1e7, 1e8, 1e9, 1e10)


def hoop_force():
    """Tangential pin force of the spinning ring (module docstring), N."""
    a = math.pi / N_LINKS
    return MASS * OMEGA**2 * RADIUS * math.cos(a) / (2.0 * math.sin(a))


def ring(pins: str, k: float = 1e9, c: float = PAPER_C):
    """The spinning ring with ``pins`` = "ideal" (revolutes), "penalty" or "bushing"; (model, providers, pin
    list ``(body_a, body_b, point)``)."""
    m = td.Model(gravity=(0.0, 0.0, 0.0))
    ang = [2.0 * math.pi * i / N_LINKS for i in range(N_LINKS)]
    pts = [np.array([RADIUS * math.cos(t), 0.0, RADIUS * math.sin(t)]) for t in ang]
    links = []
    w = np.array([0.0, -OMEGA, 0.0])  # about -y: x towards +z turns... any sense; the ring spins in the x-z plane
    for i in range(N_LINKS):
        p0, p1 = pts[i], pts[(i + 1) % N_LINKS]
        c0 = 0.5 * (p0 + p1)
        d = p1 - p0
        alpha = math.atan2(d[2], d[0])
        b = m.add_body(f"link[{i}]", mass=MASS, inertia=INERTIA, pos=c0, quat=quat_from_axis_angle([0, 1, 0], -alpha),
                       vel=np.cross(w, c0), omega=[0.0, -OMEGA, 0.0])
        links.append(b)
    pin_list = [(links[i], links[(i + 1) % N_LINKS], pts[(i + 1) % N_LINKS]) for i in range(N_LINKS)]
    providers = []
    Y = [0.0, 1.0, 0.0]
    if pins == "ideal":
        for i, (a, b, p) in enumerate(pin_list):
            m.add_joint(td.Revolute(a, b, point=p, axis=Y, name=f"pin[{i}]"))
    elif pins == "penalty":
        providers.append(PenaltyPins(m, [PenaltyPin(f"pin[{i}]", a, b, tuple(p), tuple(Y))
                                         for i, (a, b, p) in enumerate(pin_list)], k=k, c=c))
    elif pins == "bushing":
        for i, (a, b, p) in enumerate(pin_list):
            m.add_force(td.Bushing(a, b, point=p, stiffness=k, damping=c, rot_stiffness=[k, 0.0, k],
                                   rot_damping=[c, 0.0, c], frame=m._initial_R(b), name=f"pin[{i}]",
                                   coupling="full"))
    return m, providers, pin_list


def pin_separation(res, model, pin_list, t_from=0.0):
    """Largest |p_i - p_j| over the pins and the samples from ``t_from`` on, m, from the bodies' recorded
    poses."""
    df = res.frame()
    df = df[df["t"] >= t_from - 1e-12]
    worst = 0.0
    for a, b, p in pin_list:
        sa = model._local_point(a, p)
        sb = model._local_point(b, p)
        for t in range(len(df)):
            pts = []
            for body, s in ((a, sa), (b, sb)):
                n = body.name
                r = np.array([df[f"{n}.pos.{x}"].iat[t] for x in "xyz"])
                q = np.array([df[f"{n}.quat.e{j}"].iat[t] for j in range(4)])
                pts.append(r + quat_to_matrix(q) @ s)
            worst = max(worst, float(np.linalg.norm(pts[0] - pts[1])))
    return worst


def run(pins, k=1e9, c=PAPER_C):
    m, providers, pin_list = ring(pins, k, c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the planar loop's redundant revolute rows (ideal pins)
        sim = td.Simulation(m, integrator=INTEGRATOR, step=STEP, output_step=5 * STEP,
                            providers=providers)
    res = sim.run(T_END)
    return m, sim, res, pin_list


@pytest.fixture(scope="module")
def ideal():
    return run("ideal")


def test_the_ideal_ring_carries_the_closed_form_hoop_force(ideal):
    """The reference: revolute reactions equal the closed-form tangential force and the ring keeps its
    spin (the problem is the one the compliant pins are held to)."""
    m, sim, res, pins = ideal
    df = res.frame()
    F = np.array([[df[f"pin[{i}].force.{x}"].iat[-1] for x in "xyz"] for i in range(N_LINKS)])
    assert np.allclose(np.linalg.norm(F, axis=1), hoop_force(), rtol=1e-4)
    assert pin_separation(res, m, pins) < 1e-9
    assert df["link[0].omega.y"].iat[-1] == pytest.approx(-OMEGA, rel=1e-5)


@pytest.mark.parametrize("pins", ["penalty", "bushing"])
def test_pin_separation_scales_like_one_over_k(pins, ideal):
    """log(steady max separation) against log(k): slope -1 within 0.01, each value within 1.5 % of T/k, and
    the pin forces at the end equal the ideal ring's reactions within 0.2 % of T."""
    seps = []
    T = hoop_force()
    df_ideal = ideal[2].frame()
    F_ideal = np.array([[df_ideal[f"pin[{i}].force.{x}"].iat[-1] for x in "xyz"] for i in range(N_LINKS)])
    for k in KS:
        m, sim, res, pin_list = run(pins, k)
        assert res.status == "complete"
        sep = pin_separation(res, m, pin_list, t_from=0.5 * T_END)
        seps.append(sep)
        assert sep == pytest.approx(T / k, rel=0.015), (k, sep, T / k)
        df = res.frame()
        F = np.array([[df[f"pin[{i}].force.{x}"].iat[-1] for x in "xyz"] for i in range(N_LINKS)])
        assert np.abs(F - F_ideal).max() < 2e-3 * T, (k, F, F_ideal)
    slope = np.polyfit(np.log10(KS), np.log10(seps), 1)[0]
    assert slope == pytest.approx(-1.0, abs=0.01), (slope, seps)


def test_penalty_and_bushing_pins_agree():
    """The same pin stiffness as a penalty pin (revolute equations) and as a bushing free about the pin
    (small-rotation moments) gives the same ring: the two implementations check each other."""
    runs = [run(p, 1e8) for p in ("penalty", "bushing")]
    a, b = (r[2].frame() for r in runs)
    cols = [f"link[{i}].pos.{x}" for i in range(N_LINKS) for x in "xz"]
    assert np.abs(a[cols].to_numpy() - b[cols].to_numpy()).max() < 1e-10


def step_table(omega=16.0, steps=(5e-4, 2e-4, 1e-4, 5e-5), integrator="euler-implicit-linearized"):
    """Pin force of pin[0] after 0.1 s of the ring spinning at ``omega`` (rad/s) per step, ideal and penalty
    (k = 1e9 and 1e7): the step error of compliant pins on a turning chain (docs/formulation.md, "Compliant
    pins and ANCF track"). ``python tests/unit/formulations/test_compliant_chain.py`` prints it."""
    global OMEGA, T_END, INTEGRATOR
    saved = OMEGA, T_END, INTEGRATOR
    OMEGA, T_END, INTEGRATOR = omega, 0.1, integrator
    rows = []
    try:
        for h in steps:
            row = [h]
            for pins, k in (("ideal", 1e9), ("penalty", 1e9), ("penalty", 1e7)):
                m, providers, _ = ring(pins, k)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sim = td.Simulation(m, integrator=INTEGRATOR, step=h, output_step=5e-3, providers=providers)
                df = sim.run(T_END).frame()
                row.append(float(np.linalg.norm([df[f"pin[0].force.{x}"].iat[-1] for x in "xyz"])))
            rows.append(row)
    finally:
        OMEGA, T_END, INTEGRATOR = saved
    return rows


if __name__ == "__main__":
    print(f"closed form at 16 rad/s: {MASS * 16.0**2 * RADIUS * math.cos(math.pi / 8) / (2 * math.sin(math.pi / 8)):.1f} N")
    for integ in ("euler-implicit-linearized", "hht"):
        for h, ideal_f, k9, k7 in step_table(integrator=integ):
            print(f"{integ:26s} h = {h:g} s: ideal {ideal_f:7.1f} N, penalty k=1e9 {k9:7.1f} N, k=1e7 {k7:7.1f} N")
