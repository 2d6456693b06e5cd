"""``trackdyn bench apc-joints-stepsize`` with one fidelity on another integrator than its own (issue #30).

The benchmark's measure (the largest step within 1 mm of the fidelity's own 1e-5 s run over 2 s at 25 rad/s,
and the CPU time per simulated second there against ``links`` at its own largest step), with ``--fidelity``'s
reference and steps on ``--integrator`` (the ramp stays on the fidelity's own):

    python bench/apc_joints_stepsize_integrator.py --fidelity ancf --integrator theta-linearized --theta 0.5 \\
        --steps 1e-4,2e-4 --json docs/joints/stepsize_ancf_theta0.5.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from trackdyn.testing import benchmarks  # noqa: F401  (imports the benchmark modules in their order)
from trackdyn.testing.benchmarks_joints import apc_joints_stepsize


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fidelity", required=True)
    ap.add_argument("--integrator", required=True)
    ap.add_argument("--theta", type=float, default=None, help="the θ of theta-linearized")
    ap.add_argument("--steps", default="1e-4,2e-4")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    opts = {} if a.theta is None else {"theta": a.theta}
    out = apc_joints_stepsize(steps=tuple(float(h) for h in a.steps.split(",")), fidelities=[a.fidelity],
                              integrators={a.fidelity: (a.integrator, opts)})
    args = argv if argv is not None else sys.argv[1:]
    out = {"command": "python bench/apc_joints_stepsize_integrator.py " + " ".join(args), **out}
    for r in out["fidelities"]:
        for run in r["runs"]:
            print(r["fidelity"], run["step_size_s"], run["status"], run.get("max_error_m"), round(run["cpu_per_sim"], 2),
                  run["load_before"], run["load_after"], flush=True)
        print(r["fidelity"], "largest step", r["largest_step_s"], "cpu ratio", r["cpu_ratio_to_links"], flush=True)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
