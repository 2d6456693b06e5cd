"""The real-time fast path (several steps per compiled call, compiled driver, cheaper outputs) changes no answer.

:class:`~trackdyn.sim.realtime.RealtimeSimulation` runs the same steps as the
one-step-at-a-time path of :class:`~trackdyn.sim.simulation.Simulation` (taken
whenever ``run`` gets a callback), records the track's outputs from the
stepper's own evaluation and the markers from a compiled kernel; the Newton
matrix is solved by :func:`~trackdyn.integrators._realtime_kernels.lu_solve`. Each is
compared with the path it replaces.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trackdyn as td
from trackdyn import terrain as tt
from trackdyn.driver import PID, Brake, FullThrottle
from trackdyn.integrators import _realtime_kernels as TK
from trackdyn.sim.realtime import RealtimeSimulation
from trackdyn.sim.run import prepare


def _runs(vehicle, terrain_fn, driver, t_end, step, output_step, speed=0.0):
    out = []
    for slow in (True, False):
        sc = td.Scenario(vehicle=vehicle, fidelity="massless", terrain=terrain_fn(), driver=driver, t_end=t_end,
                         step=step, output_step=output_step, speed=speed)
        prep = prepare(sc)
        assert isinstance(prep.sim, RealtimeSimulation)
        res = prep.sim.run(t_end, callback=(lambda sim: False) if slow else None)
        assert res.status == "complete"
        out.append((res.frame(), prep.sim))
    return out


def _max_rel_diff(a, b):
    assert list(a.columns) == list(b.columns)
    assert len(a) == len(b)
    worst = 0.0
    for c in a.columns:
        x, y = a[c].to_numpy(float), b[c].to_numpy(float)
        assert np.array_equal(np.isnan(x), np.isnan(y)), c
        m = ~np.isnan(x)
        if m.any():
            scale = max(float(np.abs(x[m]).max()), 1e-12)
            worst = max(worst, float(np.abs(x[m] - y[m]).max()) / scale)
    return worst


@pytest.mark.parametrize("driver", [PID(speed=2.0, y=0.0), Brake(), FullThrottle(delay=0.1)])
def test_fast_path_records_what_the_step_by_step_path_records(driver):
    """Robot over a half-round with a PID driver, at full throttle, and at rest braked: every recorded series,
    both paths."""
    (a, slow), (b, fast) = _runs("robot", lambda: tt.Flat() + tt.HalfRound(0.05, x=0.9), driver, 0.8, 4e-3, 0.02,
                                 speed=0.0 if isinstance(driver, Brake) else 2.0)
    # same steps, same driver arithmetic, the same kernels evaluated at the same states: equal to round-off
    assert _max_rel_diff(a, b) <= 1e-9
    assert fast.integrator.chunk_driver() is not None  # the fast path is compiled for this driver
    assert slow.steps == fast.steps
    assert fast.integrator.counters["steps"] == slow.integrator.counters["steps"]
    assert np.array_equal(slow.state.extra["driver"], fast.state.extra["driver"])
    if isinstance(driver, PID):
        assert b["right.roadwheel[0].track.normal"].max() > 0  # the run crossed the obstacle
        assert np.nanmax(np.abs(b["driver.throttle"])) > 0


def test_lu_solve_matches_numpy():
    rng = np.random.default_rng(12)
    for n in (1, 8, 18):
        A = rng.normal(size=(n, n)) + n * np.eye(n)
        b = rng.normal(size=n)
        x = b.copy()
        assert TK.lu_solve(A.copy(), x)
        assert np.allclose(x, np.linalg.solve(A, b), rtol=1e-12, atol=1e-12)
    # a zero pivot column: singular
    A = np.ones((3, 3))
    A[:, 0] = 0.0
    assert not TK.lu_solve(A, np.ones(3))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_lu_solve_needs_pivoting(seed):
    """Permuted diagonally dominant matrices (zero leading entries): partial pivoting gets them right."""
    rng = np.random.default_rng(seed)
    n = 9
    A = rng.normal(size=(n, n)) + 3 * n * np.eye(n)
    A = A[rng.permutation(n)]
    b = rng.normal(size=n)
    x = b.copy()
    assert TK.lu_solve(A.copy(), x)
    np.testing.assert_allclose(A @ x, b, rtol=0, atol=1e-10)


def test_a_refused_step_stops_the_fast_run_with_the_monitors_diagnostic():
    """A monitor limit the first step breaks: the compiled loop refuses it and the Python path names the body."""
    sc = td.Scenario(vehicle="robot", fidelity="massless", driver=PID(speed=2.0), t_end=0.2, step=4e-3,
                     output_step=0.02, speed=2.0)
    prep = prepare(sc)
    prep.sim.monitor.max_speed = 1.0  # the robot starts at 2 m/s
    res = prep.sim.run(0.2)
    assert res.status == "diverged"
    assert "m/s" in res.metadata["error"] and "limit 1.0" in res.metadata["error"]
    assert prep.sim.steps == 0
