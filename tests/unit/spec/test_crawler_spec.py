"""The crawler spec: the seven-parameter tooth and the undercarriage frame, validated with named errors; the
frame spring's static force against its closed form."""

import math

import pytest

import trackdyn.spec as S
from trackdyn.assembly.builder import build_vehicle, frame_spring_force
from trackdyn.assembly.massless import build_massless

FRAME = {"mass": 500.0, "inertia": [20.0, 400.0, 400.0], "com": [-2.0, -0.2], "pivot": [-0.3, -0.1],
         "spring_chassis": [-3.5, 0.2], "spring_frame": [-3.5, -0.1], "stiffness": 1e6, "damping": 1e4}


def test_crawler_in_the_library():
    spec = S.get("crawler")
    assert "crawler" in S.library_names()
    sp, sh = spec.sprocket, spec.shoes
    assert sh.count == 45 and sh.pitch == 0.190 and sh.width == 0.60
    assert len(spec.suspension.stations) == 7 and len(spec.rollers.locations) == 2
    # the pins seat at the bottom of the valleys: one pitch apart on the assembly circle
    assert sp.assembly_radius == pytest.approx(sp.tooth.root_radius + sh.pin_radius, abs=1e-6)
    assert 2 * sp.assembly_radius * math.sin(math.pi / sp.n_teeth) == pytest.approx(sh.pitch, abs=1e-5)
    assert sp.outer_radius == sp.tooth.tip_radius and sp.addendum_radius is None
    assert S.loads_spec(S.dump_toml(spec), "toml") == spec


@pytest.mark.parametrize("changes, path, reason", [
    ({"sprocket.assembly_radius": 0.34}, "(spec)", "tooth.root_radius + shoes.pin_radius"),
    ({"sprocket.tooth.seating_radius": 0.029}, "(spec)", "cannot seat"),
    ({"sprocket.addendum_radius": 0.39}, "sprocket", "describe the arc profile"),
    ({"sprocket.tooth": None}, "sprocket", "the arc profile needs"),
    ({"sprocket.tooth.tip_radius": 0.30}, "sprocket", "r2"),
    ({"sprocket.tooth.face_angle": 1.6}, "sprocket.tooth.face_angle", "less than"),
    ({"frame.spring_frame": [2.9, 0.35]}, "frame", "coincide"),
    ({"frame.stiffness": 0.0}, "frame.stiffness", "greater than 0"),
])
def test_invalid_crawler_fields_are_named(changes, path, reason):
    with pytest.raises(S.SpecError) as ei:
        S.get("crawler").replace(changes)
    msg = str(ei.value)
    assert path in msg and reason in msg


def test_a_frame_needs_rigid_lower_rollers():
    with pytest.raises(S.SpecError, match="frame: the undercarriage frame carries rigid lower rollers"):
        S.get("m113").replace({"frame": FRAME})


def test_frame_spring_force_closed_form():
    """Two springs hold the moment about the pivot of the chassis side's weight (chassis, both sprockets, the
    carrier rollers, the seat and its operator at the driver's position): F = g sum m (x - x_P) / (2 arm), the
    vertical spring's arm its x from the pivot."""
    spec = S.get("crawler")
    m = [(12845.0, 1.64), (2 * 60.0, 0.0), (2 * 20.0, 1.0), (2 * 20.0, 2.3), (75.0, 2.3)]
    expected = 9.81 * sum(mi * (x - 0.40) for mi, x in m) / (2 * (2.90 - 0.40))
    assert frame_spring_force(spec) == pytest.approx(expected, rel=1e-12)
    # assembled with that compression: free length = length + F / k
    vm = build_vehicle(spec)
    tsda = [f for f in vm.model.forces if getattr(f, "name", "") == "left.frame.spring"][0]
    assert tsda.free_length == pytest.approx(0.35 + expected / 3.15e6, rel=1e-12)
    assert vm.sides["left"].frame == "left.frame"
    joints = {j.name: type(j).__name__ for j in vm.model.joints}
    assert joints["left.frame.pivot"] == "Revolute" and joints["left.roadwheel[3].axle"] == "Revolute"
    locked = build_vehicle(spec.replace({"frame.locked": True}))
    assert {j.name: type(j).__name__ for j in locked.model.joints}["left.frame.pivot"] == "Fixed"
    assert not [f for f in locked.model.forces if getattr(f, "name", "") == "left.frame.spring"]


def test_massless_refuses_a_frame():
    """The frame is refused by name (on the crawler without its seat, which the massless fidelity refuses
    first)."""
    with pytest.raises(ValueError, match="frame"):
        build_massless(S.get("crawler").model_copy(update={"seat": None}))
