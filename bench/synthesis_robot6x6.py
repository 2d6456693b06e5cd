"""robot-6x6 on the ``synthesis`` fidelity against ``links``: wall time per simulated second at the largest
stable step of each synthesis model (issue #32).

    python bench/synthesis_robot6x6.py [--t-end 2] [--json]

Scenario: robot-6x6 on an ISO 8608 class C road (seed 0) at 3 m/s held by the PID driver, started at
3 m/s; ``--t-end`` s measured after 0.05 s (build and JIT excluded). References: ``synthesis-ab3`` at
5e-5 s (its converged run). A step is *stable* when its run completes and its chassis height stays within
1 mm and its forward speed within 0.01 m/s of the reference at every output sample (10 ms); for each of
``synthesis-ab3`` (explicit) and ``synthesis-ab3-hht`` (explicit-implicit) the largest stable step of the
list is timed (the steps divide 10 ms, the recording interval); ``links`` is timed at its default step (5e-4 s) and held to the same criterion. Wall time
is ``time.perf_counter`` around ``Simulation.run`` (recording every series every 10 ms included), the best
of ``--repeats`` fresh runs. The machine is shared (2 cores): the load average before and after is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings

import numpy as np

import trackdyn as td
from trackdyn.sim.run import prepare

STEPS = {"synthesis-ab3": (2.5e-4, 5e-4, 1e-3, 2e-3),
         "synthesis-ab3-hht": (1e-3, 2e-3, 2.5e-3, 5e-3, 1e-2)}
TOL_Z, TOL_V = 1e-3, 0.01


def scenario(fidelity, integrator, step, t_end):
    terrain = td.terrain.Flat() + td.terrain.RandomRoad(road_class="C", length=60.0, seed=0, x=2.0)
    return td.Scenario(vehicle="robot-6x6", fidelity=fidelity, integrator=integrator, step=step, speed=3.0,
                       driver=td.drivers.PID(speed=3.0, y=0.0), terrain=terrain, t_end=t_end + 0.05,
                       output_step=0.01)


def run(fidelity, integrator, step, t_end):
    sc = scenario(fidelity, integrator, step, t_end)
    prep = prepare(sc)
    sim = prep.sim
    sim.run(0.05)
    t0 = time.perf_counter()
    res = sim.run(sc.t_end)
    wall = time.perf_counter() - t0
    return res, wall / t_end


def series(res):
    return np.asarray(res.t), np.asarray(res["chassis.pos.z"]), np.asarray(res["chassis.vel.x"])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    load0 = os.getloadavg()
    ref, _ = run("synthesis", "synthesis-ab3", 5e-5, a.t_end)
    tr, zr, vr = series(ref)
    out = {"scenario": "robot-6x6, ISO 8608 class C road, PID 3 m/s from 3 m/s", "t_end_s": a.t_end,
           "criterion": f"completes; chassis z within {TOL_Z} m and speed within {TOL_V} m/s of synthesis-ab3 "
                        "at 5e-5 s at every sample (10 ms, or the step where longer)", "runs": []}

    def measure(fidelity, integrator, h):
        best, res = None, None
        for _ in range(a.repeats):
            res, w = run(fidelity, integrator, h, a.t_end)
            best = w if best is None else min(best, w)
        ok = res.status == "complete"
        dz = dv = float("nan")
        if ok:
            t, z, v = series(res)
            dz = float(np.abs(z - np.interp(t, tr, zr)).max())
            dv = float(np.abs(v - np.interp(t, tr, vr)).max())
            ok = dz < TOL_Z and dv < TOL_V
        row = {"fidelity": fidelity, "integrator": integrator or "euler-implicit-linearized", "step_s": h,
               "status": res.status, "stable": bool(ok), "max_dz_m": dz, "max_dvx_mps": dv, "wall_per_sim": best}
        out["runs"].append(row)
        if not a.json:
            print(json.dumps(row), flush=True)
        return row

    largest = {}
    for integ, steps in STEPS.items():
        for h in steps:
            row = measure("synthesis", integ, h)
            if row["stable"]:
                largest[integ] = row
            else:
                break
    links = measure("links", None, 5e-4)
    out["largest_stable"] = {k: {"step_s": r["step_s"], "wall_per_sim": r["wall_per_sim"]} for k, r in largest.items()}
    out["links"] = {"step_s": 5e-4, "wall_per_sim": links["wall_per_sim"], "stable": links["stable"]}
    out["ratio_to_links"] = {k: r["wall_per_sim"] / links["wall_per_sim"] for k, r in largest.items()}
    out["load_before_after"] = [load0, os.getloadavg()]
    out["machine"] = {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                      "cpus": os.cpu_count()}
    out["date_utc"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    print(json.dumps(out, indent=None if a.json else 2))


if __name__ == "__main__":
    main()
