"""WheeledVehicleSpec: the robot-6x6 spec, round trips, the choice of class, errors naming field, value, reason."""

import math

import pytest

import trackdyn.spec as S
from trackdyn.assembly.wheeled import spring_free_angles, static_loads
from trackdyn.spec.vehicle import SpecError
from trackdyn.spec.wheeled import WheeledVehicleSpec

G = 9.81


def test_robot_6x6_is_a_wheeled_spec_with_the_cited_values():
    spec = S.get("robot-6x6")
    assert isinstance(spec, WheeledVehicleSpec) and spec.running_gear == "wheels"
    assert S.get("m113").running_gear == "tracks"
    w = spec.wheels
    assert len(w.stations) == 3
    # kim-2012 Table 1: 31.416 N m/deg, 10.47 N m s/deg, 200 kN/m
    assert w.spring_stiffness == pytest.approx(31.416 * 180 / math.pi, rel=1e-4)
    assert w.spring_damping == pytest.approx(10.47 * 180 / math.pi, rel=1e-4)
    assert spec.tyre.stiffness == 200e3
    # the class's 2 t: chassis plus six arms and six wheels
    assert spec.chassis.mass + 6 * (w.arm_mass + w.mass) == pytest.approx(2000.0)
    # wheel centres at x = 0.95, 0, -0.95 m, z = 0 at the design pose (the file's frame)
    for (x, z), x_ref in zip(w.wheel_centres(), (0.95, 0.0, -0.95)):
        assert x == pytest.approx(x_ref, abs=1e-12) and z == pytest.approx(0.0, abs=1e-12)


def test_static_loads_and_free_angles():
    spec = S.get("robot-6x6")
    F = static_loads(spec)
    # the whole vehicle's centre of mass is over the middle wheels: each wheel carries a sixth of the weight
    assert F.sum() == pytest.approx(2000.0 * G, rel=1e-12)
    assert F == pytest.approx(2000.0 * G / 6, rel=1e-6)
    # each arm balanced about its pivot: k φ = F x_w - m_a g x_a - m_w g x_w (lever arms behind the pivot)
    L = spec.wheels.arm_length * math.cos(spec.wheels.design_angle)
    phi = -(F[0, 0] * L - 25 * G * L / 2 - 25 * G * L) / spec.wheels.spring_stiffness
    assert spring_free_angles(spec) == pytest.approx(phi, rel=1e-6)
    # a centre of mass behind the rear wheels cannot stand
    with pytest.raises(ValueError, match="outside the wheels' support"):
        static_loads(spec.replace({"chassis.com": [-2.0, 0.0, 0.37]}))


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_round_trip(fmt):
    spec = S.get("robot-6x6")
    text = S.dump_toml(spec) if fmt == "toml" else S.dump_json(spec)
    assert S.loads_spec(text, fmt) == spec


@pytest.mark.parametrize("changes, path, reason", [
    ({"tyre.stiffness": 0.0}, "tyre.stiffness", "greater than 0"),
    ({"tyre.friction": 5.0}, "tyre", "friction = 5.0"),
    ({"wheels.width": 2.0}, "wheels", "would overlap"),
    ({"wheels.design_angle": 20.0}, "wheels", "radians, not degrees"),
    ({"wheels.stations[1].pivot": [1.5, 0.1]}, "wheels", "front to rear"),
    ({"wheels.arm_inertia": [0.1, 0.1, 5.0]}, "wheels.arm_inertia", "triangle inequality"),
    ({"powertrain.torque_map": [[1.0, 5.0], [0.5, 1.0]]}, "powertrain.torque_map", "increase strictly"),
    ({"chassis.com": [0.0, 0.0, -0.5]}, "(spec)", "ground line"),
    ({"chassis.hull": [{"center": [0.0, 0.0, 0.4], "size": [1.0, 1.0, 0.2]}]}, "(spec)", "chassis.hull: a wheeled"),
])
def test_errors_name_field_and_reason(changes, path, reason):
    with pytest.raises(SpecError) as err:
        S.get("robot-6x6").replace(changes)
    assert any(p == path and reason in r for p, _, r in err.value.problems), str(err.value)


def test_wheels_and_tracks_together_are_refused():
    data = S.get("robot-6x6").model_dump(mode="json")
    data["sprocket"] = S.get("m113").sprocket.model_dump(mode="json")
    with pytest.raises(SpecError, match=r"wheels or on tracks, not both: remove \[wheels\] or the track's \[sprocket\]"):
        S.validate_spec(data)
