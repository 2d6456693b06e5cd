"""The tree system's compiled sample outputs against the general path, value for value (issue #34).

:meth:`TreeSystem.evaluate_outputs` evaluates the kinematics, the dampers
(TSDA), the torsion bars (RSDA) and the markers of a recorded sample in one
compiled call (:func:`trackdyn.formulations._tree_kernels.outputs`); the
oracle is the general path — each block's own ``evaluate`` (the force
kernels with their Jacobians) and the marker kernel — which the system takes
when the plan is ``False``.
"""

import numpy as np
import pytest

from trackdyn.driver import PID
from trackdyn.formulations.tree import TreeSystem
from trackdyn.mbs.forces import RSDABlock, TSDABlock
from trackdyn.mbs.markers import MarkerOutputs
from trackdyn.sim.run import prepare
from trackdyn.spec.scenario import Scenario


def _prep(t_end=0.3):
    sc = Scenario(vehicle="m113", driver=PID(speed=4.2, y=0.0, delay=0.0), t_end=t_end, step=0.01,
                  output_step=0.01, speed=4.2, name="cruise", fidelity="massless")
    return prepare(sc)


def _outputs(system):
    """Every array the sample's element outputs and kinematics live in (copies)."""
    k = system.kin
    arrs = [k.pos, k.R, k.vel, k.omega_w, k.q_ext]
    for blk in system.blocks:
        arrs += [blk.force, blk.length, blk.rate] if isinstance(blk, TSDABlock) else [blk.torque, blk.angle,
                                                                                     blk.rate]
    arrs += [p.out for p in system.providers if isinstance(p, MarkerOutputs)]
    return [a.copy() for a in arrs]


@pytest.fixture(scope="module")
def rolled():
    prep = _prep()
    prep.sim.run(0.3)  # rolling, dampers and torsion bars loaded, markers accelerating
    return prep.sim


def test_the_massless_m113_takes_the_compiled_outputs(rolled):
    s = rolled.system
    assert isinstance(s, TreeSystem)
    assert {type(b) for b in s.blocks} == {TSDABlock, RSDABlock}
    assert s._outputs_plan  # built at the first sample, not False


def test_compiled_outputs_equal_the_general_path_bit_for_bit(rolled):
    s = rolled.system
    st = rolled.state.copy()
    # a state of its own, with every velocity and acceleration non-zero, so that each output moves
    rng = np.random.default_rng(3)
    st.v = st.v + 0.3 * rng.standard_normal(st.v.shape)
    st.acc = st.acc + rng.standard_normal(st.acc.shape)
    plan = s._outputs_plan
    s.evaluate_outputs(st)
    fast = _outputs(s)
    try:
        s._outputs_plan = False  # the general path: the blocks' own evaluate, the marker kernel
        for a in _outputs(s):
            a.fill(np.nan)  # nothing carried over from the fast evaluation
        s.evaluate_outputs(st)
        general = _outputs(s)
    finally:
        s._outputs_plan = plan
    assert len(fast) == len(general) >= 12
    for a, b in zip(fast, general):
        assert np.array_equal(a, b)
    # and the outputs moved with the state (not a stale buffer on both sides)
    tsda = next(b for b in s.blocks if isinstance(b, TSDABlock))
    assert np.all(tsda.rate != 0.0) and np.all(np.isfinite(tsda.force))


def test_a_run_records_the_same_with_and_without_the_compiled_outputs():
    out = []
    for compiled in (True, False):
        prep = _prep(0.2)
        if not compiled:
            prep.sim.system._outputs_plan = False
        out.append(prep.sim.run(0.2))
    comp, gen = out
    assert comp.columns == gen.columns and len(comp.columns) > 400
    assert np.array_equal(comp.values, gen.values, equal_nan=True)


def test_elements_the_kernel_does_not_evaluate_take_the_general_path(rolled):
    s = rolled.system
    plan = s._outputs_plan
    tsda = next(b for b in s.blocks if isinstance(b, TSDABlock))
    try:
        tsda.callables = [(0, lambda l, ld, t: 0.0)]  # a user force law: evaluated in Python
        assert s._plan_outputs() is False
    finally:
        tsda.callables = []
        s._outputs_plan = plan
