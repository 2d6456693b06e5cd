"""The links model of a vehicle: topology, names, joints satisfied at assembly, mass."""

import warnings

import numpy as np

import trackdyn.spec as S
from trackdyn.assembly.builder import build_vehicle
from trackdyn.formulations import AbsoluteSystem


def test_m113_model_assembles_consistently():
    spec = S.get("m113")
    vm = build_vehicle(spec, origin=(0.0, 0.0, 1.0))
    m = vm.model
    n_l, n_r = vm.geometry.n_shoes("left"), vm.geometry.n_shoes("right")
    # chassis + per side: sprocket, carrier, idler, 5 arms, 5 wheels, shoes
    assert m.n_bodies == 1 + 2 * (3 + 10) + n_l + n_r
    names = set(m.body_names)
    for nm in ["chassis", "left.sprocket", "left.idler", "right.roadwheel[4]", "left.arm[2]",
               f"right.shoe[{n_r - 1}]"]:
        assert nm in names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = AbsoluteSystem(m)
    # every joint satisfied at the assembled pose; 3 redundant rows per closed planar loop
    s.update_kinematics(s.q0, s.v0)
    s.update_drivers(0.0)
    s.eval_constraints()
    assert np.max(np.abs(s.phi)) < 1e-9
    assert sum(c for _, c in s.removed_rows) == 6
    shoes_mass = (n_l + n_r) * spec.shoes.mass
    expected = (spec.chassis.mass + shoes_mass + 2 * (spec.sprocket.mass + spec.idler.mass
                + spec.idler.tensioner.carrier_mass + 5 * (spec.suspension.arm_mass + spec.suspension.wheel_mass)))
    assert np.isclose(s.mass.sum(), expected)


def test_tensioner_spring_holds_the_target_tension_at_assembly():
    spec = S.get("m113")
    vm = build_vehicle(spec, origin=(0.0, 0.0, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = AbsoluteSystem(vm.model)
    s.update_kinematics(s.q0, s.v0)
    blk = [b for b in s.blocks if "left.tensioner" in getattr(b, "names", [])][0]
    blk.evaluate(0.0, s.kin, s.v0)
    k = blk.names.index("left.tensioner")
    push = -blk.force[k]  # the TSDA tension is negative when it pushes
    # two nearly horizontal strands at 10 kN: a push of about 20 kN
    assert 18e3 < push < 20.5e3
