"""m113-stepsize: largest step within 1 mm of the h = 1e-4 road-wheel heights over 2 s (issue #6).

Usage: python bench/m113_stepsize.py [--t-end 2.0] [--settle 0.5] [--steps 2e-4 5e-4 1/1100 1e-3] [--tol 1e-3]
                                    [--integrator theta-linearized] [--theta 0.5] [--record all|wheels]
                                    [--repeats 3] [--explicit-contact] [--perturb 1e-5] [--fidelity synthesis]
       python bench/m113_stepsize.py --nsc [--h-ref 5e-4] [--friction coulomb|anitescu] [--compliance C] [--steps ...]

A step is a number or a fraction (``1/1100``): the output step, 10 ms, must be a multiple of it.
"""

import argparse
import json

from trackdyn.io.results import write_json_atomic
from trackdyn.testing.benchmarks_vehicle import m113_stepsize, step_size_arg


def step_size(text: str) -> float:
    """argparse type of --steps (trackdyn.testing.benchmarks_vehicle.step_size_arg)."""
    try:
        return step_size_arg(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--settle", type=float, default=0.5)
    ap.add_argument("--steps", type=step_size, nargs="+", default=[2e-4, 5e-4, 1e-3, 2e-3])
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--integrator", default="euler-implicit-linearized")
    ap.add_argument("--theta", type=float, default=None, help="θ of theta-linearized")
    ap.add_argument("--record", choices=["all", "wheels"], default="all",
                    help="every series every 10 ms, or only the compared road-wheel heights")
    ap.add_argument("--repeats", type=int, default=1,
                    help="fresh runs of each larger step: wall_per_sim is their mean (the headline), "
                         "wall_per_sim_median their median, wall_per_sim_best their minimum")
    ap.add_argument("--explicit-contact", action="store_true",
                    help="the larger steps' contact forces explicit (scenario option contact.implicit = false)")
    ap.add_argument("--perturb", type=float, default=0.0,
                    help="scale the settled velocities by 1 ± PERTURB (fixed signs) before every run")
    ap.add_argument("--nsc", action="store_true",
                    help="every run (the reference too) the NSC M113 stepped by nsc-euler (issue #29)")
    ap.add_argument("--h-ref", type=step_size, default=None,
                    help="the reference step (default 1e-4 s; 5e-4 s with --nsc, as issue #29 asks)")
    ap.add_argument("--friction", choices=["coulomb", "anitescu"], default=None, help="NSC friction (with --nsc)")
    ap.add_argument("--compliance", type=float, default=None,
                    help="NSC contact compliance, m/N (with --nsc; default the links fidelity's 1e-7, 0: rigid)")
    ap.add_argument("--fidelity", default="links",
                    help="the fidelity of the larger steps (its own integrator unless --integrator is given); the "
                         "reference stays links at 1e-4 s")
    ap.add_argument("--json", default=None, help="also write the result to this file")
    a = ap.parse_args()
    opts = {} if a.theta is None else {"theta": a.theta}
    h_ref = a.h_ref if a.h_ref is not None else (5e-4 if a.nsc else 1e-4)
    kw = {}
    if a.nsc:
        nsc_opts = {} if a.friction is None else {"friction": a.friction}
        if a.compliance is not None:
            nsc_opts["contact_compliance"] = a.compliance
        kw = {"contact_method": "nsc", "integrator": "nsc-euler", "nsc_options": nsc_opts}
    else:
        kw = {"integrator": a.integrator, "options": opts, "explicit_contact": a.explicit_contact}
    out = m113_stepsize(t_end=a.t_end, settle=a.settle, steps=tuple(a.steps), tol=a.tol, h_ref=h_ref,
                        record=a.record, repeats=a.repeats, perturb=a.perturb, fidelity=a.fidelity, **kw)
    if a.json:
        write_json_atomic(a.json, out)
    print(json.dumps(out, indent=2, default=str))
