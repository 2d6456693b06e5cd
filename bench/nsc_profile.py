"""Where the NSC M113's Newton contact solve spends its time (issue #29; a tool, not a benchmark): cProfile of
``--steps`` steps of the cruise of ``trackdyn bench m113-flat-nsc`` (4.2 m/s, PID, flat ground, ``nsc-euler`` at
h = 1e-3, Coulomb friction, the Newton solver at ``--tolerance``) from one state settled ``--settle`` s, after
20 unprofiled steps; prints the stepper's counters per step and the functions with the most own time.

    python bench/nsc_profile.py [--settle 0.3] [--steps 50] [--tolerance 1e-5] [--top 20]

Shares of the total are the figures to read: absolute times carry the profiler's overhead and the machine's
load (printed).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from nsc_perf import run_variant  # noqa: E402

from trackdyn.testing import benchmarks_vehicle as BV  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settle", type=float, default=0.3)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args(argv)
    opts = {"contact.method": "nsc", "contact_solver": "newton", "contact_tolerance": a.tolerance,
            "friction": "coulomb", "contact_max_iterations": 5000}
    prep = BV.settled_cruise(a.settle, 1e-3, output_step=0.01, options=opts)
    it, st = prep.sim.integrator, prep.sim.state
    run_variant(it, st, "newton", 20)  # warm: the first steps after the settle
    pr = cProfile.Profile()
    pr.enable()
    r = run_variant(it, st, "newton", a.steps)
    pr.disable()
    keys = ("contact_iterations_per_step", "factorizations_per_step", "proximal_rounds_per_step",
            "friction_rounds_per_step", "contacts_at_end", "load_before", "load_after")
    print({k: r[k] for k in keys if k in r})
    stats = pstats.Stats(pr)
    total = stats.total_tt
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:a.top]
    print(f"{'own time share':>14} | {'calls per step':>14} | function")
    for (fname, line, func), (cc, nc, tt, ct, _) in rows:
        print(f"{100 * tt / total:13.1f}% | {nc / a.steps:14.1f} | {os.path.basename(fname)}:{line}({func})")


if __name__ == "__main__":
    main()
