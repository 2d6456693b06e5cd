"""m113-flat: the M113 cruising at 4.2 m/s on flat rigid ground, h = 1e-4, split per stage (issue #6).

Usage: python bench/m113_flat.py [--t-end 2.0] [--settle 0.5] [--segments 3] [--step 1e-4] [--explicit-contact]
(same as `trackdyn bench m113-flat --json` with the defaults; `--explicit-contact`: contact forces explicit,
as in Chrono's SMC systems without stiff contact).

The segments are consecutive parts of one run after one settling, not fresh runs: the headline
(`ms_per_step`, `wall_per_sim`) is the mean over all of them, recording included; each segment's figures are
in `segments`. `--repeats N` is the old name of `--segments N` (deprecated; it warns).
"""

import argparse
import json
import warnings

from trackdyn.testing.benchmarks_vehicle import m113_flat


def options(argv=None) -> dict:
    """The keyword arguments of :func:`m113_flat` from a command line (``--repeats`` warns and means ``--segments``)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--settle", type=float, default=0.5)
    ap.add_argument("--segments", type=int, default=None,
                    help="consecutive segments of --t-end s, one run (default 3)")
    ap.add_argument("--repeats", type=int, default=None, help="deprecated: the old name of --segments")
    ap.add_argument("--step", type=float, default=1e-4)
    ap.add_argument("--solver", default="direct")
    ap.add_argument("--explicit-contact", action="store_true",
                    help="contact forces explicit (scenario option contact.implicit = false)")
    a = ap.parse_args(argv)
    segments = a.segments
    if a.repeats is not None:
        if segments is not None:
            ap.error("--repeats is the old name of --segments: give one of them")
        warnings.warn("--repeats is deprecated: the m113-flat figures come from consecutive segments of one run, "
                      "use --segments", FutureWarning, stacklevel=2)
        segments = a.repeats
    return {"t_end": a.t_end, "settle": a.settle, "segments": 3 if segments is None else segments,
            "step": a.step, "solver": a.solver, "explicit_contact": a.explicit_contact}


if __name__ == "__main__":
    print(json.dumps(m113_flat(**options()), indent=2, default=str))
