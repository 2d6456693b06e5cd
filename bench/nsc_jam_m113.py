"""The rigid NSC M113 jams on a step's edge; a contact compliance lets it step on (issue #29, docs/contact-nsc.md).

Usage: python bench/nsc_jam_m113.py [--t-jam 2.681] [--steps 10] [--cases 1e-7:terrain 1e-7:all 1e-8:all 0:all]
                                   [--json OUT]

The 0.852 m step-climb trial of ``python bench/events_m113.py --nsc step-climb-nsc`` (timber step at x = 0,
brakes for 2 s, then full throttle; h = 1e-3 s), run with rigid contact (``contact_compliance = 0``) to
``t-jam`` s, where the left track is wedged between its sprocket and the step's edge. From that state, for
each case ``COMPLIANCE:ON`` (``contact_compliance`` m/N, ``compliance_on`` all or terrain), ``steps`` steps:
contact iterations and Coulomb rounds per step, the residual, the fastest body's speed and the largest
contact force (docs/contact-nsc.md, "Contact compliance").
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from trackdyn import terrain as T
from trackdyn.driver import FullThrottle
from trackdyn.experiments.events import TIMBER, _Context, _edge_start
from trackdyn.sim.run import prepare
from trackdyn.testing.benchmarks import machine_info

HEIGHT = 0.852


def _prepared(compliance: float, on: str = "all"):
    ctx = _Context("step-climb", "m113", "links", None, 0.01, False, None, None,
                   {"options": {"contact.method": "nsc", "contact_compliance": compliance, "compliance_on": on}})
    terrain = T.Flat() + T.Step(HEIGHT, x=0.0, material=TIMBER)
    sc = ctx.scenario("jam", terrain, FullThrottle(delay=2.0), 22.0,
                      start_x=_edge_start(ctx.extent, HEIGHT, 0.05))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the redundant pin rows closing each track loop (expected)
        return prepare(sc)


def jam(t_jam: float = 2.681, steps: int = 10, cases=((1e-7, "terrain"), (1e-7, "all"), (1e-8, "all"), (0.0, "all"))
        ) -> dict:
    t0 = time.perf_counter()
    base = _prepared(0.0)
    base.sim.run(t_jam)
    state = base.sim.state.copy()
    out = {"benchmark": "nsc-jam-m113", "height_m": HEIGHT, "t_jam_s": float(state.t), "step_s": base.sim.h,
           "reach_wall_s": time.perf_counter() - t0, "machine": machine_info(), "runs": []}
    for c, on in cases:
        p = _prepared(c, on)
        sim, it, cs = p.sim, p.sim.integrator, p.contact
        sim.state = state.copy()
        rows = []
        for _ in range(steps):
            c0 = dict(it.counters)
            try:
                sim.step()
            except Exception as err:  # noqa: BLE001 - a diverged step ends this compliance's rows
                rows.append({"error": str(err)[:200]})
                break
            speed = np.linalg.norm(sim.state.v[:, :3], axis=1)
            fn = cs._forces[0] if getattr(cs, "_forces", None) is not None else np.zeros(1)
            rows.append({"t_s": float(sim.state.t),
                         "iterations": it.counters["contact_iterations"] - c0["contact_iterations"],
                         "rounds": it.counters["friction_iterations"] - c0["friction_iterations"],
                         "residual_mps": float(it.last["contact_residual"]),
                         "max_body_speed_mps": float(speed.max()), "max_contact_force_N": float(np.abs(fn).max())})
        out["runs"].append({"contact_compliance_m_per_N": c, "compliance_on": on, "steps": rows})
        print(json.dumps(out["runs"][-1]), flush=True)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-jam", type=float, default=2.681)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--cases", nargs="+", default=["1e-7:terrain", "1e-7:all", "1e-8:all", "0:all"])
    ap.add_argument("--json", default=None, help="also write the result to this file")
    a = ap.parse_args()
    r = jam(a.t_jam, a.steps, tuple((float(c.split(":")[0]), c.split(":")[1]) for c in a.cases))
    if a.json:
        with open(a.json, "w") as fh:
            fh.write(json.dumps(r, indent=1) + "\n")
