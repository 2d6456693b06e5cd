"""The M113 on ``synthesis`` against ``links``, each at its largest step within 1 mm, side by side (issue #32).

Both cruise at 4.2 m/s on flat ground under the PID driver (``trackdyn bench m113-flat``'s scenario); each is
settled for 0.5 s (not measured), then the measured segments alternate between them (links, synthesis, links,
...) so that the machine's load falls on both alike. The steps are each fidelity's largest within 1 mm of the
road-wheel heights of links at 1e-4 s over 2 s (``python bench/m113_stepsize.py [--fidelity synthesis]``):
links' ``euler-implicit-linearized`` 5e-4 s (0.82 mm), ``synthesis-ab3-hht`` 2.5e-4 s (0.79 mm).

    python bench/synthesis_m113_cost.py --segments 4 --t-end 0.5 --json docs/synthesis/m113_cost.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from trackdyn.io.results import write_json_atomic
from trackdyn.testing.benchmarks import machine_info, timed_run
from trackdyn.testing.benchmarks_vehicle import settled_cruise


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links-step", type=float, default=5e-4)
    ap.add_argument("--synthesis-step", type=float, default=2.5e-4)
    ap.add_argument("--segments", type=int, default=4)
    ap.add_argument("--t-end", type=float, default=0.5, help="simulated seconds of one segment")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    preps = {"links": settled_cruise(0.5, a.links_step, record=("chassis.*",)),
             "synthesis": settled_cruise(0.5, a.synthesis_step, record=("chassis.*",), fidelity="synthesis")}
    segs = {k: [] for k in preps}
    for _ in range(a.segments):
        for name, prep in preps.items():
            load = os.getloadavg()[0]
            r, _ = timed_run(prep.sim, a.t_end)
            r["load_before"] = round(load, 2)
            segs[name].append(r)
    runs = []
    for name, parts in segs.items():
        steps = sum(r["steps"] for r in parts)
        sim_t = sum(r["sim_time_s"] for r in parts)
        wall = sum(r["wall_time_s"] for r in parts)
        cpu = sum(r["cpu_ms_per_step"] * r["steps"] for r in parts) / 1e3
        split = {k: sum(r["split_ms"][k] * r["steps"] for r in parts) / steps for k in parts[0]["split_ms"]}
        it = preps[name].sim.integrator
        runs.append({"fidelity": name, "integrator": it.name, "step_size_s": parts[0]["step_size_s"],
                     "steps": steps, "wall_per_sim": wall / sim_t, "cpu_per_sim": cpu / sim_t,
                     "ms_per_step": 1e3 * wall / steps, "split_ms": split,
                     "cpu_per_sim_segments": [r["cpu_ms_per_step"] * r["steps"] / 1e3 / r["sim_time_s"]
                                              for r in parts],
                     "status": [r["status"] for r in parts], "load_before": [r["load_before"] for r in parts],
                     "counters_per_step": {k: v / max(it.counters["steps"], 1) for k, v in it.counters.items()}})
    args = argv if argv is not None else sys.argv[1:]
    out = {"command": "python bench/synthesis_m113_cost.py " + " ".join(args), "t_end_segment_s": a.t_end,
           "segments": a.segments, "runs": runs, "machine": machine_info()}
    links = next(r for r in runs if r["fidelity"] == "links")
    for r in runs:
        r["cpu_ratio_to_links"] = r["cpu_per_sim"] / links["cpu_per_sim"]
        r["wall_ratio_to_links"] = r["wall_per_sim"] / links["wall_per_sim"]
        r["cpu_ratio_segments_median"] = statistics.median(
            x / y for x, y in zip(r["cpu_per_sim_segments"], links["cpu_per_sim_segments"]))
        print(r["fidelity"], f"h={r['step_size_s']:g}", "wall/sim", round(r["wall_per_sim"], 3), "cpu/sim",
              round(r["cpu_per_sim"], 3), "cpu ratio", round(r["cpu_ratio_to_links"], 3),
              "split", {k: round(v, 3) for k, v in r["split_ms"].items()}, flush=True)
    if a.json:
        write_json_atomic(a.json, out)
    return out


if __name__ == "__main__":
    main()
