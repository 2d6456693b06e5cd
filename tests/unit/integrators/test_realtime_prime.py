"""Priming the real-time loop: its compiled kernels typed before a timed run, with no step and no sample."""

import numpy as np

from trackdyn.driver import PID
from trackdyn.sim.run import prepare
from trackdyn.spec.scenario import Scenario


def test_priming_loads_the_loop_without_stepping_or_recording():
    sc = Scenario(vehicle="m113", driver=PID(speed=4.2, y=0.0, delay=0.0), t_end=0.1, step=0.01,
                  output_step=0.01, speed=4.2, name="cruise", fidelity="massless")
    sim = prepare(sc).sim
    it, rec, system = sim.integrator, sim.recorder, sim.system
    st = sim.state
    before = (st.t, st.q.copy(), st.v.copy(), st.acc.copy(), {k: v.copy() for k, v in st.extra.items()})
    counters, timing = dict(it.counters), dict(it.timing)
    assert it._chunk_entry is None and it._samples_entry is None
    assert system._outputs_plan is None and rec._gather is None
    it.prime(st, np.array([np.inf, np.inf, np.inf, 0.0]))
    system.prime_outputs()
    rec.prime(st)
    assert it._chunk_entry is not None and it._samples_entry is not None
    assert system._outputs_plan and rec._gather is not None
    # nothing advanced, counted, timed or recorded
    assert st.t == before[0] and np.array_equal(st.q, before[1]) and np.array_equal(st.v, before[2])
    assert np.array_equal(st.acc, before[3])
    assert all(np.array_equal(st.extra[k], v) for k, v in before[4].items())
    assert dict(it.counters) == counters and dict(it.timing) == timing
    assert rec.n_samples == 0 and rec.last_t is None and sim.steps == 0
    # and the primed run is the run
    res = sim.run(0.1)
    assert res.status == "complete" and len(res.t) == 11 and sim.steps == 10
