"""The NSC M113's cruise with and without contact compliance: iterations, cost and speed (issue #29).

Usage: python bench/nsc_compliance.py [--t-end 0.2] [--settle 0.5] [--compliance 1e-7 0] [--json OUT]

``m113_flat_nsc`` (4.2 m/s, h = 1e-3, APGD to 1e-5 m/s, Coulomb friction) once per compliance, each from
its own settle: contact iterations, products and Coulomb rounds per step (deterministic), steps above the
tolerance, wall ms per step with the split, the machine's load, the chassis speed against 4.2 m/s.
"""

from __future__ import annotations

import argparse
import json

from trackdyn.testing.benchmarks_nsc import m113_flat_nsc

KEYS = ("contact_compliance_m_per_N", "contact_iterations_per_step", "contact_products_per_step",
        "friction_iterations_per_step", "contact_unconverged", "contacts_at_end", "mean_speed_mps",
        "max_speed_error_mps", "ms_per_step", "wall_per_sim", "split_named_ms", "load_before", "load_after", "machine")

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-end", type=float, default=0.2)
    ap.add_argument("--settle", type=float, default=0.5)
    ap.add_argument("--compliance", type=float, nargs="+", default=[1e-7, 0.0])
    ap.add_argument("--json", default=None, help="also write the result to this file")
    a = ap.parse_args()
    out = {"benchmark": "nsc-compliance", "t_end_s": a.t_end, "settle_s": a.settle, "runs": []}
    for c in a.compliance:
        r = m113_flat_nsc(t_end=a.t_end, settle=a.settle, contact_compliance=c)
        out["runs"].append({k: r[k] for k in KEYS if k in r})
        print(json.dumps(out["runs"][-1]), flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            fh.write(json.dumps(out, indent=1) + "\n")
