"""chain64 benchmark: 64 links on revolutes, 2 s at h = 1e-4 and 1e-3 (issue #2, #6).

Usage: python bench/chain64.py [--repeats 3]
Prints the registered benchmark (`trackdyn bench chain64 --json`) ``repeats``
times, then, for h = 1e-4, the per-step wall-time distribution (10th
percentile: the cost of a step on an idle core; the machine is shared).
"""

import argparse
import json
import os

from trackdyn.sim.simulation import Simulation
from trackdyn.testing import problems as P
from trackdyn.testing.benchmarks import run_benchmark
from trackdyn.testing.benchmarks_vehicle import time_per_step

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--integrator", default="euler-implicit-linearized")
    a = ap.parse_args()
    runs = [run_benchmark("chain64", integrator=a.integrator) for _ in range(a.repeats)]
    m = P.chain(**P.CHAIN64)
    sim = Simulation(m, integrator=a.integrator, step=1e-4, output_step=1e-2)
    sim.run(2e-4)
    dist = time_per_step(sim, 2.0)
    med = sorted(r["ms_per_step"] for r in runs)[len(runs) // 2]
    print(json.dumps({"median_ms_per_step_h1e-4": med, "runs": runs, "per_step_h1e-4": dist,
                      "load": list(os.getloadavg())}, indent=2, default=str))
