"""massless-sample (tool, not a benchmark): what one output sample of the massless CLI cruise costs, isolated.

The massless M113 of `trackdyn run cruise --fidelity massless --step 0.01` (4.2 m/s PID, every series at
every step), rolled for 1 s, then the per-sample calls of its loop timed alone, each as the minimum over
`--blocks` blocks of `--calls` calls (the least disturbed by other work on a shared machine), in µs:
`run_chunk` with no step (the call's overhead) and with one step, `TreeSystem.evaluate_outputs` with the
track's outputs fresh, and `Recorder.sample` (which calls it); where the stepper has it, `run_samples` of 64
one-step samples per call, per sample. One step plus its sample is the loop's cost per simulated step at
`--step 0.01` recording every step. Compare versions by interleaved processes.

    python bench/massless_sample.py [--blocks 60] [--calls 100]
"""

import argparse
import json
import time

import numpy as np

from trackdyn.driver import PID
from trackdyn.sim.run import prepare
from trackdyn.spec.scenario import Scenario


def _best(f, blocks, calls):
    f()
    best = float("inf")
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - t0) / calls)
    return 1e6 * best


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=60)
    ap.add_argument("--calls", type=int, default=100)
    a = ap.parse_args()
    sc = Scenario(vehicle="m113", driver=PID(speed=4.2, y=0.0, delay=0.0), t_end=2.0, step=0.01,
                  output_step=0.01, speed=4.2, name="cruise", fidelity="massless")
    sim = prepare(sc).sim
    sim.run(1.0)
    it, sy, st = sim.integrator, sim.system, sim.state
    lim = np.array([1e9, 1e9, 1e9, 1.0])
    sy.fresh_q = st.q  # the track's outputs of this state are taken as the stepper's (the loop's fresh path)
    row = {"run_chunk_no_step_us": _best(lambda: it.run_chunk(st, 0, lim, False, False), a.blocks, a.calls),
           "run_chunk_one_step_us": _best(lambda: it.run_chunk(st, 1, lim, False, False), a.blocks, a.calls),
           "evaluate_outputs_us": _best(lambda: sy.evaluate_outputs(st), a.blocks, a.calls),
           "recorder_sample_us": _best(lambda: sim.recorder.sample(st), a.blocks, a.calls)}
    row["step_and_sample_us"] = row["run_chunk_one_step_us"] + row["recorder_sample_us"]
    if hasattr(it, "run_samples"):  # stop 27: 64 samples of one step per call, per sample
        row["run_samples_per_sample_us"] = _best(lambda: it.run_samples(st, 64, 1, lim, False), a.blocks,
                                                 max(a.calls // 64, 1)) / 64
        row["step_and_sample_batched_us"] = row["run_samples_per_sample_us"] + row["recorder_sample_us"]
    try:
        with open("/proc/loadavg") as fh:  # Linux: the machine's load while measuring
            row["load_average"] = fh.read().split()[:3]
    except OSError:
        pass
    print(json.dumps(row))
