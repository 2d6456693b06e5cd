"""The conformance bump on the M113 at several steps, per fidelity: how far the synthesis's rise, pitch and
speed stand from links' and how the difference shrinks with the step (issue #32, docs/synthesis.md).

    python bench/synthesis_m113_bump.py --runs links:5e-4 links:1e-4 synthesis:2.5e-4 synthesis:1.25e-4 \\
        --json docs/synthesis/m113_bump.json
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

from trackdyn.io.results import write_json_atomic
from trackdyn.sim.run import prepare
from trackdyn.testing.benchmarks import machine_info
from trackdyn.testing.conformance import chassis_metrics, conformance_scenario


def run(fidelity: str, step: float) -> dict:
    sc = conformance_scenario("bump", fidelity, "m113", step=step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the closed loops' redundant pin rows
        prep = prepare(sc)
    t0 = time.perf_counter()
    res = prep.sim.run(sc.t_end)
    out = {"fidelity": fidelity, "step_s": step, "status": res.status, "wall_s": time.perf_counter() - t0,
           "load": os.getloadavg()[0]}
    if res.status == "complete":
        out.update(chassis_metrics("bump", res, getattr(prep.vehicle, "com", prep.spec.chassis.com)))
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="+", default=["links:5e-4", "links:1e-4", "synthesis:2.5e-4",
                                                  "synthesis:1.25e-4"], help="FIDELITY:STEP ...")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    rows = []
    for item in a.runs:
        fid, _, h = item.partition(":")
        try:
            step = float(h)
        except ValueError:
            raise SystemExit(f"--runs {item!r}: expected FIDELITY:STEP, e.g. synthesis:2.5e-4") from None
        rows.append(run(fid, step))
        print(rows[-1], flush=True)
    out = {"command": "python bench/synthesis_m113_bump.py --runs " + " ".join(a.runs), "runs": rows,
           "machine": machine_info()}
    if a.json:
        write_json_atomic(a.json, out)
    return out


if __name__ == "__main__":
    main()
