"""m113-flat: the M113 cruising at 4.2 m/s on flat rigid ground, h = 1e-4, split per stage (issue #6).

Usage: python bench/m113_flat.py [--t-end 2.0] [--settle 0.5] [--repeats 3] [--step 1e-4] [--explicit-contact]
(same as `trackdyn bench m113-flat --json` with the defaults; `--explicit-contact`: contact forces explicit,
as in Chrono's SMC systems without stiff contact).
"""

import argparse
import json

from trackdyn.testing.benchmarks_vehicle import m113_flat

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--settle", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--step", type=float, default=1e-4)
    ap.add_argument("--solver", default="direct")
    ap.add_argument("--explicit-contact", action="store_true",
                    help="contact forces explicit (scenario option contact.implicit = false)")
    a = ap.parse_args()
    print(json.dumps(m113_flat(t_end=a.t_end, settle=a.settle, repeats=a.repeats, step=a.step, solver=a.solver,
                               explicit_contact=a.explicit_contact), indent=2, default=str))
