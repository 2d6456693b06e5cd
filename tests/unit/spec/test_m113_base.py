"""The "M113 base" of korner-2024 §4.1.3: the chapter 3 model (the `m113` spec) with Chrono's default idler,
engine and pad modulus. The expected values are typed from their sources (the thesis's Table 3.3 and 3.11,
Chrono 8's M113 model files as cited in the spec), not read from the code."""

import json
import math

import numpy as np
import pytest

import trackdyn as td


def _diff(a, b, prefix=""):
    out = []
    for k in sorted(set(a) | set(b)):
        va, vb = a.get(k), b.get(k)
        path = f"{prefix}{k}"
        if isinstance(va, dict) and isinstance(vb, dict):
            out += _diff(va, vb, path + ".")
        elif va != vb:
            out.append(path)
    return out


def test_m113_base_differs_from_chapter_3_only_in_idler_engine_and_pad():
    base, ch3 = td.vehicles.get("m113-base"), td.vehicles.get("m113")
    assert "m113-base" in td.spec.library_names()
    assert set(_diff(base.model_dump(), ch3.model_dump())) == {
        "name", "description",
        "idler.radius", "idler.width", "idler.mass", "idler.inertia",
        "idler.tensioner.free_length", "idler.tensioner.preload",
        "powertrain.torque_map", "powertrain.map_speed",
        "materials.pad.youngs_modulus"}
    # chapter 3 (the m113 spec): Table 3.3's idler, Table 3.11's tensioner, the calibrated pad
    assert (ch3.idler.radius, ch3.idler.mass, ch3.idler.inertia) == (0.219, 38.2, (0.52, 0.92, 0.52))
    assert (ch3.idler.tensioner.free_length, ch3.idler.tensioner.preload) == (0.725, 1.0e4)
    # §4.1.3 "default values": Chrono 8's M113_IdlerWheel (radius, width, mass, inertia) ...
    assert (base.idler.radius, base.idler.width, base.idler.mass, base.idler.inertia) == \
        (0.255, 0.181, 25.76, (0.618, 1.12, 0.618))
    assert base.idler.width - base.suspension.wheel_gap > 0  # two halves either side of the guide gap
    # ... its M113_Idler tensioner (l0 0.75 m, f 2e4 N, k 1e6 N/m, c 1.4e4 N s/m, carrier 10 kg) ...
    t = base.idler.tensioner
    assert (t.free_length, t.preload, t.stiffness, t.damping, t.carrier_mass) == (0.75, 2.0e4, 1.0e6, 1.4e4, 10.0)
    # ... and Chrono's shoe pad modulus (shared/reference/m113.md: 1e7 Pa)
    assert base.materials["pad"].youngs_modulus == 1.0e7


def test_m113_base_engine_is_chronos_m113_engine_map():
    """M113_EngineSimpleMap (full throttle, lb ft against engine rpm) through the chapter 3 single continuous
    gear: sprocket rad/s = engine rpm * pi/30, sprocket N m = lb ft / 0.73756."""
    base = td.vehicles.get("m113-base")
    chrono = [(-100, 0), (500, 450), (1000, 450), (1500, 445), (2000, 435), (2500, 410), (2800, 395), (3000, 380),
              (3200, -100)]
    rads = [r * math.pi / 30 for r, _ in chrono]
    nm = [t / 0.73756 for _, t in chrono]
    tm = np.asarray(base.powertrain.torque_map)
    assert base.powertrain.map_speed == "sprocket"
    np.testing.assert_allclose(tm[1:, 0], rads[1:], rtol=2e-6)
    np.testing.assert_allclose(tm[1:, 1], nm[1:], rtol=2e-5)
    # at 0 rad/s: Chrono's linear interpolation between -100 rpm (0) and 500 rpm (450 lb ft)
    assert tm[0, 0] == 0.0 and tm[0, 1] == pytest.approx(np.interp(0.0, rads, nm), rel=1e-4)
    # the base's stall torque is a fifteenth of the chapter 3 model's (Table 3.10: 9519 N m)
    assert tm[:, 1].max() / td.vehicles.get("m113").powertrain.torque_map[0][1] == pytest.approx(610.12 / 9519,
                                                                                                 rel=1e-4)


def test_m113_base_assembles_and_is_listed():
    from typer.testing import CliRunner

    from trackdyn.assembly.builder import build_vehicle
    from trackdyn.cli.main import app

    spec = td.vehicles.get("m113-base")
    vm = build_vehicle(spec)
    masses = dict(zip(vm.model.body_names, vm.model.body_arrays()[0]))
    assert masses["left.idler"] == masses["right.idler"] == pytest.approx(25.76)
    # the larger idler (0.255 m against 0.219 m) lengthens the loop: shoes re-derived, one more per side
    n_base = {s: len(vm.sides[s].shoes) for s in ("left", "right")}
    n_ch3 = {s: len(build_vehicle(td.vehicles.get("m113")).sides[s].shoes) for s in ("left", "right")}
    assert all(n_base[s] > n_ch3[s] for s in n_base)
    r = CliRunner().invoke(app, ["vehicles", "--json"])
    assert r.exit_code == 0, r.output
    rows = {v["name"]: v for v in json.loads(r.stdout)["vehicles"]}
    assert rows["m113-base"]["geometry"] == "ok"
