"""chain64 benchmark: 64 links on revolutes, 2 s at h = 1e-4 and 1e-3 (issue #2, #6).

Usage: python bench/chain64.py [--repeats 3]
Runs the registered benchmark (`trackdyn bench chain64 --json`) ``repeats`` times (fresh simulations of the
same model) and prints the mean over all of them as the headline for h = 1e-4 (``ms_per_step_h1e-4``,
recording included), their median as a secondary figure, every run, and the per-step wall-time
distribution of one more run (10th percentile and median of single steps). MuJoCo's chains side by side:
bench/peers/chain64_mujoco.py.
"""

import argparse
import json
import os
import statistics

from trackdyn.sim.simulation import Simulation
from trackdyn.testing import problems as P
from trackdyn.testing.benchmarks import run_benchmark, time_per_step

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
    mean = 1e3 * sum(r["wall_time_s"] for r in runs) / sum(r["steps"] for r in runs)
    print(json.dumps({"ms_per_step_h1e-4": mean,
                      "median_ms_per_step_h1e-4": statistics.median(r["ms_per_step"] for r in runs),
                      "runs": runs, "per_step_h1e-4": dist, "load": list(os.getloadavg())}, indent=2, default=str))
