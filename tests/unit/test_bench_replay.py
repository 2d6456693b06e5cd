"""bench/replay_m113.py: one step's compiled calls, replayed after the step's array resets, redo the step."""

import numpy as np

import trackdyn as td


def _arm():
    """A pendulum arm on a revolute with a torsion spring-damper, and a spring to a second body."""
    m = td.Model()
    arm = m.add_body("arm", mass=2.0, inertia=[0.1, 0.2, 0.15], pos=[0.5, 0, 0])
    tip = m.add_body("tip", mass=0.5, inertia=[0.01, 0.01, 0.01], pos=[1.2, 0, -0.1], vel=[0, 0, 0.3])
    m.add_joint(td.Revolute(m.ground, arm, point=[0, 0, 0], axis=[0, 1, 0], name="pin"))
    m.add_force(td.RSDA(m.ground, arm, axis=[0, 1, 0], stiffness=50.0, damping=2.0, name="torsion"))
    m.add_force(td.TSDA(arm, tip, point_a=[1.0, 0, 0], point_b=[1.2, 0, -0.1], stiffness=800.0, damping=5.0,
                        free_length=0.15, name="spring"))
    return m


def _recorded(bench_script):
    """(tool, simulation, start state, recorded calls, new state) of one step of the arm from t = 0.05 s."""
    tool = bench_script("replay_m113")
    sim = td.Simulation(_arm(), step=1e-3)
    sim.run(0.05)
    start = sim.state
    log, new = tool.record_step(sim)
    return tool, sim, start, log, new


def test_replayed_calls_redo_the_step_exactly(bench_script):
    tool, sim, start, log, new = _recorded(bench_script)
    names = {d.__name__ for d, _, _ in log}
    assert {"rsda_eval", "scatter_rotational", "tsda_eval", "supernodal_factor", "_finish_step"} <= names
    want = (new.q.copy(), new.v.copy(), new.lam.copy())
    for arr in (new.q, new.v, new.lam):
        arr[:] = np.nan  # the replay must write them again
    tool.prologue(sim.system, start)
    for fn, args in tool.entry_plan(log):
        fn(*args)
    for got, exp in zip((new.q, new.v, new.lam), want):
        assert np.array_equal(got, exp)
    # the patches are gone: a kernel in its module is the dispatcher again
    from trackdyn.mbs import _force_kernels as FK

    assert type(FK.rsda_eval).__name__ == "CPUDispatcher"


def test_lean_step_advances_like_the_real_step(bench_script):
    """LeanStep (the recorded kernels with the per-step arrays substituted) gives the real steps' states."""
    tool, sim, start, log, new = _recorded(bench_script)
    lean = tool.LeanStep(sim.system, sim.integrator.h, log, start, new)
    sim.state = start
    assert tool.check_lean(sim, lean, n=50)
    b = lean(lean(start))
    assert b.t == start.t + 2e-3 and not np.array_equal(b.q, start.q)
