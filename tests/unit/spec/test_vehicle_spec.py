"""VehicleSpec: built-in library, round trips, editing, validation errors with field paths."""

import json

import pytest

import trackdyn.spec as S


def test_library_has_m113():
    assert "m113" in S.library_names()
    spec = S.get("m113")
    assert spec.chassis.mass == 7804.0 and spec.shoes.pitch == 0.154
    assert len(spec.suspension.stations) == 5


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_round_trip(fmt):
    spec = S.get("m113")
    text = S.dump_toml(spec) if fmt == "toml" else S.dump_json(spec)
    assert S.loads_spec(text, fmt) == spec


def test_replace_makes_a_new_validated_spec():
    spec = S.get("m113")
    s2 = spec.with_sprocket_offset(dx=0.05, dz=0.10)
    assert s2.sprocket.location == (0.05, 0.10)
    assert spec.sprocket.location == (0.0, 0.0)  # immutable
    s3 = spec.replace({"suspension.stations[1].damper": True})
    assert s3.suspension.stations[1].damper
    with pytest.raises(Exception):
        spec.chassis.mass = 1.0  # frozen


@pytest.mark.parametrize("changes, path, reason", [
    ({"suspension.arm_length": -1.0}, "suspension.arm_length", "greater than 0"),
    ({"shoes.mass": 0.0}, "shoes.mass", "greater than 0"),
    ({"chassis.inertia": [1.0, 1.0, 5.0]}, "chassis.inertia", "triangle inequality"),
    ({"idler.tensioner.direction": [0.0, 0.0]}, "idler.tensioner.direction", "zero length"),
    ({"shoes.material": "rubber"}, "(spec)", "unknown material"),
    ({"sprocket.assembly_radius": 0.5}, "sprocket", "assembly_radius"),
    ({"suspension.torsion.jounce_limit": 1.0}, "suspension.torsion", "below rebound_limit"),
    ({"shoes.pad_length": 0.2}, "shoes", "exceeds the pitch"),
])
def test_invalid_fields_are_named(changes, path, reason):
    with pytest.raises(S.SpecError) as ei:
        S.get("m113").replace(changes)
    msg = str(ei.value)
    assert path in msg and reason in msg


def test_unknown_field_and_bad_file(tmp_path):
    with pytest.raises(S.SpecError, match="unknown field 'nope'"):
        S.get("m113").replace({"nope": 1})
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \"x\"\n[chassis\n")
    with pytest.raises(S.SpecError, match="cannot parse TOML"):
        S.load_spec(bad)
    data = json.loads(S.dump_json(S.get("m113")))
    data["chassis"]["extra_field"] = 1
    f = tmp_path / "extra.json"
    f.write_text(json.dumps(data))
    with pytest.raises(S.SpecError, match=r"chassis.extra_field.*Extra inputs"):
        S.load_spec(f)


def test_unknown_vehicle():
    with pytest.raises(ValueError, match="unknown vehicle 'tiger'"):
        S.get("tiger")


@pytest.mark.parametrize("name", ["m113", "apc", "marder"])
def test_every_library_vehicle_assembles(name):
    from trackdyn.assembly.builder import vehicle_geometry

    spec = S.get(name)
    g = vehicle_geometry(spec)
    for t in g.tracks.values():
        assert t.closure_error < 1e-9
    if name == "apc":
        assert g.n_shoes("left") == g.n_shoes("right") == 64  # wallin-shabana: 64 links per side
