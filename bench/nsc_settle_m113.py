"""The NSC M113 settled at rest on flat ground: the ground's force on the shoes against the weight (issue #29).

Usage: python bench/nsc_settle_m113.py [--t-end 6] [--step 2e-3] [--friction anitescu|coulomb]
[--contact-solver apgd|newton] [--json OUT]

The M113 dropped from its build height (5 mm over the ground) with no throttle and no brake, under
``contact.method = "nsc"`` (``--contact-solver``, default APGD, to 1e-5 m/s), for ``t-end`` s. Every step records the vertical contact
force of the ground on the vehicle (the shoes' impulses over h) and the vertical momentum of all bodies.
Reported per window of the last seconds: the mean force against the weight (``force_over_weight - 1``:
at rest the force is the weight), the same with the momentum's rate taken out (``balance``: the vertical
momentum balance, which holds at any time), the chassis's vertical speed (how far from rest), and the
wall time. tests/integration/test_nsc_vehicle.py asserts the balance over 0.5 s; being at rest within
0.1 % needs seconds of the suspension's bounce to decay, longer than a test.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

import trackdyn as td
from trackdyn.driver import Idle
from trackdyn.sim.run import prepare
from trackdyn.testing.benchmarks import machine_info


def settle(t_end: float = 6.0, step: float = 2e-3, friction: str = "anitescu", windows=(0.5, 1.0),
           contact_solver: str = "apgd") -> dict:
    opts = {"contact.method": "nsc", "contact_solver": contact_solver, "contact_tolerance": 1e-5, "friction": friction}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the redundant pin rows closing each track loop (expected)
        p = prepare(td.Scenario(vehicle="m113", driver=Idle(), t_end=t_end, step=step, output_step=1e-2,
                                options=opts))
    mass = np.asarray(p.sim.system.mass, float)
    W = float(mass.sum()) * 9.81
    c = list(p.sim.system.body_names).index(p.vehicle.chassis)
    rows = []

    def cb(sim):
        # per-body contact totals of the step: contacts between two vehicle bodies cancel in the sum
        rows.append((sim.state.t, p.contact.body_out[:-1, 2].sum(), float(mass @ sim.state.v[:, 2]),
                     float(sim.state.v[c, 2])))
        return False

    t0 = time.perf_counter()
    res = p.sim.run(t_end, callback=cb)
    wall = time.perf_counter() - t0
    t, F, P, vz = np.array(rows).T
    out = {"benchmark": "nsc-settle-m113", "status": res.status, "t_end_s": t_end, "step_s": step,
           "friction": friction, "contact_solver": contact_solver, "weight_N": W, "wall_time_s": wall, "wall_per_sim": wall / t_end,
           "contact_unconverged": int(p.sim.integrator.counters["contact_unconverged"]),
           "machine": machine_info(), "windows": []}
    for w in windows:
        if w >= t_end:
            continue
        sel = t > t_end - w + 1e-9
        i0, i1 = np.nonzero(sel)[0][0] - 1, np.nonzero(sel)[0][-1]
        T = t[i1] - t[i0]
        out["windows"].append({
            "last_s": w, "force_over_weight_minus_1": float(F[sel].mean() / W - 1.0),
            "balance": float((F[sel].sum() * step - W * T - (P[i1] - P[i0])) / (W * T)),
            "chassis_vz_max_mps": float(np.abs(vz[sel]).max())})
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-end", type=float, default=6.0)
    ap.add_argument("--step", type=float, default=2e-3)
    ap.add_argument("--friction", choices=["anitescu", "coulomb"], default="anitescu")
    ap.add_argument("--contact-solver", choices=["apgd", "bb", "newton"], default="apgd")
    ap.add_argument("--json", default=None, help="also write the result to this file")
    a = ap.parse_args()
    r = settle(a.t_end, a.step, a.friction, contact_solver=a.contact_solver)
    text = json.dumps(r, indent=2)
    if a.json:
        with open(a.json, "w") as fh:
            fh.write(text + "\n")
    print(text)
