"""The direct solver's refinement solve: off for the linearised implicit Euler step, on for the others."""

import numpy as np
import pytest

from trackdyn.sim.simulation import Simulation
from trackdyn.testing import problems as P


@pytest.mark.parametrize("integrator, refine", [("euler-implicit-linearized", 0), ("rk4", 1), ("hht", 1)])
def test_default_refinement_per_integrator(integrator, refine):
    sim = Simulation(P.chain(n_links=4), integrator=integrator, step=1e-3)
    assert sim.integrator.solver.refine == refine


def test_refinement_can_be_asked_for_and_changes_nothing_on_the_chain():
    """``refine=1`` stays available; on the chain both give the same motion to round-off."""
    runs = []
    for opts in ({}, {"refine": 1}):
        sim = Simulation(P.chain(n_links=8), integrator="euler-implicit-linearized", step=1e-3, **opts)
        assert sim.integrator.solver.refine == opts.get("refine", 0)
        sim.run(0.2)
        runs.append(sim.state.q.copy())
    scale = np.max(np.abs(runs[0]))
    assert np.max(np.abs(runs[0] - runs[1])) <= 1e-10 * scale
