"""The NSC M113 under full throttle from rest on flat ground: does the sprocket drive the track? (issue #29)

Usage: python bench/nsc_throttle_m113.py [--cases 1e-7:all 1e-7:terrain 0:all] [--json OUT]

For each case ``COMPLIANCE:ON`` (``contact_compliance`` m/N, ``compliance_on``): the M113 under NSC (Coulomb
friction), brakes for 0.3 s then full throttle, to 0.6 s; every 0.05 s the chassis's forward speed and
the left sprocket's spin relative to the hull. With the compliance on every contact the sprocket's teeth
skip the pins (the sprocket runs away while the vehicle barely moves); on the terrain's contacts only, or
rigid, the sprocket drives the track.
"""

from __future__ import annotations

import argparse
import json
import warnings

import trackdyn as td
from trackdyn.driver import FullThrottle
from trackdyn.sim.run import prepare


def throttle(compliance: float, on: str, t_end: float = 0.6) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the redundant pin rows closing each track loop (expected)
        p = prepare(td.Scenario(vehicle="m113", driver=FullThrottle(delay=0.3), t_end=t_end, output_step=0.05,
                                options={"contact.method": "nsc", "contact_compliance": compliance,
                                         "compliance_on": on}))
    names = list(p.sim.system.body_names)
    sp, c = names.index("left.sprocket"), names.index("chassis")
    rows = []
    for k in range(int(round(t_end / 0.05))):
        p.sim.run(0.05 * (k + 1))
        st = p.sim.state
        rows.append({"t_s": round(float(st.t), 4), "chassis_vx_mps": float(st.v[c, 0]),
                     "sprocket_spin_radps": float(st.v[sp, 4] - st.v[c, 4])})
    return {"contact_compliance_m_per_N": compliance, "compliance_on": on, "rows": rows,
            "contact_unconverged": int(p.sim.integrator.counters["contact_unconverged"])}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", nargs="+", default=["1e-7:all", "1e-7:terrain", "0:all"])
    ap.add_argument("--json", default=None, help="also write the result to this file")
    a = ap.parse_args()
    out = {"benchmark": "nsc-throttle-m113", "runs": []}
    for case in a.cases:
        c, on = case.split(":")
        out["runs"].append(throttle(float(c), on))
        print(json.dumps(out["runs"][-1]), flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            fh.write(json.dumps(out, indent=1) + "\n")
