"""Grid keys of sweep files beyond the geometry offsets: ``hull``, ``friction``, ``scenario.<option>``,
``spec.<field>`` and ``event.<option>`` values -- checked when the file is read (field, value, reason), and
applied at a point (the scenario the event builds, caught before anything is simulated)."""

import pytest

from trackdyn.experiments.sweep import sweep_from_dict

BASE = {"vehicle": "m113", "event": "step-climb", "grid": {"sprocket.dx": [0.0]}}


@pytest.mark.parametrize("grid, msg", [
    ({"hull": [1, 0]}, r"sweep.grid.hull: value 1: expected true .* or false"),
    ({"hull": ["no"]}, r"sweep.grid.hull: value 'no'"),
    ({"friction": [0.8, 0.0]}, r"sweep.grid.friction: value 0.0: a friction coefficient must be in \(0, 2\]"),
    ({"friction": ["high"]}, r"sweep.grid.friction: value 'high' is not a number"),
    ({"sprocket.dz": [True]}, r"sweep.grid.sprocket.dz: value True is not a number"),
    ({"scenario.contact.implicit": ["yes"]}, r"sweep.grid.scenario.contact.implicit: value 'yes': .*true or false"),
    ({"scenario.contact.stiff": [True]}, r"sweep.grid.scenario.contact.stiff: value True: .*unknown contact option"),
    ({"scenario.": [True]}, r"name a scenario option"),
    ({"spec.materials.pad.youngs_modulus": [8e5, -1.0]}, r"sweep.grid.spec.materials.pad.youngs_modulus: value -1.0"),
    ({"spec.materials.pad.youngs_modulus": [{"a": 1}]}, r"not a number, a string or true/false"),
    ({"event.scenario_options": ["x"]}, r"has no option 'scenario_options'"),
    ({"colour": [1]}, r"unknown parameter; use .*hull, friction, .*scenario.<option>"),
])
def test_bad_grid_values_name_the_key_the_value_and_the_reason(grid, msg):
    with pytest.raises(ValueError, match=msg):
        sweep_from_dict({**BASE, "grid": grid})


def test_good_grid_values_are_accepted_in_order():
    s = sweep_from_dict({**BASE, "grid": {"hull": [True, False], "friction": [0.6, 1.0],
                                          "scenario.contact.implicit": [True, False],
                                          "spec.materials.pad.youngs_modulus": [8e5, 5e6],
                                          "event.step": [5e-4, 1e-4]}})
    assert len(s.points()) == 32
    assert s.points()[0]["id"] == ("hull=True_friction=p0.6_scenario.contact.implicit=True_"
                                   "spec.materials.pad.youngs_modulus=p800000_event.step=p0.0005")


def test_scenario_options_are_checked_against_the_sweep_fidelity():
    # massless takes no contact.* options: the same value is refused for it, naming its owner
    with pytest.raises(ValueError, match=r"sweep.grid.scenario.contact.implicit: value True: .*links"):
        sweep_from_dict({**BASE, "fidelity": "massless", "grid": {"scenario.contact.implicit": [True]}})


class _Prepared(Exception):
    """Raised by the spy in place of building the model."""


def _scenario_at(monkeypatch, tmp_path, grid, options=None):
    import trackdyn.sim.run as run
    from trackdyn.experiments import trials
    from trackdyn.experiments.sweep import run_point

    seen = []

    def spy(scenario, *args, **kwargs):
        seen.append(scenario)
        raise _Prepared

    monkeypatch.setattr(run, "prepare", spy)
    monkeypatch.setattr(trials, "prepare", spy)
    s = sweep_from_dict({**BASE, "grid": grid,
                         "options": {"search": "values", "values": [0.4], **(options or {})}})
    p, = s.points()
    with pytest.raises(_Prepared):
        run_point(s.to_dict(), p, str(tmp_path))
    return seen[0]


def test_hull_false_removes_the_hull_shapes_and_keeps_the_rest(monkeypatch, tmp_path):
    from trackdyn.experiments.events import resolve_vehicle

    sc = _scenario_at(monkeypatch, tmp_path, {"hull": [False]})
    spec, ref = sc.vehicle_spec(), resolve_vehicle("m113")
    assert len(ref.chassis.hull) == 2 and spec.chassis.hull == ()
    a, b = spec.model_dump(), ref.model_dump()
    a["chassis"].pop("hull"), b["chassis"].pop("hull")
    assert a == b


def test_friction_sets_the_pad_the_step_and_the_flat_ground(monkeypatch, tmp_path):
    sc = _scenario_at(monkeypatch, tmp_path, {"friction": [1.0]})
    assert sc.vehicle_spec().materials["pad"].friction == 1.0
    mats = {m.name: m.friction for m in sc.terrain.materials}
    assert mats == {"ground": 1.0, "timber": 1.0}  # the ground's default is 0.8, the step's 0.8


def test_scenario_option_and_event_option_reach_the_scenario(monkeypatch, tmp_path):
    sc = _scenario_at(monkeypatch, tmp_path, {"scenario.contact.implicit": [False], "event.step": [2.5e-4]})
    assert sc.options == {"contact.implicit": False} and sc.step == 2.5e-4
