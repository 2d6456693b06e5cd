"""Several output samples per compiled call (RealtimeStepper.run_samples): the same run as one call per sample.

The fast path of :class:`~trackdyn.sim.realtime.RealtimeSimulation` now advances up to 64 output samples
per compiled call, keeps each sample's state and track outputs in history buffers and records them after
the call. Compared here with the step-by-step path (a callback) value for value, through a run the
divergence monitor stops in its middle (a refusal after some samples of a call).
"""

import numpy as np
import pytest

import trackdyn as td
from trackdyn.driver import PID
from trackdyn.sim.run import prepare


def _run(slow, max_speed=None, output_step=0.02, t_end=0.8):
    sc = td.Scenario(vehicle="robot", fidelity="massless", driver=PID(speed=2.0, y=0.0), t_end=t_end, step=4e-3,
                     output_step=output_step, speed=0.0)
    sim = prepare(sc).sim
    if max_speed is not None:
        sim.monitor.max_speed = max_speed
    calls = []
    it = sim.integrator
    orig = it.run_samples

    def spy(*a, **k):
        out = orig(*a, **k)
        calls.append(out[1])
        return out

    it.run_samples = spy
    res = sim.run(t_end, callback=(lambda s: False) if slow else None)
    return res, sim, calls


@pytest.mark.parametrize("output_step", [4e-3, 0.02])
def test_samples_per_call_record_what_the_step_by_step_path_records(output_step):
    (a, sa, _), (b, sb, calls) = _run(True, output_step=output_step), _run(False, output_step=output_step)
    assert max(calls) > 1  # several samples per call were taken
    assert a.status == b.status == "complete" and sa.steps == sb.steps
    assert a.columns == b.columns and np.array_equal(a.t, b.t)
    assert np.allclose(a.values, b.values, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_a_refusal_in_the_middle_of_a_call_stops_where_the_step_by_step_run_stops():
    """The robot starts at rest and speeds up: a speed limit of 1 m/s refuses a step well inside the run."""
    (a, sa, _), (b, sb, calls) = _run(True, max_speed=1.0), _run(False, max_speed=1.0)
    assert a.status == b.status == "diverged"
    assert sa.steps == sb.steps > 20 and calls and calls[-1] >= 1  # the refused call had completed samples
    assert "m/s" in b.metadata["error"]
    assert np.array_equal(a.t, b.t)
    assert np.allclose(a.values, b.values, rtol=1e-9, atol=1e-12, equal_nan=True)
