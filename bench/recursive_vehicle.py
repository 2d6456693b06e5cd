"""The crawler and the M113 on the ``recursive`` fidelity against ``links``: cost per simulated second, largest step.

For each vehicle and fidelity, a rolling start at 4.2 m/s under the PID driver on flat ground (the ``cruise``
scenario's driver, no settling phase) is run for ``--t-end`` s (default 0.5) at a small reference step
(``--h-ref``, default 1e-4 s) and at each of ``--steps`` (default 1e-3, 5e-4, 2.5e-4 s), one run after the other in
this process. Reported per run:

- wall and process CPU time of the stepping (``Simulation.run``; the build and the first, compiling, run of each
  fidelity excluded), per simulated second;
- the largest difference of any road wheel's height (``*.roadwheel[*].pos.z``, sampled every 0.01 s) from the
  fidelity's own reference run, m; the **largest step within 1 mm** is the largest step whose difference is at
  most 1 mm (each fidelity against its own small-step run, as ``apc-joints-stepsize`` does);
- and, for recursive at each step, the largest difference from links at the same step (the two formulations of
  one vehicle).

The machine has two cores shared with other work: the load average is printed before and after.

    python bench/recursive_vehicle.py [--t-end 0.5] [--h-ref 1e-4] [--steps 1e-3,5e-4,2.5e-4] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np

import trackdyn as td
from trackdyn.driver import PID
from trackdyn.sim.run import prepare

VEHICLES = ("crawler", "m113")
FIDELITIES = ("recursive", "links")
SPEED = 4.2


def _run(vehicle, fidelity, h, t_end):
    sc = td.Scenario(vehicle=vehicle, fidelity=fidelity, terrain=td.terrain.Flat(), driver=PID(speed=SPEED, y=0.0),
                     speed=SPEED, t_end=t_end, step=h, output_step=0.01, record=("*.roadwheel[*].pos.z",))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep = prepare(sc)
    w0, c0 = time.perf_counter(), time.process_time()
    res = prep.sim.run(t_end)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    cols = sorted(c for c in res.columns if ".roadwheel[" in c and c.endswith(".pos.z"))
    z = np.stack([res[c] for c in cols], axis=1)
    t_sim = float(prep.sim.state.t)
    return {"vehicle": vehicle, "fidelity": fidelity, "step_s": h, "status": res.status,
            "wall_s_per_sim_s": wall / max(t_sim, 1e-12), "cpu_s_per_sim_s": cpu / max(t_sim, 1e-12),
            "sim_s": t_sim, "error": res.metadata.get("error")}, z


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-end", type=float, default=0.5)
    ap.add_argument("--h-ref", type=float, default=1e-4)
    ap.add_argument("--steps", default="1e-3,5e-4,2.5e-4")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    steps = [float(x) for x in args.steps.split(",")]
    load0 = os.getloadavg()
    rows, summary = [], {}
    for vehicle in VEHICLES:
        zs = {}
        for fidelity in FIDELITIES:
            _run(vehicle, fidelity, steps[-1], 0.02)  # compile and warm up
            ref, z_ref = _run(vehicle, fidelity, args.h_ref, args.t_end)
            ref["difference_m"] = 0.0
            rows.append(ref)
            best = None
            for h in steps:
                row, z = _run(vehicle, fidelity, h, args.t_end)
                n = min(len(z), len(z_ref))
                row["difference_m"] = (float(np.max(np.abs(z[:n] - z_ref[:n]))) if row["status"] == "complete"
                                       else float("inf"))
                zs[(fidelity, h)] = z if row["status"] == "complete" else None
                if row["difference_m"] <= 1e-3:
                    best = h if best is None else max(best, h)
                rows.append(row)
            summary[f"{vehicle}/{fidelity}"] = {"largest_step_within_1mm_s": best}
        for h in steps:
            a, b = zs.get(("recursive", h)), zs.get(("links", h))
            if a is not None and b is not None:
                n = min(len(a), len(b))
                summary[f"{vehicle}/recursive-vs-links@{h:g}"] = float(np.max(np.abs(a[:n] - b[:n])))
    load1 = os.getloadavg()
    out = {"load_before": load0, "load_after": load1, "t_end_s": args.t_end, "h_ref_s": args.h_ref, "runs": rows,
           "summary": summary}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, after {load1[0]:.2f} {load1[1]:.2f} "
          f"{load1[2]:.2f}; rolling start at {SPEED} m/s, {args.t_end} s, reference h = {args.h_ref:g} s")
    print(f"{'vehicle':8} {'fidelity':10} {'h (s)':>8} {'status':>9} {'wall/sim':>9} {'CPU/sim':>8} {'wheel z diff (m)':>17}")
    for r in rows:
        print(f"{r['vehicle']:8} {r['fidelity']:10} {r['step_s']:8.2g} {r['status']:>9} {r['wall_s_per_sim_s']:9.2f} "
              f"{r['cpu_s_per_sim_s']:8.2f} {r['difference_m']:17.3e}")
    for k, v in summary.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
