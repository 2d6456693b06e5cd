"""Bad input is refused before any simulation, naming the element and the reason."""

import numpy as np
import pytest

import trackdyn as td


@pytest.fixture
def model():
    m = td.Model()
    m.add_body("a", mass=1.0, inertia=[1, 1, 1])
    return m


@pytest.mark.parametrize("mass", [0.0, -1.0, float("nan"), float("inf")])
def test_non_positive_mass(model, mass):
    with pytest.raises(ValueError, match=r"body 'b'.*mass"):
        model.add_body("b", mass=mass, inertia=[1, 1, 1])


@pytest.mark.parametrize("inertia, reason", [
    ([1, 1, -1], "positive definite"),
    ([[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], "symmetric"),
    ([1, 1, 5], "triangle"),
    ([1, 1], "3 principal"),
])
def test_bad_inertia(model, inertia, reason):
    with pytest.raises(ValueError, match=rf"body 'b'.*{reason}"):
        model.add_body("b", mass=1.0, inertia=inertia)


def test_duplicate_name_and_recovery(model):
    with pytest.raises(ValueError, match="already used"):
        model.add_body("a", mass=1.0, inertia=[1, 1, 1])
    with pytest.raises(ValueError):
        model.add_body("c", mass=-1.0, inertia=[1, 1, 1])
    model.add_body("c", mass=1.0, inertia=[1, 1, 1])  # the failed name was released


def test_zero_length_axis(model):
    with pytest.raises(ValueError, match=r"Revolute 'pin'.*zero-length axis"):
        td.Revolute(model.ground, model.body("a"), axis=[0, 0, 0], name="pin")


def test_joint_between_body_and_itself(model):
    a = model.body("a")
    with pytest.raises(ValueError, match=r"Spherical 'j'.*itself"):
        model.add_joint(td.Spherical(a, a, name="j"))


def test_unknown_body(model):
    with pytest.raises(ValueError, match="unknown body 'zz'"):
        model.add_joint(td.Spherical(model.ground, "zz", name="j"))


def test_body_of_another_model(model):
    other = td.Model()
    b = other.add_body("b", mass=1.0, inertia=[1, 1, 1])
    with pytest.raises(ValueError, match="another model"):
        model.add_joint(td.Spherical(model.ground, b, name="j"))


def test_bad_quaternion(model):
    with pytest.raises(ValueError, match="unit quaternion"):
        model.add_body("b", mass=1.0, inertia=[1, 1, 1], quat=[2, 0, 0, 0])


def test_force_element_inputs(model):
    a = model.body("a")
    with pytest.raises(ValueError, match=r"TSDA 's'.*spring_table.*increase"):
        td.TSDA(model.ground, a, [0, 0, 0], [1, 0, 0], spring_table=[[1, 0], [0, 1]], name="s")
    with pytest.raises(ValueError, match=r"RSDA 'r'.*zero-length"):
        td.RSDA(model.ground, a, axis=[0, 0, 0], name="r")
    with pytest.raises(ValueError, match="itself"):
        model.add_force(td.TSDA(a, a, [0, 0, 0], [1, 0, 0], name="s2"))


def test_motor_needs_exactly_one_law(model):
    with pytest.raises(ValueError, match="exactly one"):
        td.RevoluteMotor(model.ground, model.body("a"), angle=1.0, speed=1.0, name="m")


def test_simulation_settings(model):
    with pytest.raises(ValueError, match="step must be positive"):
        td.Simulation(model, step=0.0)
    with pytest.raises(ValueError, match="multiple of step"):
        td.Simulation(model, step=1e-3, output_step=1.5e-3)
    with pytest.raises(ValueError, match="unknown integrator"):
        td.Simulation(model, integrator="leapfrog")
    with pytest.raises(ValueError, match="unknown solver"):
        td.Simulation(model, solver="magic")
    with pytest.raises(ValueError, match="no series"):
        td.Simulation(model, record=["nothing.*"])
