"""``sprocket.lateral_backlash``: the sprocket's lateral guide in the spec (optional; checked against the gears)."""

import pytest

import trackdyn as td
from trackdyn.assembly.contact import sprocket_guide_clearance
from trackdyn.spec import SpecError
from trackdyn.spec.io import dump_json, dump_toml, loads_spec


def test_a_spec_without_the_field_loads_and_has_no_sprocket_guide():
    spec = td.vehicles.get("m113")
    text = dump_toml(spec).replace("lateral_backlash = 0.02\n", "")
    assert "lateral_backlash" not in text
    old = loads_spec(text, "toml")
    assert old.sprocket.lateral_backlash is None and sprocket_guide_clearance(old) is None
    assert old == spec.replace({"sprocket.lateral_backlash": None})


@pytest.mark.parametrize("name, backlash", [("m113", 0.02), ("apc", 0.02), ("marder", 0.025), ("robot", 0.0044)])
def test_library_values_round_trip(name, backlash):
    spec = td.vehicles.get(name)
    assert spec.sprocket.lateral_backlash == backlash
    assert sprocket_guide_clearance(spec) == pytest.approx(backlash + 0.5 * spec.shoes.guide_width)
    for fmt, dump in (("toml", dump_toml), ("json", dump_json)):
        assert loads_spec(dump(spec), fmt) == spec


def test_bad_values_are_refused_with_the_reason():
    spec = td.vehicles.get("m113")
    with pytest.raises(SpecError, match="sprocket.lateral_backlash = -0.01"):
        spec.replace({"sprocket.lateral_backlash": -0.01})
    # the guide face (backlash + guide_width/2) must lie between the gears (gear_separation/2 = 0.1125 m)
    assert spec.replace({"sprocket.lateral_backlash": 0.09}).sprocket.lateral_backlash == 0.09
    with pytest.raises(SpecError, match="outside its gears"):
        spec.replace({"sprocket.lateral_backlash": 0.0926})
