"""Model details of korner-2024 used by the events: the §5.1 damper stiffening and the §4.1 M113 variants."""

import math

import numpy as np
import pytest

import trackdyn as td
from trackdyn.assembly.builder import _damper_table
from trackdyn.conventions import G0 as G

# korner-2024 Table 3.9 (NG-NRMM), velocity m/s positive in extension, force N
TABLE_3_9 = ((-1.27, -8896.0), (-0.254, -8896.0), (0.0, 0.0), (0.254, 2224.0), (1.27, 2224.0))
C_HIGH = 1e5  # §5.1: "stiffen the vertical dampers to 1e5 Ns/m when their vertical speed exceeds 1.27 m/s"


def _damper(high_speed_damping):
    spec = td.vehicles.get("m113")
    d = spec.suspension.damper.model_copy(update={"high_speed_damping": high_speed_damping})
    return d


def _jounce_run(high_speed_damping, u0=3.0, mass=100.0, t_end=0.004, h=1e-5):
    """A mass moving up at ``u0`` into the damper (compression), the damper's upper end on the ground."""
    m = td.Model()
    body = m.add_body("wheel", mass=mass, inertia=[1.0, 1.0, 1.0], pos=[0, 0, 0], vel=[0, 0, u0])
    m.add_force(td.TSDA(m.ground, body, point_a=[0, 0, 0.5], point_b=[0, 0, 0],
                        damper_table=_damper_table(_damper(high_speed_damping)), free_length=0.5, name="damper"))
    sim = td.Simulation(m, integrator="euler-implicit-linearized", step=h, output_step=h)
    return sim.run(t_end=t_end).frame()


def test_m113_damper_table_is_the_thesis_table():
    assert _damper(None).table == TABLE_3_9


@pytest.mark.parametrize("v, force", [
    (-1.27, -8896.0), (-0.254, -8896.0), (0.0, 0.0), (0.254, 2224.0), (1.27, 2224.0),   # Table 3.9
    (-2.27, -8896.0 - C_HIGH), (2.27, 2224.0 + C_HIGH), (-1.5, -8896.0 - 0.23 * C_HIGH),  # §5.1 beyond 1.27
    (-20.0, -8896.0 - 18.73 * C_HIGH),                                                  # far beyond too
])
def test_stiffened_damper_law(v, force):
    tab = np.asarray(_damper_table(_damper(C_HIGH)))
    # the force law the TSDA evaluates: piecewise linear, extrapolated from its end segments
    from trackdyn.mbs._force_kernels import table_eval

    f, _ = table_eval(tab[:, 0].copy(), tab[:, 1].copy(), 0, len(tab), v)
    assert f == pytest.approx(force, rel=1e-12, abs=1e-9)


def test_stiffened_damper_brakes_a_jounce_to_1_27_mps_in_milliseconds():
    # m du/dt = -m g - 8896 - c (u - 1.27) while u > 1.27 (closed form, an exponential with m/c = 1 ms);
    # without the stiffening the table stays flat: -m g - 8896, a 98.8 m/s² deceleration
    mass, u0 = 100.0, 3.0
    a = (mass * G + 8896.0) / mass
    k = C_HIGH / mass
    df = _jounce_run(C_HIGH, u0=u0, mass=mass)
    t, u = df["t"].to_numpy(), df["wheel.vel.z"].to_numpy()
    t_cross = math.log((u0 - 1.27 + a / k) / (a / k)) / k  # 2.92 ms
    before = (t > 0) & (t < t_cross - 2e-4)
    exact = 1.27 + (u0 - 1.27 + a / k) * np.exp(-k * t[before]) - a / k
    assert np.max(np.abs(u[before] - exact)) < 0.01 * (u0 - 1.27)  # implicit Euler at h k = 0.01
    # the recorded damper force is the law's: pushes apart (negative tension) by 8896 + c (u - 1.27)
    f = df["damper.force"].to_numpy()
    k1 = np.searchsorted(t, 1e-3)
    assert f[k1] == pytest.approx(-8896.0 - C_HIGH * (u[k1] - 1.27), rel=1e-6)
    # past the crossing the speed stays below the stiff branch
    assert u[t > t_cross + 2e-4].max() < 1.27
    flat = _jounce_run(None, u0=u0, mass=mass)
    uf = flat["wheel.vel.z"].to_numpy()
    assert uf[-1] == pytest.approx(u0 - a * flat["t"].to_numpy()[-1], rel=1e-3)  # 2.60 m/s after 4 ms


