"""m113-step: full-throttle climb attempt at a 0.6 m rigid step, h = 1e-4 (issue #6).

Usage: python bench/m113_step.py [--t-end 20] [--step 1e-4] [--explicit-contact]
"""

import argparse
import json

from trackdyn.testing.benchmarks_vehicle import m113_step

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-end", type=float, default=20.0)
    ap.add_argument("--step", type=float, default=1e-4)
    ap.add_argument("--explicit-contact", action="store_true",
                    help="contact forces explicit (scenario option contact.implicit = false)")
    a = ap.parse_args()
    print(json.dumps(m113_step(t_end=a.t_end, step=a.step, explicit_contact=a.explicit_contact), indent=2,
                     default=str))
