"""Ground models (terrain/ground.py): the Winkler soil's cited numbers, any terrain made of it, the
scenario options, and closed-form checks of a rigid plate on it (static sinkage W/(k A); the vertical
oscillation of a plate released on it against the spring-damper solution); exact Jacobians of a Winkler
pad on the slopes of the road profiles."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import trackdyn as td
from trackdyn import terrain as tt
from trackdyn.contact import ContactSystem, Material, shapes
from trackdyn.materials import WINKLER
from trackdyn.sim.simulation import Simulation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contact"))
from test_pairs import HARD, one_body, state  # noqa: E402

G = 9.81
SOIL = tt.SOILS["medium-dense-sand"]
TIMBER = Material("timber", young=1e10, poisson=0.3, restitution=0.1, friction=0.6)


def test_default_soil_is_the_cited_one():
    """k_w: geometric mean of Bowles Table 9-1's medium dense sand (9 600-80 000 kN/m³); c_w = ρ V_La with
    V_La = 3.4 V_s/(π(1-ν)) (Gazetas 1991), V_s the geometric mean of EN 1998-1 type C (180-360 m/s)."""
    m = tt.ground_material()
    assert m.kind == WINKLER
    assert m.stiffness == pytest.approx(27.71e6, rel=1e-3)
    assert 9.6e6 < m.stiffness < 8.0e7
    v_la = 3.4 * 254.56 / (math.pi * 0.7)
    assert m.damping == pytest.approx(1800.0 * v_la, rel=1e-4)
    assert m.friction == pytest.approx(math.tan(math.radians(33.0)), rel=1e-12)
    m2 = tt.ground_material(stiffness=1e7, damping=0.0, friction=0.4)
    assert (m2.stiffness, m2.damping, m2.friction) == (1e7, 0.0, 0.4)


@pytest.mark.parametrize("terrain", [
    None,
    tt.Flat(z=0.2),
    tt.Plane.incline(0.1),
    tt.Flat() + tt.Step(0.3, x=2.0, material=TIMBER) + tt.road("trough", x=5.0),
    tt.Flat() + tt.HeightField(np.linspace(0, 1, 3), np.linspace(0, 1, 3), np.zeros((3, 3))),
], ids=["default", "flat", "incline", "profile", "composite"])
def test_with_ground_keeps_the_geometry_and_makes_every_part_winkler(terrain):
    soft = tt.with_ground(terrain, "winkler")
    ref = tt.Flat() if terrain is None else terrain
    x = np.linspace(-1.0, 8.0, 91)
    np.testing.assert_array_equal(soft.height(x, 0.3 + 0 * x), ref.height(x, 0.3 + 0 * x))
    for part in soft.parts():
        for m in getattr(part, "materials", [part.material]):
            assert m.kind == WINKLER and m.stiffness == SOIL.stiffness
    assert tt.is_winkler(soft) and not tt.is_winkler(ref)
    assert tt.with_ground(ref, "rigid") is ref


def test_scenario_terrain_options():
    sc = td.Scenario(vehicle="m113", options={"terrain.ground": "winkler", "terrain.stiffness": 1.5e7,
                                              "terrain.road": "bump", "terrain.road_x": 4.0,
                                              "contact.implicit": True})
    assert sc.options == {"contact.implicit": True}  # the terrain options are the terrain's, not the fidelity's
    assert sc.terrain.material.kind == WINKLER and sc.terrain.material.stiffness == 1.5e7
    assert sc.terrain.material.damping == SOIL.damping
    assert float(sc.terrain.height(4.5)) == pytest.approx(0.10, abs=1e-12)
    assert sc.replace(t_end=1.0).terrain.material.stiffness == 1.5e7  # replace keeps it, applies nothing twice
    d = sc.to_dict()
    assert d["terrain"]["material"]["kind"] == "winkler" and d["terrain"]["pieces"][0]["type"] == "bump"
    # the road starts ROAD_LEAD ahead of start_x unless placed
    sc = td.Scenario(start_x=2.0, options={"terrain.road": "trough"})
    assert sc.terrain.pieces[0].x == 7.0 and sc.terrain.material.kind != WINKLER


@pytest.mark.parametrize("options, message", [
    ({"terrain.ground": "mud"}, r"terrain.ground'\] = 'mud': choose one of \['rigid', 'winkler'\]"),
    ({"terrain.stiffness": 1e7}, r"options of the Winkler soil; set terrain.ground = 'winkler'"),
    ({"terrain.ground": "winkler", "terrain.stiffness": -1.0}, r"terrain.stiffness = -1.0: must be positive"),
    ({"terrain.ground": "winkler", "terrain.soil": "peat"}, r"terrain.soil = 'peat': choose one of"),
    ({"terrain.depth": 1.0}, r"\['terrain.depth'\]: unknown terrain option"),
    ({"terrain.road": "hill"}, r"terrain.road = 'hill': choose one of \['bump', 'trough', 'sinusoid', 'iso8608'\]"),
    ({"terrain.road": "bump", "terrain.road_params": {"height": -0.1}}, r"Bump: height: must be positive"),
    ({"terrain.road_x": 3.0}, r"give terrain.road"),
])
def test_scenario_terrain_option_errors_name_the_field(options, message):
    with pytest.raises(ValueError, match=message):
        td.Scenario(options=options)


# ------------------------------------------------------------------------------------ closed form
def _plate(terrain, mass, a=0.5, b=0.4, h=0.05, z0=None, grid=4):
    m = td.Model()
    plate = m.add_body("plate", mass=mass, inertia=[1.4, 2.1, 3.4], pos=[0.0, 0.0, 0.5 * h if z0 is None else z0])
    cs = ContactSystem(m, terrain=terrain, winkler_grid=grid)
    cs.add_shape(plate, shapes.Box([a, b, h]), material=Material("steel", young=2e11))
    return m, cs


@pytest.mark.parametrize("terrain", [tt.Flat(), tt.Flat() + tt.road("bump", x=3.0)], ids=["flat", "profile"])
def test_plate_sinks_w_over_kA(terrain):
    """A rigid 0.5 x 0.4 m plate of 100 kg at rest on the default soil sinks w = m g / (k_w A): the soil's
    damping (ζ ≈ 3 for this plate) only sets how fast it gets there."""
    mass, a, b, h = 100.0, 0.5, 0.4, 0.05
    m, cs = _plate(tt.with_ground(terrain, "winkler"), mass, a, b, h)
    res = Simulation(m, step=1e-3, output_step=1e-2, providers=[cs], record=["plate.pos.z"]).run(0.4)
    w = 0.5 * h - res["plate.pos.z"][-1]
    exact = mass * G / (SOIL.stiffness * a * b)
    assert abs(w / exact - 1) < 0.01, (w, exact)
    assert abs(w / exact - 1) < 1e-6  # what it is: the lattice integrates a flat face exactly


def test_released_plate_oscillates_as_the_spring_damper():
    """A plate set down on the soil (touching, at rest) moves as m z'' + c A z' + k A z = m g: its mass is
    chosen for ζ = c A / (2 √(k A m)) = 0.4, so that it oscillates (a light plate on this soil is
    overdamped; this one is 5.7 t on 0.2 m², sinking 1 cm). Frequency (zero crossings about the static sinkage) and damping (logarithmic
    decrement of the swings) against the closed form, and the whole path within 1 % of the sinkage."""
    a, b, h = 0.5, 0.4, 0.2
    A = a * b
    k, c = SOIL.stiffness * A, SOIL.damping * A
    zeta = 0.4
    mass = (c / (2 * zeta)) ** 2 / k
    wn = math.sqrt(k / mass)
    wd = wn * math.sqrt(1 - zeta ** 2)
    w = mass * G / k
    m, cs = _plate(tt.with_ground(None, "winkler"), mass, a, b, h)
    step = 2e-4
    res = Simulation(m, integrator="rk4", step=step, output_step=step, providers=[cs],
                     record=["plate.pos.z"]).run(4 * 2 * math.pi / wd)
    t = res.t
    z = 0.5 * h - res["plate.pos.z"]  # sinkage
    exact = w * (1 - np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta / math.sqrt(1 - zeta ** 2) * np.sin(wd * t)))
    # the force k z + c ż stays compressive along the closed-form path (no lift-off): the linear ODE holds
    zdot = np.gradient(exact, t)
    assert np.all(k * exact[1:] + c * zdot[1:] > 0)
    assert np.max(np.abs(z - exact)) < 0.01 * w
    e = z - w
    up = np.nonzero((e[:-1] < 0) & (e[1:] >= 0))[0]
    tc = t[up] - e[up] * step / (e[up + 1] - e[up])
    period = float(np.mean(np.diff(tc)))
    assert abs(period / (2 * math.pi / wd) - 1) < 0.01, (period, 2 * math.pi / wd)
    # the swings about the static sinkage peak every half damped period (t = j π/ω_d): the logarithmic
    # decrement over a full period, from the start (j = 0) to the second swing (j = 2)
    peaks = [np.max(np.abs(e[np.abs(t - j * math.pi / wd) < 0.5 * math.pi / wd])) for j in (0, 2)]
    delta = math.log(peaks[0] / peaks[1])
    zeta_measured = delta / math.sqrt(4 * math.pi ** 2 + delta ** 2)
    assert abs(zeta_measured / zeta - 1) < 0.01, (zeta_measured, zeta)


# ------------------------------------------------------------------------------------ Jacobians
@pytest.mark.parametrize("road, s", [("bump", 0.25), ("bump", 0.5), ("trough", 0.3), ("sinusoid", 0.4)])
@pytest.mark.parametrize("seed", [0, 1])
def test_winkler_pad_on_road_slopes_jacobians_against_finite_differences(road, s, seed):
    """A track pad (box) on Winkler soil over the road profiles: every probe of the face turned to the
    ground pushes along the surface normal of the exact profile; the stiffness and damping Jacobians
    through detection equal central differences."""
    rng = np.random.default_rng(seed)
    terrain = tt.with_ground(tt.Flat() + tt.road(road, x=0.0), "winkler", tt.ground_material(stiffness=2e6,
                                                                                             damping=4e3))
    z = float(terrain.height(s)) + 0.01 - 0.002
    sc = one_body(lambda: [shapes.Box([0.15, 0.3, 0.02])], terrain, np.array([s, 0.0, z]), rng, mat=HARD,
                  tilt=0.02)
    q, v = state(sc, rng)
    assert sc.check(q, v, min_active=4) >= 4


def test_scenario_file_with_terrain_options(tmp_path):
    """The scenario file of docs/terrain.md: a trough 6 m ahead on the default soil."""
    from trackdyn.spec.scenario import load_scenario

    f = tmp_path / "trough.toml"
    f.write_text('[scenario]\nt_end = 8.0\n[scenario.options]\n"terrain.ground" = "winkler"\n'
                 '"terrain.road" = "trough"\n"terrain.road_x" = 6.0\n[driver]\ntype = "pid"\nspeed = 3.0\n',
                 encoding="utf-8")
    sc = load_scenario(f)
    assert sc.options == {} and sc.terrain.material.kind == WINKLER
    assert float(sc.terrain.height(6.5)) == pytest.approx(-0.10, abs=1e-12)


def test_run_metadata_describes_the_soil_and_rebuilds_it():
    """The run's metadata (Scenario.to_dict) carries the terrain with its Winkler material; rebuilding
    it gives the same soil and geometry."""
    from trackdyn.terrain.describe import build

    sc = td.Scenario(options={"terrain.ground": "winkler", "terrain.damping": 1e5, "terrain.road": "bump"})
    t = build(sc.to_dict()["terrain"])
    m = t.material
    assert (m.kind, m.stiffness, m.damping, m.friction) == (WINKLER, SOIL.stiffness, 1e5, SOIL.friction)
    s = np.linspace(4.0, 7.0, 31)
    np.testing.assert_array_equal(t.height(s), sc.terrain.height(s))
