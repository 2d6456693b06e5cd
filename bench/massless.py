"""Massless-track benchmarks (issue #8): M113 at 4 m/s on flat ground and over a 10 in half-round.

Target: wall time / simulated time <= 0.01 (100 x faster than real time). Prints the mean of 3 fresh runs per
case, with the per-stage split (ms per step), for the default step (1e-2 s) and the variants given.

Usage: python bench/massless.py [--step H ...] [--planes N ...] [--output-step S] [--t-end T] [--repeats N]
(the defaults are what `trackdyn bench m113-massless-flat --json` / `m113-massless-halfround` run).
"""

import argparse
import json

from trackdyn.testing.benchmarks_massless import m113_massless_flat, m113_massless_halfround

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--step", type=float, nargs="*", default=[1e-2])
    ap.add_argument("--planes", type=int, nargs="*", default=[2])
    ap.add_argument("--output-step", type=float, default=None)
    ap.add_argument("--t-end", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    for fn in (m113_massless_flat, m113_massless_halfround):
        for h in a.step:
            for planes in a.planes:
                ostep = a.output_step if a.output_step is not None else max(h, round(0.05 / h) * h)
                r = fn(step=h, output_step=ostep, t_end=a.t_end, repeats=a.repeats,
                       options={"massless.planes": planes})
                r.pop("runs")
                r["planes"] = planes
                print(json.dumps(r, default=float))
