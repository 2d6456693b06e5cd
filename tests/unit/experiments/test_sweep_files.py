"""The built-in sweep files (trackdyn/experiments/sweeps/): the thesis's chapter-5 grids and procedures,
the sensitivity studies of issue #28 item 3, and their place in the wheel's package data."""

import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

from trackdyn.experiments.sweep import (SWEEPS_DIR, _event_options, _spec_for, builtin_sweeps, find_sweep,
                                        load_sweep)

THESIS_AXIS = [-0.2, -0.15, -0.1, -0.05, 0.0, 0.05, 0.1, 0.15, 0.2]
SENSITIVITIES = {"m113-step-pad-modulus", "m113-step-friction", "m113-step-timestep", "m113-step-contact",
                 "m113-step-hull"}


def test_every_shipped_sweep_loads_and_names_itself():
    names = builtin_sweeps()
    assert {"thesis-sprocket-step", "thesis-sprocket-halfround", "thesis-idler-step",
            "thesis-idler-halfround"} | SENSITIVITIES <= set(names)
    for name, path in names.items():
        s = load_sweep(name)
        assert s.name == name and s.description, name
        assert load_sweep(path).to_dict() == s.to_dict()
    assert find_sweep("thesis-idler-step") == SWEEPS_DIR / "thesis-idler-step.toml"
    with pytest.raises(ValueError, match="no built-in sweep of that name; built-in: .*thesis-sprocket-step"):
        find_sweep("thesis-sprocket-stepp")


@pytest.mark.parametrize("wheel", ["sprocket", "idler"])
def test_thesis_step_sweeps_are_the_9x9_grid_with_1cm_bisection_and_tensioning(wheel):
    s = load_sweep(f"thesis-{wheel}-step")
    assert s.event == "step-climb" and s.vehicle == "m113"
    assert s.grid == {f"{wheel}.dx": THESIS_AXIS, f"{wheel}.dz": THESIS_AXIS}
    assert len(s.points()) == 81
    o = s.options
    assert (o["search"], o["lo"], o["hi"], o["tol"], o["tension"]) == ("bisect", 0.3, 1.0, 0.01, True)


@pytest.mark.parametrize("wheel", ["sprocket", "idler"])
def test_thesis_halfround_sweeps_step_speed_by_half_a_metre_per_second_until_2_5_g(wheel):
    s = load_sweep(f"thesis-{wheel}-halfround")
    assert s.event == "half-round"
    assert s.grid == {f"{wheel}.dx": THESIS_AXIS, f"{wheel}.dz": THESIS_AXIS, "event.height_in": [8, 10, 12]}
    assert len(s.points()) == 243
    o = s.options
    sp = o["speeds"]
    assert sp[0] == 1.0 and all(abs(b - a - 0.5) < 1e-12 for a, b in zip(sp, sp[1:])) and sp[-1] >= 10.0
    assert o["stop_after_limit"] is True and o["limit_g"] == 2.5 and o["limit_on"] == "unfiltered"
    assert o["tension"] is True


def test_sensitivity_sweeps_vary_one_setting_with_a_1cm_bisection():
    # the changed settings first, the design last (a study stopped early has the changed points)
    expect = {"m113-step-pad-modulus": ("spec.materials.pad.youngs_modulus", [5.0e6, 8.0e5]),
              "m113-step-friction": ("friction", [0.6, 1.0, 0.8]),
              "m113-step-timestep": ("event.step", [2.5e-4, 1e-4, 5e-4]),
              "m113-step-contact": ("scenario.contact.implicit", [False, True]),
              "m113-step-hull": ("hull", [False, True])}
    for name, (key, values) in expect.items():
        s = load_sweep(name)
        assert s.event == "step-climb" and s.grid == {key: values}, name
        assert (s.options["search"], s.options["lo"], s.options["hi"], s.options["tol"]) == \
            ("bisect", 0.3, 1.0, 0.01), name


def test_sensitivity_points_change_what_they_name():
    base = _spec_for({"vehicle": "m113"}, {})
    pad = load_sweep("m113-step-pad-modulus").points()[0]["params"]
    assert base.materials["pad"].youngs_modulus == 8.0e5
    assert _spec_for({"vehicle": "m113"}, pad).materials["pad"].youngs_modulus == 5.0e6
    hull_off = load_sweep("m113-step-hull").points()[0]["params"]
    assert len(base.chassis.hull) > 0 and _spec_for({"vehicle": "m113"}, hull_off).chassis.hull == ()
    s = load_sweep("m113-step-contact")
    opts = _event_options(s.to_dict(), s.points()[0]["params"])
    assert opts["scenario_options"] == {"options": {"contact.implicit": False}}
    t = load_sweep("m113-step-timestep")
    assert _event_options(t.to_dict(), t.points()[1]["params"])["step"] == 1e-4


def test_sweep_files_are_package_data():
    root = Path(__file__).resolve().parents[3]
    data = tomllib.loads((root / "pyproject.toml").read_text())
    globs = data["tool"]["setuptools"]["package-data"]["trackdyn"]
    pkg = root / "src" / "trackdyn"
    for p in SWEEPS_DIR.glob("*.toml"):
        rel = p.relative_to(pkg).as_posix()
        assert any(fnmatch(rel, g) for g in globs), f"{rel} is not in the wheel's package data"
