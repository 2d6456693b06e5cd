"""chain64 in the spatial recursive formulation against the planar recursive one and the absolute one.

Steps ``testing.problems.chain(64)`` (64 links on revolutes, hung from a ground pin, released horizontal) at
h = 1e-4 s with classical RK4 in each formulation, one after the other in this process:

- ``RecursiveSpatialSystem`` + ``recursive-rk4`` (6-vectors, 6 × 6 articulated inertias; the compiled RK4 step);
- ``RecursiveSystem`` (planar) + ``recursive-rk4`` (3-vectors, the compiled RK4 step);
- ``AbsoluteSystem`` + ``rk4`` (coordinate partitioning, one KKT factorisation per stage).

Each formulation is warmed up (compilation) with 50 steps, then timed over ``--steps`` steps (wall and process
CPU time). The load average before and after is printed: the machine has two cores shared with other work. The
last link's centre of each run is compared with the spatial run's, to show the three step the same motion.

    python bench/recursive_spatial.py [--steps 2000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np

from trackdyn.formulations.absolute import AbsoluteSystem, RedundantConstraintWarning
from trackdyn.formulations.recursive import RecursiveSystem
from trackdyn.formulations.recursive_spatial import RecursiveSpatialSystem
from trackdyn.integrators import make_integrator
from trackdyn.integrators.recursive import RecursiveRK4
from trackdyn.testing.problems import chain

H = 1e-4


def _run(name, make, steps):
    model = chain(64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RedundantConstraintWarning)
        system, stepper = make(model)
    st = system.initial_state()
    for _ in range(50):
        st = stepper.step(st)
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        st = stepper.step(st)
    w1, c1 = time.perf_counter(), time.process_time()
    return {"run": name, "wall_us_per_step": 1e6 * (w1 - w0) / steps, "cpu_us_per_step": 1e6 * (c1 - c0) / steps,
            "steps": steps, "t_end": st.t, "tip": st.q[-1, :3].tolist()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    load0 = os.getloadavg()
    runs = [
        _run("spatial recursive-rk4", lambda m: (lambda s: (s, RecursiveRK4(s, H)))(RecursiveSpatialSystem(m)),
             args.steps),
        _run("planar recursive-rk4", lambda m: (lambda s: (s, RecursiveRK4(s, H)))(RecursiveSystem(m)), args.steps),
        _run("absolute rk4", lambda m: (lambda s: (s, make_integrator("rk4", s, H)))(AbsoluteSystem(m)), args.steps),
    ]
    load1 = os.getloadavg()
    ref = np.array(runs[0]["tip"])
    for r in runs:
        r["tip_vs_spatial_m"] = float(np.linalg.norm(np.array(r["tip"]) - ref))
    out = {"h": H, "load_before": load0, "load_after": load1, "cpus": os.cpu_count(), "runs": runs}
    if args.json:
        print(json.dumps(out))
        return
    print(f"chain64, h = {H:g} s, {args.steps} timed steps each; load {load0[0]:.2f} before, {load1[0]:.2f} after "
          f"({os.cpu_count()} cores)")
    print("| run | wall µs per step | CPU µs per step | last link vs spatial (m) |")
    print("|---|---|---|---|")
    for r in runs:
        print(f"| {r['run']} | {r['wall_us_per_step']:.1f} | {r['cpu_us_per_step']:.1f} "
              f"| {r['tip_vs_spatial_m']:.1e} |")


if __name__ == "__main__":
    main()
