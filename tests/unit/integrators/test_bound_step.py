"""The Euler and θ steps on bound kernels (AbsoluteSystem.bind_step) give the general path's trajectory bit for bit."""

import warnings

import numpy as np
import pytest

import trackdyn as td
from trackdyn.formulations import AbsoluteSystem
from trackdyn.sim.simulation import Simulation
from trackdyn.testing.benchmarks_contact import contact_loop_scene


def _run(integrator, bound: bool, monkeypatch):
    """A shoe loop on wheels and terrain with contact (shear history), torsion springs between the shoes and a
    spring across the loop: 40 steps."""
    with monkeypatch.context() as mp:
        if not bound:
            mp.setattr(AbsoluteSystem, "bind_step", lambda self, cK, cD, data: None)  # every stage: general path
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m, cs = contact_loop_scene("diagonal")
            shoes = [m.body(n) for n in m.body_names if n.startswith("shoe[")]
            for a, b in zip(shoes[:-1], shoes[1:]):
                m.add_force(td.RSDA(a, b, axis=[0, 1, 0], stiffness=40.0, damping=0.5))
            m.add_force(td.TSDA(shoes[0], shoes[20], point_a=[0, 0, 0], point_b=[0, 0, 0], stiffness=50.0,
                                damping=1.0, free_length=1.0))
            sim = Simulation(m, step=2e-4, integrator=integrator, providers=[cs], record=["contact.count"])
        sim.run(0.008)
        assert (sim.system._step_calls is not None) == bound
        st = sim.state
        return st.q.copy(), st.v.copy(), st.lam.copy(), {k: a.copy() for k, a in st.extra.items()}


@pytest.mark.parametrize("integrator", ["euler-implicit-linearized", "theta-linearized"])
def test_bound_step_is_the_general_step(integrator, monkeypatch):
    a = _run(integrator, True, monkeypatch)
    b = _run(integrator, False, monkeypatch)
    for x, y in zip(a[:3], b[:3]):
        assert np.array_equal(x, y)
    assert a[3].keys() == b[3].keys() and all(np.array_equal(a[3][k], b[3][k]) for k in a[3])
    assert any(len(v) for v in a[3].values())  # contacts with a shear history were committed