# ---------------------------------------------------------------------------------------------- §4.1 variants
def _diff(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from _diff(a.get(k), b.get(k), f"{path}.{k}" if path else k)
    elif a != b:
        yield path


def _built_mass(spec):
    from trackdyn.assembly.builder import build_vehicle

    return float(build_vehicle(spec).model.body_arrays()[0].sum())


def test_m113_alternative_differs_from_the_base_only_where_the_thesis_says():
    base, alt = td.vehicles.get("m113"), td.vehicles.get("m113-alternative")
    assert "m113-alternative" in td.spec.library_names()
    # §4.1.2: lower weight, stiffer torsion bars without jounce stiffness, lower damping: nothing else
    expected = {"name", "description", "chassis.mass", "chassis.inertia", "suspension.torsion.stiffness",
                "suspension.torsion.jounce_stiffness", "suspension.torsion.rebound_stiffness",
                "suspension.damper.table"}
    if base.suspension.damper.high_speed_damping is not None:  # §5.1's stiffening is the evaluation model's
        expected.add("suspension.damper.high_speed_damping")
    assert alt.suspension.damper.high_speed_damping is None  # Chrono's demo shock: linear at every speed
    assert set(_diff(alt.model_dump(), base.model_dump())) == expected
    # "a 10 % lower weight": of the whole built vehicle (chassis, shoes, wheels, arms, sprockets, idlers)
    assert _built_mass(alt) / _built_mass(base) == pytest.approx(0.9, abs=2e-4)
    # the chassis keeps its mass distribution (radii of gyration)
    r = alt.chassis.mass / base.chassis.mass
    assert np.allclose(np.asarray(alt.chassis.inertia) / np.asarray(base.chassis.inertia), r, rtol=1e-5)
    # "three times as stiff torsion bar suspension without any jounce stiffness": linear past the limits
    t_a, t_b = alt.suspension.torsion, base.suspension.torsion
    assert t_a.stiffness == pytest.approx(3 * t_b.stiffness, rel=1e-6)
    assert t_a.jounce_stiffness == t_a.rebound_stiffness == t_a.stiffness
    assert t_b.jounce_stiffness > 100 * t_b.stiffness  # the base stiffens 960x at its jounce stop
    # "significantly lower damping coefficient": Chrono's demo 100 N s/m, linear, against Table 3.9's
    # 35 kN s/m near rest in jounce
    tab = np.asarray(alt.suspension.damper.table)
    assert np.allclose(tab[:, 1] / tab[:, 0], 100.0)
    base_slope = abs(base.suspension.damper.table[1][1] / base.suspension.damper.table[1][0])
    assert base_slope / 100.0 > 300


def test_trackdyn_vehicles_lists_the_alternative():
    import json

    from typer.testing import CliRunner

    from trackdyn.cli.main import app

    r = CliRunner().invoke(app, ["vehicles", "--json"])
    assert r.exit_code == 0, r.output
    rows = {v["name"]: v for v in json.loads(r.stdout)["vehicles"]}
    alt, base = rows["m113-alternative"], rows["m113"]
    assert alt["geometry"] == "ok" and alt["shoes"] == base["shoes"]  # the same running gear and track
    assert alt["chassis_mass_kg"] == pytest.approx(6790.42)


def test_m113_evaluation_is_the_base_with_the_two_changes_of_section_5_1():
    from trackdyn.assembly.builder import build_vehicle

    base, ev = td.vehicles.get("m113"), td.vehicles.get("m113-evaluation")
    # §5.1: both sides alike (no right-side station offset) and the dampers stiffened beyond 1.27 m/s
    assert set(_diff(ev.model_dump(), base.model_dump())) == {
        "name", "description", "tracks.right_suspension_offset", "suspension.damper.high_speed_damping"}
    assert ev.suspension.damper.high_speed_damping == C_HIGH and ev.tracks.right_suspension_offset == 0.0
    assert base.tracks.right_suspension_offset == pytest.approx(-0.1016)
    # built: every right road wheel at the x of its left twin (the base's sit 0.1016 m further back)
    for spec, shift in ((ev, 0.0), (base, -0.1016)):
        vm = build_vehicle(spec)
        x = {s: np.array([vm.model._initial_pos(w)[0] for w in vm.sides[s].wheels]) for s in ("left", "right")}
        assert np.allclose(x["right"] - x["left"], shift, atol=1e-9)
