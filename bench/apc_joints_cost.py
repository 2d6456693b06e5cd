"""The track-joint fidelities' cost against ``links`` at one common step, side by side in one run (issue #30).

``trackdyn bench apc-joints`` (``trackdyn.testing.benchmarks_joints.apc_joints``) at ``--step``: every fidelity
is built, dropped and ramped to 25 rad/s (not measured), then the measured segments alternate between the
fidelities (links, ancf, links, ancf, ...), so that the load of the machine falls on both alike. Each fidelity
runs on its own integrator. The issue's goal compares the fidelities at their largest steps within 1 mm of their
own 1e-5 s runs (``bench/apc_joints_stepsize_integrator.py``): 1e-4 s for both links and ancf.

    python bench/apc_joints_cost.py --fidelities ancf --step 1e-4 --segments 4 --t-end 0.5 \\
        --json docs/joints/cost_ancf_1e-4.json
"""

from __future__ import annotations

import argparse
import statistics
import sys

from trackdyn.io.results import write_json_atomic
from trackdyn.testing import benchmarks  # noqa: F401  (imports the benchmark modules in their order)
from trackdyn.testing.benchmarks_joints import apc_joints


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fidelities", default="ancf", help="comma-separated; links is always run first")
    ap.add_argument("--step", type=float, default=1e-4)
    ap.add_argument("--segments", type=int, default=4)
    ap.add_argument("--t-end", type=float, default=0.5, help="simulated seconds of one segment")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    out = apc_joints(t_end=a.t_end, segments=a.segments, step=a.step, fidelities=a.fidelities.split(","))
    args = argv if argv is not None else sys.argv[1:]
    out = {"command": "python bench/apc_joints_cost.py " + " ".join(args), **out}
    cpu = {r["fidelity"]: r["cpu_per_sim_segments"] for r in out["runs"]}
    # segment k of a fidelity against links' segment k, which ran just before it
    out["cpu_ratio_per_segment"] = {f: [x / y for x, y in zip(v, cpu["links"])] for f, v in cpu.items()}
    out["cpu_ratio_median"] = {f: statistics.median(v) for f, v in out["cpu_ratio_per_segment"].items()}
    for r in out["runs"]:
        print(r["fidelity"], "wall/sim", round(r["wall_per_sim"], 3), "cpu/sim", round(r["cpu_per_sim"], 3),
              "cpu ratio", round(r["cpu_ratio_to_links"], 3), flush=True)
    print("segments' cpu ratio (median):", out.get("cpu_ratio_median"), flush=True)
    if a.json:
        write_json_atomic(a.json, out)  # never half-written
    return out


if __name__ == "__main__":
    main()
