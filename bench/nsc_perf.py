"""Where the NSC M113's step goes, and what each contact-solve variant costs on the same state (issue #29).

The M113 of ``trackdyn bench m113-flat-nsc`` (cruise at 4.2 m/s, PID, flat ground, ``nsc-euler`` at
h = 1e-3, contact tolerance 1e-5 m/s) is settled for ``--settle`` s; then every variant steps ``--steps``
steps from that same state (``integrator.step``, no recording), one after the other in this one process, so
that they see the same machine load. Per variant: CPU ms per step (``time.process_time``: the machine is
shared), the stepper's per-stage split (wall ms per step: detection, assembly = forces + constraints + matrix
and right-hand side, factorisation, the step's solve, the contact solve, update), contact iterations and
products with N per step, Coulomb rounds per step, the steps whose contact solve stopped above the
tolerance, the largest residual, the load (1-min average) before and after.

Variants (``--variants``, comma-separated, default all but the dense ones):

- ``apgd``, ``bb``: the solver on the factorised operator (each product one sparse solve; the joints exact);
- ``apgd-cold``, ``bb-cold``: the same without warm start;
- ``apgd-dense``, ``psor-dense``: N formed once per step (3m sparse solves in one compiled loop), then the
  iterations on the dense matrix (PSOR needs it);
- ``newton``: the primal Newton solver (``contact_solver="newton"``: Newton's method on the velocities with
  the contacts' Hessian in the step's factorisation, proximal rounds to the exact CCP, de Saxcé's bias inside
  the first round's iterations; docs/contact-nsc.md);
- ``*-f0`` (Coulomb only): every fixed-point round solved to the tolerance (``friction_forcing = 0``);
- ``*-noslip`` (Coulomb only): the fixed point's first slip estimate from the warm-started impulses, not
  from the contacts' last slip speeds (``warm_slip = False``); ``apgd-f0-noslip`` is the stepper before
  both.

Usage: python bench/nsc_perf.py [--friction anitescu|coulomb] [--settle 0.1] [--settle-solver apgd] [--steps 20]
[--variants apgd,bb,...] [--max-iterations 1000]; prints one JSON object per variant and a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from trackdyn.testing import benchmarks_vehicle as BV
from trackdyn.testing.benchmarks import machine_info

VARIANTS = {  # name: (contact_solver, warm_start, delassus, friction_forcing, warm_slip)
    "apgd": ("apgd", True, "operator", 0.1, True),
    "apgd-cold": ("apgd", False, "operator", 0.1, True),
    "bb": ("bb", True, "operator", 0.1, True),
    "bb-cold": ("bb", False, "operator", 0.1, True),
    "apgd-f0": ("apgd", True, "operator", 0.0, True),
    "apgd-noslip": ("apgd", True, "operator", 0.1, False),
    "apgd-f0-noslip": ("apgd", True, "operator", 0.0, False),
    "apgd-dense": ("apgd", True, "dense", 0.1, True),
    "newton": ("newton", True, "operator", 0.1, True),
    "psor-dense": ("psor", True, "dense", 0.1, True),
    "psor-dense-cold": ("psor", False, "dense", 0.1, True),
}


def _load():
    return round(os.getloadavg()[0], 2)


def run_variant(it, state0, name, steps):
    method, warm, delassus, forcing, warm_slip = VARIANTS[name]
    it.method, it.warm, it.delassus, it.forcing, it.warm_slip = method, warm, delassus, forcing, warm_slip
    c0, tm0 = dict(it.counters), dict(it.timing)
    load0 = _load()
    st = state0
    cpu, res_max = [], 0.0
    for _ in range(steps):
        t = time.process_time()
        st = it.step(st)
        cpu.append(time.process_time() - t)
        res_max = max(res_max, it.last["contact_residual"])
    sp = {k: 1e3 * (it.timing[k] - tm0.get(k, 0.0)) / steps for k in it.timing}
    split = {"contact_detection": sp.get("contact_detection", 0.0),
             "assembly": sp.get("forces", 0.0) + sp.get("contact", 0.0) + sp.get("constraints", 0.0)
             + sp.get("assembly", 0.0),
             "factorization": sp.get("factorization", 0.0), "solve": sp.get("solve", 0.0),
             "contact_solve": sp.get("contact_solve", 0.0), "update": sp.get("update", 0.0)}
    cnt = {k: it.counters[k] - c0.get(k, 0) for k in ("contact_iterations", "contact_products",
                                                      "friction_iterations", "contact_unconverged")}
    return {"variant": name, "contact_solver": method, "warm_start": warm, "delassus": delassus,
            "friction_forcing": forcing, "warm_slip": warm_slip, "steps": steps, "load_before": load0, "load_after": _load(),
            "cpu_ms_per_step": 1e3 * float(np.mean(cpu)), "cpu_ms_median": 1e3 * float(np.median(cpu)),
            "split_wall_ms": {k: round(v, 3) for k, v in split.items()},
            "contact_iterations_per_step": cnt["contact_iterations"] / steps,
            "contact_products_per_step": cnt["contact_products"] / steps,
            "friction_rounds_per_step": cnt["friction_iterations"] / steps,
            "steps_above_tolerance": cnt["contact_unconverged"], "residual_max_mps": res_max,
            "contacts_at_end": int(it.last["contacts"]), "chassis_vx_end": float(st.v[0, 0]),
            **{f"{k}_per_step": (it.counters[k] - c0.get(k, 0)) / steps
               for k in ("proximal_rounds", "factorizations") if k in it.counters}}


def _relative(args):
    """The command's arguments with paths inside the repository relative to it (no machine's path is recorded)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [os.path.relpath(a, root) if os.path.isabs(a) and a.startswith(root) else a for a in args]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--friction", default="anitescu", choices=("anitescu", "coulomb"))
    ap.add_argument("--settle", type=float, default=0.1)
    ap.add_argument("--settle-solver", default="apgd", help="contact solver of the settle (apgd, newton, ...)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--variants", default="apgd,apgd-cold,bb,bb-cold")
    ap.add_argument("--max-iterations", type=int, default=1000)
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--json", type=str, default=None, help="also write the record (head and variants) here")
    a = ap.parse_args(argv)
    names = a.variants.split(",")
    for n in names:
        if n not in VARIANTS:
            ap.error(f"unknown variant {n!r}; choices: {', '.join(VARIANTS)}")
    opts = {"contact.method": "nsc", "contact_solver": a.settle_solver, "contact_tolerance": a.tolerance,
            "friction": a.friction, "contact_max_iterations": a.max_iterations}
    t0 = time.perf_counter()
    prep = BV.settled_cruise(a.settle, 1e-3, output_step=0.01, options=opts)
    it = prep.sim.integrator
    s = prep.sim.system
    head = {"friction": a.friction, "settle_solver": a.settle_solver, "tolerance_mps": a.tolerance, "max_iterations": a.max_iterations,
            "settle_s": a.settle, "settle_wall_s": round(time.perf_counter() - t0, 1), "bodies": s.nb,
            "constraint_rows": s.nc, "unknowns": 6 * s.nb + s.nc, "factor_nnz": getattr(it.solver, "nnz_L", None)}
    print(json.dumps(head), flush=True)
    state0 = prep.sim.state
    out = []
    for n in names:
        r = run_variant(it, state0, n, a.steps)
        out.append(r)
        print(json.dumps(r), flush=True)
    if a.json:
        head["machine"] = machine_info()
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"command": "python bench/nsc_perf.py " + " ".join(_relative(argv if argv is not None else sys.argv[1:])),
                       "head": head, "variants": out}, f, indent=1)
            f.write("\n")
    return out


if __name__ == "__main__":
    main()
