"""The NSC M113's contact solve by Newton against APGD, and Newton's regularisation (issue #29).

The M113 of ``trackdyn bench m113-flat-nsc`` (cruise at 4.2 m/s, PID, flat ground, ``nsc-euler`` at
h = 1e-3, Coulomb friction, contact tolerance 1e-5 m/s, the links fidelity's NSC settings) is settled for
``--settle`` s with the Newton solver; then, from that one state and one after the other in this process:

1. the variants ``newton`` and ``apgd`` of ``bench/nsc_perf.py`` for ``--steps`` steps each (CPU ms per step,
   the stepper's split, iterations, rounds, steps above the tolerance, largest residual);
2. ``newton`` at each ``--regularization`` (``newton_regularization``, ρ_i = value · η_i) for ``--steps``
   steps: Newton iterations, proximal rounds, Coulomb rounds and factorisations per step, or the time at
   which the state diverged.

Usage: python bench/nsc_newton.py [--settle 0.5] [--steps 100] [--regularization 1e-2,3e-3,1e-3,3e-4,1e-4,1e-5]
[--json PATH]; prints one JSON object per row.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from nsc_perf import _load, run_variant  # noqa: E402

from trackdyn.integrators.base import StepFailed  # noqa: E402
from trackdyn.testing import benchmarks_vehicle as BV  # noqa: E402
from trackdyn.testing.benchmarks import machine_info  # noqa: E402


def factor_and_solve_ms(it, reps=50):
    """Median ms of one factorisation and one solve of the step's matrix, without and with the coupling blocks
    of every touching body pair (the Newton solver's pattern), on the last step's values."""
    out = {}
    nw = it._newton
    nw.data[:] = 0.0
    nw.data[nw.to_w] = it.system.data
    for name, sv, data in (("step", it.solver, it.system.data), ("newton", nw.solver, nw.data)):
        rhs = np.ones(sv.n)
        x = np.zeros(sv.n)
        tf, ts = [], []
        for _ in range(reps):
            t = time.perf_counter()
            sv.factor(data)
            tf.append(time.perf_counter() - t)
            t = time.perf_counter()
            sv.solve(rhs, x)
            ts.append(time.perf_counter() - t)
        out[f"{name}_factor_ms"] = 1e3 * float(np.median(tf))
        out[f"{name}_solve_ms"] = 1e3 * float(np.median(ts))
    it.solver.factor(it.system.data)  # leave the step's own factorisation as it was
    return out


def regularization_row(it, state0, eps, steps):
    """``newton`` at ``newton_regularization`` = eps for ``steps`` steps from state0 (a copy)."""
    it.method, it.warm, it.delassus, it.forcing, it.warm_slip = "newton", True, "operator", 0.1, True
    it._newton.eps = eps
    keys = ("contact_iterations", "proximal_rounds", "friction_iterations", "factorizations", "contact_unconverged")
    c0 = {k: it.counters.get(k, 0) for k in keys}
    st = copy.deepcopy(state0)
    row = {"newton_regularization": eps, "steps": steps, "load_before": _load()}
    t0 = time.process_time()
    done, res_max = 0, 0.0
    try:
        for _ in range(steps):
            st = it.step(st)
            done += 1
            res_max = max(res_max, it.last["contact_residual"])
    except (StepFailed, FloatingPointError, ValueError, ArithmeticError) as err:  # the state diverged
        row["diverged_after_steps"] = done
        row["error"] = str(err)[:200]
    n = max(done, 1)
    row.update({f"{k}_per_step": (it.counters.get(k, 0) - c0[k]) / n for k in keys})
    row.update(cpu_ms_per_step=1e3 * (time.process_time() - t0) / n, residual_max_mps=res_max, load_after=_load())
    return row


def _relative(args):
    """The command's arguments with paths inside the repository relative to it (no machine's path is recorded)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [os.path.relpath(a, root) if os.path.isabs(a) and a.startswith(root) else a for a in args]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settle", type=float, default=0.5)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--regularization", default="1e-2,3e-3,1e-3,3e-4,1e-4,1e-5")
    ap.add_argument("--json", type=str, default=None)
    a = ap.parse_args(argv)
    opts = {"contact.method": "nsc", "contact_solver": "newton"}
    t0 = time.perf_counter()
    prep = BV.settled_cruise(a.settle, 1e-3, output_step=0.01, options=opts)
    it = prep.sim.integrator
    s = prep.sim.system
    head = {"settle_s": a.settle, "settle_solver": "newton", "settle_wall_s": round(time.perf_counter() - t0, 1),
            "bodies": s.nb, "constraint_rows": s.nc, "contact_tolerance_mps": it.tol,
            "contact_compliance_m_per_N": it.compliance, "touch_pairs": len(it._newton.pairs),
            "factor_nnz": it.solver.nnz_L, "newton_factor_nnz": it._newton.solver.nnz_L, "machine": machine_info()}
    head.update(factor_and_solve_ms(it))
    print(json.dumps(head), flush=True)
    state0 = prep.sim.state
    side = []
    for name in ("newton", "apgd"):
        r = run_variant(it, state0, name, a.steps)
        side.append(r)
        print(json.dumps(r), flush=True)
    it.method = "newton"
    eps0 = it._newton.eps
    reg = []
    for eps in (float(x) for x in a.regularization.split(",")):
        r = regularization_row(it, state0, eps, a.steps)
        reg.append(r)
        print(json.dumps(r), flush=True)
    it._newton.eps = eps0
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"command": "python bench/nsc_newton.py " + " ".join(_relative(argv if argv is not None else sys.argv[1:])),
                       "head": head, "side_by_side": side, "regularization": reg}, f, indent=1)
            f.write("\n")
    return head, side, reg


if __name__ == "__main__":
    main()
